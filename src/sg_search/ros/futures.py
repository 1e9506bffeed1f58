"""Wait for an rclpy future from a thread other than the executor's (never from a callback
of a single-threaded executor: it would deadlock), or for a publisher's subscribers."""

from __future__ import annotations

import threading
import time
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.client import Client
from rclpy.publisher import Publisher
from rclpy.task import Future

RESEND_S = 2.0
"""Seconds without a response before a request is sent again (20 times the 100 ms a Fast DDS
server waits for the client's response reader, well above a loaded machine's discovery)."""


def wait_future(future: Future, timeout_s: float) -> Any | None:
    """The future's result, or None if it did not complete within ``timeout_s`` seconds."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if not done.wait(timeout_s):
        return None
    return future.result()


def wait_for_subscription(publisher: Publisher, timeout_s: float, period_s: float = 0.01) -> bool:
    """Whether DDS has matched a subscription to ``publisher`` within ``timeout_s`` seconds (wall
    clock; no spinning needed): a message on a volatile topic published before that is lost."""
    deadline = time.monotonic() + timeout_s
    while publisher.get_subscription_count() == 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(period_s)
    return True


def call_with_resend(
    client: Client, request: Any, timeout_s: float, resend_s: float = RESEND_S
) -> Any | None:
    """The response to a service ``request`` that may be repeated without harm (open what is
    open, set a state, read), sent again every ``resend_s`` seconds until one answer comes; None
    after ``timeout_s`` seconds. Fast DDS drops a response when the client's response reader has
    not matched yet (ros2/rmw_fastrtps#842): waited for once, that lost answer cost the whole
    timeout and left the caller not knowing whether the request was carried out."""
    deadline = time.monotonic() + timeout_s
    answered = threading.Event()
    sent: list[Future] = []  # type: ignore[type-arg]
    try:
        while True:
            future = client.call_async(request)
            future.add_done_callback(lambda _: answered.set())
            sent.append(future)
            if answered.wait(min(resend_s, max(0.0, deadline - time.monotonic()))):
                return next(f for f in sent if f.done()).result()
            if time.monotonic() >= deadline:
                return None
    finally:
        for future in sent:
            if not future.done():
                client.remove_pending_request(future)


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
