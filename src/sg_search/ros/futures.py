"""Wait for an rclpy future from a thread other than the executor's (never from a callback
of a single-threaded executor: it would deadlock)."""

from __future__ import annotations

import threading
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.task import Future


def wait_future(future: Future, timeout_s: float) -> Any | None:
    """The future's result, or None if it did not complete within ``timeout_s`` seconds."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()


def goal_failure(response: Any, what: str) -> str:
    """Why an action goal's wrapped result (``GetResult`` response) is not a success, naming
    ``what``; '' when it succeeded. A server whose execute callback raises aborts the goal
    with an empty result, whose ``error_code`` is 0 ("no error"): the goal's status tells that
    crash from a success, so it is read first."""
    status = int(response.status)
    if status == GoalStatus.STATUS_SUCCEEDED:
        return ""
    name = _STATUS_NAMES.get(status, f"status {status}")
    error_code = getattr(response.result, "error_code", 0)
    error_msg = getattr(response.result, "error_msg", "")
    if error_code == 0 and not error_msg:
        return f"the {what} ended the goal {name} without a result (its server failed)"
    return f"the {what} ended the goal {name}: {error_msg or f'error {error_code}'}"


_STATUS_NAMES = {
    GoalStatus.STATUS_UNKNOWN: "UNKNOWN",
    GoalStatus.STATUS_ACCEPTED: "ACCEPTED",
    GoalStatus.STATUS_EXECUTING: "EXECUTING",
    GoalStatus.STATUS_CANCELING: "CANCELING",
    GoalStatus.STATUS_SUCCEEDED: "SUCCEEDED",
    GoalStatus.STATUS_CANCELED: "CANCELED",
    GoalStatus.STATUS_ABORTED: "ABORTED",
}
