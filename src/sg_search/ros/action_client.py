"""rclpy's ActionClient, safe to create while another thread spins its node.

rclpy 9 (the PyPI build pinned here) registers a new ActionClient with its node before it
creates the lock that the executor's wait-set calls take (ros2/rclpy#1589). An executor
spinning the node in another thread can call ``get_num_entities`` in that gap; the
AttributeError ends its spin thread, and every future of the node (a goal's response, a
result) then never completes. Every action client of this package is made here.

A goal's response can also be lost: the server may take the request before its response
writer has matched this client's response reader (Fast DDS waits 100 ms for that match, then
drops the response: ros2/rmw_fastrtps#842). rclpy's server then logs "Failed to send goal
response" and never executes the goal. :meth:`ActionClient.send_goal_with_resend` sends it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future

RESEND_S = 2.0
"""Seconds without a goal response before the goal is sent again (20 times the 100 ms a Fast
DDS server waits for the client's response reader, well above a loaded machine's discovery)."""


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

    def send_goal_with_resend(
        self,
        goal: Any,
        feedback_callback: Callable[[Any], None] | None = None,
        *,
        timeout_s: float,
        resend_s: float = RESEND_S,
    ) -> ClientGoalHandle | None:  # type: ignore[type-arg]
        """Send ``goal``, again (under a new goal id) each ``resend_s`` seconds without a
        response, until ``timeout_s`` seconds have passed; the handle of the first answer
        (accepted or not), or None if none came. An attempt answered later than the first is
        cancelled if it was accepted, so the goal runs once."""
        answered = threading.Event()
        attempts: list[Future] = []  # type: ignore[type-arg]
        deadline = time.monotonic() + timeout_s
        while not answered.is_set() and (left := deadline - time.monotonic()) > 0:
            attempt = self.send_goal_async(goal, feedback_callback)
            attempt.add_done_callback(lambda _: answered.set())
            attempts.append(attempt)
            answered.wait(min(resend_s, left))
        first = next((attempt for attempt in attempts if attempt.done()), None)
        for attempt in attempts:
            if attempt is not first:
                attempt.add_done_callback(_cancel_if_accepted)
        return first.result() if first is not None else None


def _cancel_if_accepted(attempt: Future) -> None:  # type: ignore[type-arg]
    handle = attempt.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
