"""A small Python client for the ``search`` action, in the manner of nav2_simple_commander.

client = SearchClient(node)
client.wait_until_ready()
client.start("find the passport")
while not client.is_done(): ...
result = client.result()
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum

from rclpy.action.client import ClientGoalHandle
from rclpy.node import Node
from sg_search_interfaces.action import SearchObject

from sg_search.ros.action_client import ActionClient
from sg_search.ros.liveliness import AliveWatch


class TaskResult(Enum):
    """How a search ended, as seen by the client."""

    UNKNOWN = 0
    SUCCEEDED = 1
    CANCELED = 2
    FAILED = 3


class SearchClient:
    """Wraps the SearchObject action; the node must be spun by an executor elsewhere."""

    def __init__(self, node: Node, action_name: str = "search", server_node: str = "reasoner") -> None:
        self._context = node.context
        self._client = ActionClient(node, SearchObject, action_name)
        self._server = AliveWatch(node, server_node)
        self._handle: ClientGoalHandle | None = None
        self._result: SearchObject.Result | None = None
        self._status = TaskResult.UNKNOWN
        self._done = threading.Event()
        self.feedback: list[SearchObject.Feedback] = []

    @property
    def server_lost(self) -> bool:
        """The node serving the action (``server_node``) died: no result will come."""
        return self._server.lost

    @property
    def shut_down(self) -> bool:
        """ROS was shut down in this process: no result will come. rclpy's handler of SIGINT and
        SIGTERM does that and leaves the process running (SIGTERM raises nothing)."""
        return not self._context.ok()

    def wait_until_ready(self, timeout_s: float = 10.0) -> bool:
        """True once the action server is discovered."""
        return bool(self._client.wait_for_server(timeout_sec=timeout_s))

    def start(
        self,
        query: str,
        max_steps: int = 0,
        reasoner: str = "",
        timeout_s: float = 0.0,
        on_feedback: Callable[[SearchObject.Feedback], None] | None = None,
    ) -> bool:
        """Send a goal; False if the server rejected it (e.g. another search runs) or ROS was
        shut down before it answered (:attr:`shut_down`)."""
        self._done.clear()
        self._result, self._status = None, TaskResult.UNKNOWN

        def feedback(msg: SearchObject.Impl.FeedbackMessage) -> None:
            self.feedback.append(msg.feedback)
            if on_feedback is not None:
                on_feedback(msg.feedback)

        goal = SearchObject.Goal(query=query, max_steps=max_steps, reasoner=reasoner, timeout_s=timeout_s)
        self._handle = self._client.send_goal_with_resend(goal, feedback, timeout_s=30.0)
        if self._handle is None and self.shut_down:
            return False
        if self._handle is None:
            raise TimeoutError("search action server did not answer the goal within 30 s")
        if not self._handle.accepted:
            self._status = TaskResult.FAILED
            self._done.set()
            return False
        self._handle.get_result_async().add_done_callback(self._on_result)
        return True

    def _on_result(self, future) -> None:  # type: ignore[no-untyped-def]
        from action_msgs.msg import GoalStatus

        wrapped = future.result()
        self._result = wrapped.result
        self._status = {
            GoalStatus.STATUS_SUCCEEDED: TaskResult.SUCCEEDED,
            GoalStatus.STATUS_CANCELED: TaskResult.CANCELED,
            GoalStatus.STATUS_ABORTED: TaskResult.FAILED,
        }.get(wrapped.status, TaskResult.UNKNOWN)
        self._done.set()

    def cancel(self) -> None:
        """Ask the server to cancel the running search."""
        if self._handle is not None:
            self._handle.cancel_goal_async()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the search ends; False on timeout."""
        return self._done.wait(timeout_s)

    def is_done(self) -> bool:
        """True once a result (or a rejection) arrived."""
        return self._done.is_set()

    def status(self) -> TaskResult:
        """How the last search ended (UNKNOWN while it runs)."""
        return self._status

    def result(self) -> SearchObject.Result | None:
        """The last search's result message."""
        return self._result
