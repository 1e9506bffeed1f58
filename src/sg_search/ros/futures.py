"""Wait for an rclpy future from a thread other than the executor's (never from a callback
of a single-threaded executor: it would deadlock)."""

from __future__ import annotations

import threading
from typing import Any

from rclpy.task import Future


def wait_future(future: Future, timeout_s: float) -> Any | None:
    """The future's result, or None if it did not complete within ``timeout_s`` seconds."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()
