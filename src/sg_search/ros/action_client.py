"""rclpy's ActionClient, safe to create while another thread spins its node.

rclpy 9 (the PyPI build pinned here) registers a new ActionClient with its node before it
creates the lock that the executor's wait-set calls take (ros2/rclpy#1589). An executor
spinning the node in another thread can call ``get_num_entities`` in that gap; the
AttributeError ends its spin thread, and every future of the node (a goal's response, a
result) then never completes. Every action client of this package is made here.

rclpy 9.1.2's ``send_goal_async`` registers each goal twice: once under that lock, then again
outside it with a second future that replaces the first. The first future never completes and
stays among the client's futures; and where the executor takes the goal's response between the
two, it completes a future that rclpy has not listed yet, and ``send_goal_async`` raises
``ValueError: list.remove(x): x not in list`` (a search goal failed so in a full test run).
Ours registers one future, under the lock.

A goal's response can also be lost: the server may take the request before its response
writer has matched this client's response reader (Fast DDS waits 100 ms for that match, then
drops the response: ros2/rmw_fastrtps#842). Depending on where the send fails, rclpy's server
then either never executes the goal ("Failed to send goal response") or executes it while the
client waits. :meth:`ActionClient.send_goal_with_resend` sends the goal again, and every goal
request of this client that the server runs unanswered is answered from its goal status topic.

A result's response is lost the same way (the server logs "failed to send response (timeout)"
from ``send_result_response``, and the client waits for a result that never comes: a test goal
of the affordance executor waited out its 60 s so in a full test run). Once a goal's status says
it has ended and its result has not come within ``RESEND_S``, the result is asked for again,
every ``RESEND_S`` until it comes (the server keeps an ended goal's result for 15 minutes).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

from action_msgs.msg import GoalStatus
from rclpy.action import ActionClient as _RclpyActionClient
from rclpy.action.client import ClientGoalHandle
from rclpy.task import Future

from sg_search.ros.futures import RESEND_S

_RUN_OR_RAN = frozenset(
    {
        GoalStatus.STATUS_EXECUTING,
        GoalStatus.STATUS_CANCELING,
        GoalStatus.STATUS_SUCCEEDED,
        GoalStatus.STATUS_CANCELED,
        GoalStatus.STATUS_ABORTED,
    }
)
"""Goal states that prove a goal was accepted and executed (ACCEPTED alone does not: a goal
whose response could not be sent stays ACCEPTED and never runs)."""
_ENDED = frozenset({GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED})


class ActionClient(_RclpyActionClient):  # type: ignore[type-arg]
    """An rclpy ActionClient whose lock exists before the node can see it, and which lists one
    future per goal (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._early_lock = threading.Lock()
        self._ended_unanswered: dict[bytes, float] = {}  # goal id -> when its result was last asked for
        super().__init__(*args, **kwargs)
        self._result_timer = self._node.create_timer(
            RESEND_S / 2, self._ask_again_for_lost_results, callback_group=self.callback_group
        )

    def destroy(self) -> None:
        self._node.destroy_timer(self._result_timer)
        super().destroy()

    @property
    def _lock(self) -> threading.Lock:
        return self._early_lock

    @_lock.setter
    def _lock(self, _: threading.Lock) -> None:
        """rclpy assigns its own lock at the end of its __init__, when an executor may already
        hold this one: the one lock stays."""

    def send_goal_async(
        self, goal: Any, feedback_callback: Callable[[Any], None] | None = None, goal_uuid: Any = None
    ) -> Future:  # type: ignore[type-arg]
        """Send ``goal``; the future completes with its ClientGoalHandle once the server answers.
        One future per goal, listed with the client before the request can be answered (module
        docstring)."""
        if not isinstance(goal, self._action_type.Goal):
            raise TypeError(f"expected a {self._action_type.__name__} goal, got {type(goal).__name__}")
        request = self._action_type.Impl.SendGoalService.Request()
        request.goal_id = self._generate_random_uuid() if goal_uuid is None else goal_uuid
        request.goal = goal
        future: Future = Future()  # type: ignore[type-arg]
        with self._lock:
            if feedback_callback is not None:
                self._feedback_callbacks[bytes(request.goal_id.uuid)] = feedback_callback
            sequence = self._client_handle.send_goal_request(request)
            if sequence in self._pending_goal_requests:
                raise RuntimeError(f"goal request sequence {sequence} is already pending")
            self._pending_goal_requests[sequence] = future
            self._goal_sequence_number_to_goal_id[sequence] = request.goal_id
            future.add_done_callback(self._remove_pending_goal_request)
            self.add_future(future)
        return future

    async def execute(self, taken_data: Any) -> None:
        await super().execute(taken_data)
        if "status" in taken_data and self._pending_result_requests:
            self._note_ended_goals_awaiting_results(taken_data["status"].status_list)
        if "status" in taken_data and self._pending_goal_requests:
            with self._lock:
                unanswered = {
                    bytes(goal_id.uuid): self._pending_goal_requests.get(seq)
                    for seq, goal_id in self._goal_sequence_number_to_goal_id.items()
                }
            for status in taken_data["status"].status_list:
                request = unanswered.get(bytes(status.goal_info.goal_id.uuid))
                if request is not None and not request.done() and status.status in _RUN_OR_RAN:
                    self._adopt(status, request)

    def _get_result_async(self, goal_handle: ClientGoalHandle) -> Future:  # type: ignore[type-arg]
        """rclpy's result request; for a goal that has already ended, the clock starts now."""
        future: Future = super()._get_result_async(goal_handle)  # type: ignore[type-arg]
        if goal_handle.status in _ENDED:
            with self._lock:
                self._ended_unanswered.setdefault(bytes(goal_handle.goal_id.uuid), time.monotonic())
        return future

    def _note_ended_goals_awaiting_results(self, status_list: Any) -> None:
        """Start the clock for each goal that has ended while its result is still asked for."""
        now = time.monotonic()
        with self._lock:
            awaited = self._awaited_goals()
            for status in status_list:
                goal = bytes(status.goal_info.goal_id.uuid)
                if goal in awaited and status.status in _ENDED:
                    self._ended_unanswered.setdefault(goal, now)

    def _ask_again_for_lost_results(self) -> None:
        """Send the result request again for each ended goal whose result has not come within
        ``RESEND_S`` of its end (or of the last request); its waiters' future is kept."""
        now = time.monotonic()
        with self._lock:
            if not self._ended_unanswered:
                return
            awaited = self._awaited_goals()
            for goal in self._ended_unanswered.keys() - awaited:  # answered, or given up by its waiter
                del self._ended_unanswered[goal]
            due = {goal: since for goal, since in self._ended_unanswered.items() if now - since >= RESEND_S}
            for sequence, goal_id in list(self._result_sequence_number_to_goal_id.items()):
                goal = bytes(goal_id.uuid)
                if goal not in due:
                    continue
                future = self._pending_result_requests.pop(sequence)
                del self._result_sequence_number_to_goal_id[sequence]
                request = self._action_type.Impl.GetResultService.Request(goal_id=goal_id)
                again = self._client_handle.send_result_request(request)
                self._pending_result_requests[again] = future
                self._result_sequence_number_to_goal_id[again] = goal_id
                self._ended_unanswered[goal] = now
                self._node.get_logger().warning(
                    f"{self._action_name}: no result {now - due[goal]:.1f} s after goal {goal.hex()[:8]} "
                    "ended or its result was last asked for (a lost response); asking for it again"
                )

    def _awaited_goals(self) -> set[bytes]:
        """Ids of the goals whose result is asked for and has not come (call under the lock)."""
        return {bytes(goal_id.uuid) for goal_id in self._result_sequence_number_to_goal_id.values()}

    def _adopt(self, status: GoalStatus, request: Future) -> None:  # type: ignore[type-arg]
        """Answer the goal ``request`` from the server's ``status`` of its goal, which runs or
        ran: its response was lost, and the goal is accepted. The future is rclpy's own, so
        completing it forgets the request, and a response arriving after all is ignored."""
        response = self._action_type.Impl.SendGoalService.Response(
            accepted=True, stamp=status.goal_info.stamp
        )
        handle = ClientGoalHandle(self, status.goal_info.goal_id, response)
        handle._status = status.status
        if status.status not in _ENDED:
            self._goal_handles[bytes(status.goal_info.goal_id.uuid)] = weakref.ref(handle)
        request.set_result(handle)

    def send_goal_with_resend(
        self,
        goal: Any,
        feedback_callback: Callable[[Any], None] | None = None,
        *,
        timeout_s: float,
        resend_s: float = RESEND_S,
    ) -> ClientGoalHandle | None:  # type: ignore[type-arg]
        """Send ``goal``, again (under a new goal id) each ``resend_s`` seconds without an
        answer, until ``timeout_s`` seconds have passed or ROS is shut down in this process (a
        SIGTERM: no answer can come then); the handle of the first accepted
        attempt, else of the first rejected one, or None if none was answered. An attempt is
        answered by its response or by the server's status of its goal (running or ended).

        A rejection while an earlier attempt is unanswered is held until ``timeout_s``, and
        nothing more is sent: a server that runs one goal at a time rejects the resent goal
        because it is running the first, whose response was lost, and that goal's status can
        come seconds later on a loaded machine. An attempt answered after the chosen one is
        cancelled if it was accepted, so the goal runs once."""
        changed = threading.Event()
        attempts: list[Future] = []  # type: ignore[type-arg]
        deadline, held = time.monotonic() + timeout_s, False
        while (left := deadline - time.monotonic()) > 0 and self._node.context.ok():
            changed.clear()
            answers = [attempt for attempt in attempts if attempt.done()]
            if any(_accepted(attempt) for attempt in answers) or (answers and answers == attempts):
                break
            if answers:  # rejected while an earlier attempt is unanswered: wait for that one
                if not held:
                    held = True
                    self._node.get_logger().warning(
                        f"{self._action_name}: a resent goal was rejected while an earlier attempt is "
                        f"unanswered; waiting up to {left:.1f} s for that attempt's response or status"
                    )
            else:
                attempt = self.send_goal_async(goal, feedback_callback)
                attempt.add_done_callback(lambda _: changed.set())
                attempts.append(attempt)
            changed.wait(min(resend_s, left))
        answered = [attempt for attempt in attempts if attempt.done()]
        first = next((a for a in answered if _accepted(a)), answered[0] if answered else None)
        for attempt in attempts:
            if attempt is not first:
                attempt.add_done_callback(_cancel_if_accepted)
        return first.result() if first is not None else None


def _accepted(attempt: Future) -> bool:  # type: ignore[type-arg]
    handle = attempt.result()
    return handle is not None and bool(handle.accepted)


def _cancel_if_accepted(attempt: Future) -> None:  # type: ignore[type-arg]
    handle = attempt.result()
    if handle is not None and handle.accepted:
        handle.cancel_goal_async()
