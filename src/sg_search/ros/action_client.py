"""rclpy's ActionClient, safe to create while another thread spins its node.

rclpy 9 (the PyPI build pinned here) registers a new ActionClient with its node before it
creates the lock that the executor's wait-set calls take (ros2/rclpy#1589). An executor
spinning the node in another thread can call ``get_num_entities`` in that gap; the
AttributeError ends its spin thread, and every future of the node (a goal's response, a
result) then never completes. Every action client of this package is made here.
"""

from __future__ import annotations

import threading
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient


class ActionClient(_RclpyActionClient):  # type: ignore[type-arg]
    """An rclpy ActionClient whose lock exists before the node can see it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._early_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    @property
    def _lock(self) -> threading.Lock:
        return self._early_lock

    @_lock.setter
    def _lock(self, _: threading.Lock) -> None:
        """rclpy assigns its own lock at the end of its __init__, when an executor may already
        hold this one: the one lock stays."""
