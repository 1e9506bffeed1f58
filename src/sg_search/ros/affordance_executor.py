"""affordance_executor: hosts ``execute_affordance`` (ExecuteAffordance) over the robot's skills.

The policy (which skills, in which order, which node state afterwards) is the core's
:class:`~sg_search.search.executor.AffordanceExecutor`; this node supplies the skills:

- navigate: the frontier planner's ``navigate`` action (a frontier id, a room's centre, or
  an object's id, for which the planner picks the VVD viewpoint);
- open/close: the simulator bridge's ``open``/``close`` services (``manipulation: sim``) or
  the HSR driver's ``open_container`` action (``manipulation: hsr``);
- look: the ``look_at`` action when a driver offers one, else the base turns towards the
  node (cmd_vel, TF); then the look waits until perception has processed ``observe_frames``
  frames taken since, and the scene graph holds what they reported (at most
  ``observe_timeout_s``);
- look around (LOOK_AROUND, no node): the base turns a full turn in place, a quarter at a time
  (cmd_vel, TF; each quarter at most ``look_timeout_s``), then waits for perception as a look
  does; in a room (the core drives there first) the head is first aimed over the room with
  ``look_at`` (``level_look_*``);
- node states go to the scene graph server's ``scene_graph/set_state``.

A skill whose server is not running (or stops answering mid-goal: the planner died) ends the
goal at once with UNAVAILABLE, which ends the search (it would fail on every target).
Cancelling the goal cancels the running skill; the planner stops the base.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from geometry_msgs.msg import Point, Twist
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance, LookAt, NavigateTo, OpenContainer
from sg_search_interfaces.srv import SetContainer, SetNodeState

from sg_search.geometry import Pose2D
from sg_search.planning.navigator import NavError, turn_towards
from sg_search.planning.stall import point_ahead
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.conversions import fronts_to_msg, point_to_msg
from sg_search.ros.futures import call_with_resend, goal_failure, wait_future
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.liveliness import AliveWatch, announce_alive
from sg_search.ros.params import declare_config
from sg_search.ros.perceived_frames import PerceivedFrames
from sg_search.ros.qos import CMD_VEL_QOS
from sg_search.ros.tf import base_pose, create_transform_source
from sg_search.ros.twist_base import TwistBase
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.fronts import RefusedFronts, facing_side, handle_pose, opening_front
from sg_search.scene_graph.observations import current_unit
from sg_search.search.config import ExecutorNodeConfig
from sg_search.search.executor import AffordanceExecutor, ExecutorError, SkillResult, navigated

POLL_S = 0.1


class Unavailable(RuntimeError):
    """A skill's server is not running."""


class AffordanceExecutorNode(Node):
    """One goal at a time (the reasoner sends one); see the module docstring."""

    def __init__(self, node_name: str = "affordance_executor", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, ExecutorNodeConfig)
        c = self.config
        group = ReentrantCallbackGroup()
        self._navigate = ActionClient(self, NavigateTo, c.navigate_action, callback_group=group)
        self._open_action = ActionClient(self, OpenContainer, c.open_action, callback_group=group)
        self._look_action = ActionClient(self, LookAt, c.look_action, callback_group=group)
        self._open = self.create_client(SetContainer, c.open_service, callback_group=group)
        self._close = self.create_client(SetContainer, c.close_service, callback_group=group)
        self._set_state = self.create_client(SetNodeState, "scene_graph/set_state", callback_group=group)
        self._cmd = self.create_publisher(Twist, "cmd_vel", CMD_VEL_QOS)
        self._alive = announce_alive(self)  # DDS liveliness: dependants see this node die
        self._sender = AliveWatch(self, self.config.goal_sender)
        self.tf = create_transform_source(self)
        self._mirror = GraphMirror(self)
        self._frames = PerceivedFrames(self)
        self._busy = threading.Lock()
        self._handle: ServerGoalHandle | None = None
        self._graph: SceneGraph | None = None  # the graph of the goal being executed
        self._deadline = math.inf  # monotonic [s] at which the running goal's timeout_s runs out
        self._sender_losses = 0  # the sender's losses when the running goal came (its death stops it)
        self._policy = AffordanceExecutor(self, c.navigation_retries, c.open_sides)
        self._refused = RefusedFronts()  # sides containers would not open from, for the planner's approach
        ActionServer(
            self,
            ExecuteAffordance,
            "execute_affordance",
            execute_callback=self._execute,
            goal_callback=lambda _: GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=group,
        )

    # ------------------------------------------------------------------ action
    def _execute(self, handle: ServerGoalHandle) -> ExecuteAffordance.Result:
        result = ExecuteAffordance.Result()
        if not self._busy.acquire(blocking=False):
            handle.abort()
            result.error_code, result.error_msg = ExecutorError.UNKNOWN, "another goal is running"
            return result
        try:
            self._handle = handle
            goal: ExecuteAffordance.Goal = handle.request
            limit = float(goal.timeout_s)
            self._deadline = time.monotonic() + limit if limit > 0 else math.inf
            self._sender_losses = self._sender.losses
            graph = self._mirror.copy(wait_s=self.config.graph_wait_s)
            self._graph = graph
            if not (math.isfinite(limit) and limit >= 0.0):
                report_code, message = ExecutorError.UNKNOWN, f"goal timeout_s {limit} is not a number >= 0 s"
            elif graph is None:
                report_code, message = ExecutorError.UNAVAILABLE, "no scene graph received"
            else:
                try:
                    affordance = SkillAffordance(goal.affordance)
                except ValueError:
                    affordance = None
                if affordance is None:
                    report_code, message = ExecutorError.NOT_AFFORDED, f"unknown affordance {goal.affordance}"
                else:
                    report = self._policy.execute(Candidate(goal.node_id, affordance), graph)
                    report_code, message = ExecutorError(report.code), report.message
                    result.path_length = float(report.path_length)
            if handle.is_cancel_requested:
                report_code, message = ExecutorError.CANCELED, "canceled"
            elif time.monotonic() > self._deadline and report_code != ExecutorError.NONE:
                report_code, message = ExecutorError.TIMEOUT, f"the goal's timeout_s of {limit} s ran out"
            result.error_code, result.error_msg = int(report_code), message
            chosen = graph.get(goal.node_id) if graph is not None else None
            now = self._mirror.copy()
            known = current_unit(now, chosen) if now is not None and chosen is not None else None
            result.node_state = int(known.state) if known is not None else 0
            result.refused_fronts = fronts_to_msg(self._refused.of(goal.node_id))
            if report_code == ExecutorError.CANCELED:
                handle.canceled()
            elif report_code == ExecutorError.NONE:
                handle.succeed()
            else:
                handle.abort()
            return result
        finally:
            self._handle = None
            self._busy.release()

    def _canceled(self) -> bool:
        """The goal was cancelled, its ``timeout_s`` ran out, or the node that sent it died (its
        search is over): what runs for it stops."""
        handle = self._handle
        late = time.monotonic() > self._deadline
        died = self._sender.losses != self._sender_losses
        return handle is not None and (handle.is_cancel_requested or died or late)

    # ------------------------------------------------------------------ skills
    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        """A navigate goal: a frontier/object by id (VVD in the planner), a room by its centre."""
        goal = NavigateTo.Goal()
        if node.layer == Layer.ROOM:
            goal.pose.header.frame_id = self.config.map_frame
            goal.pose.pose.position = point_to_msg(node.position)
            goal.pose.pose.orientation.w = 1.0
            goal.tolerance = self.config.room_arrive_m
        else:
            goal.node_id, goal.within_reach = node.id, purpose == "reach"
            goal.refused_fronts = fronts_to_msg(self._refused.of(node.id))
        try:
            response = self._run_action(
                self._navigate,
                goal,
                self.config.navigate_timeout_s,
                f"planner's {self.config.navigate_action!r} action",
            )
        except Unavailable as exc:
            return SkillResult(False, message=str(exc), code=ExecutorError.UNAVAILABLE)
        if response is None:
            return SkillResult(
                False, message=f"navigation to {node.id} timed out", code=ExecutorError.TIMEOUT
            )
        nav, failure = response.result, goal_failure(response, "frontier planner")
        try:
            code = NavError(nav.error_code)
        except ValueError:
            code = NavError.UNKNOWN
        if failure and code == NavError.NONE:  # the goal aborted without a result: the server failed
            code = NavError.UNKNOWN
        result = navigated(code, float(nav.path_length), node, purpose, failure or nav.error_msg)
        return replace(result, retryable=result.retryable and not self._canceled())

    def _run_action(self, client: ActionClient, goal: Any, timeout_s: float, what: str) -> Any:
        """Send a goal and wait for its result, cancelling it on our cancel; Unavailable when
        the server is not there or goes away; None on timeout."""
        if not client.wait_for_server(timeout_sec=self.config.server_wait_s):
            raise Unavailable(f"the {what} is not running")
        handle = client.send_goal_with_resend(goal, timeout_s=self.config.server_wait_s + 5.0)
        if handle is None or not handle.accepted:
            raise Unavailable(f"the {what} refused the goal")
        future = handle.get_result_async()
        deadline = time.monotonic() + timeout_s
        while not future.done():
            if self._canceled():
                self.get_logger().info(f"canceling the {what}'s goal")
                wait_future(handle.cancel_goal_async(), 2.0)
                return wait_future(future, 5.0)
            if not client.server_is_ready():
                raise Unavailable(f"the {what} stopped answering during the goal")
            if time.monotonic() > deadline:
                handle.cancel_goal_async()
                return None
            time.sleep(POLL_S)
        return future.result()

    def open(self, node: SceneNode) -> SkillResult:
        """Open through the simulator's service or the HSR driver's action."""
        return self._manipulate(node, True)

    def close(self, node: SceneNode) -> SkillResult:
        """Close (simulator only: the HSR driver has no closing motion yet)."""
        return self._manipulate(node, False)

    def _manipulate(self, node: SceneNode, open_: bool) -> SkillResult:
        verb = "open" if open_ else "close"
        centre = node.bbox.center if node.bbox is not None else node.position
        if self.config.manipulation == "none":
            return SkillResult(
                False, message=f"this robot cannot {verb} containers", code=ExecutorError.NOT_AFFORDED
            )
        if self.config.manipulation == "hsr":
            if not open_:
                return SkillResult(
                    False, message="the HSR driver has no close skill", code=ExecutorError.NOT_AFFORDED
                )
            goal = OpenContainer.Goal(node_id=node.id, category=node.category)
            goal.handle.header.frame_id = self.config.map_frame
            # the driver opens the face the base stands before; the estimated front without a pose
            base = self._base_xy()
            front = (
                facing_side(node, base)
                if base is not None
                else opening_front(node, self._room_of(node), self._refused.of(node.id))
            )
            handle = handle_pose(node, front) if front is not None else None
            if handle is None:
                return SkillResult(
                    False,
                    message=f"open {node.id}: its front is unknown (no box for it or its room)",
                    code=ExecutorError.MANIPULATION_FAILED,
                )
            goal.handle.pose.position = point_to_msg(handle[0])
            o = goal.handle.pose.orientation
            o.z, o.w = math.sin(handle[1] / 2), math.cos(handle[1] / 2)
            try:
                response = self._run_action(
                    self._open_action, goal, self.config.manipulation_timeout_s, "HSR driver"
                )
            except Unavailable as exc:
                return SkillResult(False, message=str(exc), code=ExecutorError.UNAVAILABLE)
            if response is None:
                why = "timed out"
            elif response.result.error_code != OpenContainer.Result.SUCCESS:
                why = f"{response.result.failed_step}: {response.result.error_msg}"
            else:  # "no error" in the result of a goal that did not succeed: the driver failed
                why = goal_failure(response, "HSR driver")
            if why:
                # the handle was not where the estimated front put it: that side is not the front
                grasp = (
                    response is not None and response.result.error_code == OpenContainer.Result.GRASP_FAILED
                )
                return self._refused_open(node, f"open {node.id}: {why}", grasp)
            return SkillResult(True, message=f"opened {node.id}")
        client = self._open if open_ else self._close
        if not client.wait_for_service(timeout_sec=self.config.server_wait_s):
            return SkillResult(False, message=f"no {verb} service", code=ExecutorError.UNAVAILABLE)
        request = SetContainer.Request(node_id=node.id, point=Point(x=centre[0], y=centre[1], z=centre[2]))
        response = call_with_resend(client, request, self.config.service_timeout_s)
        if response is None:
            return SkillResult(False, message=f"{verb} {node.id}: no answer", code=ExecutorError.TIMEOUT)
        if not response.success:
            return self._refused_open(
                node, response.message, open_ and response.error_code == SetContainer.Response.WRONG_SIDE
            )
        return SkillResult(True, message=response.message)

    def _base_xy(self) -> tuple[float, float] | None:
        pose = base_pose(self.tf, self.config.map_frame, self.config.base_frame)
        return (pose[0], pose[1]) if pose is not None else None

    def _room_of(self, node: SceneNode) -> SceneNode | None:
        return self._graph.get(node.room_id) if self._graph is not None else None

    def _refused_open(self, node: SceneNode, message: str, wrong_side: bool) -> SkillResult:
        """A failed open or close; from the wrong side, that side is ruled out and the result is
        retryable while another is left (the executor approaches it next)."""
        base = self._base_xy()
        other_side = wrong_side and base is not None and self._refused.refuse(node, base)
        return SkillResult(
            False, message=message, retryable=other_side, code=ExecutorError.MANIPULATION_FAILED
        )

    def look(self, node: SceneNode) -> SkillResult:
        """Point the camera at the node (head or base), then wait for perception to see it
        (module docstring)."""
        target = node.bbox.center if node.bbox is not None else node.position
        if not self._head_at(target, "turning the base instead"):
            self._turn_towards(target)
        return self._perceived(f"looked at {node.id}")

    def _head_at(self, point: tuple[float, float, float], otherwise: str) -> bool:
        """The ``look_at`` action aims the head at ``point`` (map); False where no driver offers
        it or it failed (logged with what happens ``otherwise``)."""
        if not self._look_action.server_is_ready():
            return False
        goal = LookAt.Goal()
        goal.target.header.frame_id = self.config.map_frame
        goal.target.point = point_to_msg(point)
        try:
            self._run_action(self._look_action, goal, self.config.look_timeout_s, "head")
        except Unavailable as exc:
            self.get_logger().warning(f"look_at: {exc}; {otherwise}")
            return False
        return True

    def look_around(self, level: bool = False) -> SkillResult:
        """A full turn in place, a quarter at a time, then perception's frames (module
        docstring); ``level``: the head first aimed over the room, at a point
        ``level_look_ahead_m`` ahead and ``level_look_height_m`` high (where a driver offers
        ``look_at``; it stays there until the base drives on)."""
        c = self.config
        base = base_pose(self.tf, c.map_frame, c.base_frame, c.tf_wait_s) if level else None
        if base is not None:
            ahead = point_ahead(base, c.level_look_ahead_m)
            self._head_at((*ahead, c.level_look_height_m), "the turn with the head as it is")
        why = self._turn(lambda pose: [pose[2] + quarter * math.pi / 2 for quarter in (1, 2, 3, 4)])
        if why:
            code = ExecutorError.CANCELED if self._canceled() else ExecutorError.NAVIGATION_FAILED
            return SkillResult(False, message=f"look around: {why}", code=code)
        return self._perceived("turned a full turn in place")

    def _perceived(self, done: str) -> SkillResult:
        """Wait until perception has processed ``observe_frames`` frames taken from now on (at
        most ``observe_timeout_s``); a success either way, saying so when they were fewer."""
        c = self.config
        after_s = self.get_clock().now().nanoseconds * 1e-9
        if self._frames.wait_after(
            after_s, c.observe_frames, c.observe_timeout_s, self._mirror.has_frame, self._canceled
        ):
            return SkillResult(True, message=done)
        seen = len(self._frames.after(after_s))
        message = (
            f"{done}; perception processed {seen} of {c.observe_frames} frames in {c.observe_timeout_s:g} s"
        )
        self.get_logger().warning(message)
        return SkillResult(True, message=message)

    def _turn_towards(self, target: tuple[float, float, float]) -> None:
        if why := self._turn(lambda pose: [math.atan2(target[1] - pose[1], target[0] - pose[0])]):
            self.get_logger().warning(f"cannot turn towards the node: {why}")

    def _turn(self, headings: Callable[[Pose2D], list[float]]) -> str:
        """Turn the base in place (cmd_vel, TF) to each of ``headings`` [rad, ``map``] of its pose
        now, in turn; "" once done, else why not. TF is given ``tf_wait_s`` to place the base
        (a goal sent as the node starts can come before its first transforms)."""
        c = self.config
        base = TwistBase(self.tf, self._cmd, c.map_frame, c.base_frame, POLL_S)
        pose = base_pose(self.tf, c.map_frame, c.base_frame, c.tf_wait_s)
        if pose is None:
            return f"no transform {c.map_frame} <- {c.base_frame} within tf_wait_s ({c.tf_wait_s} s)"
        goals = headings(pose)
        for done, heading in enumerate(goals):
            if not turn_towards(
                base, heading, c.heading_tolerance_rad, c.turn_speed_rps, c.look_timeout_s, self._canceled
            ):
                return f"the turn stopped after {done} of {len(goals)} headings"
        return ""

    def _current_id(self, node: SceneNode) -> str:
        """The id of the unit ``node`` (as the goal's graph held it) is in the mirror now."""
        graph = self._mirror.copy()
        now = current_unit(graph, node) if graph is not None else None
        return now.id if now is not None else node.id

    def set_state(self, node: SceneNode, state: NodeState) -> None:
        """Tell the scene graph server about the unit ``node`` is now (logged if it does not
        answer)."""
        node_id = self._current_id(node)
        if not self._set_state.wait_for_service(timeout_sec=self.config.server_wait_s):
            self.get_logger().warning(f"scene graph server not available: {node_id} stays as it was")
            return
        request = SetNodeState.Request(node_id=node_id, state=int(state))
        response = call_with_resend(self._set_state, request, self.config.service_timeout_s)
        if response is None or not response.success:
            self.get_logger().warning(f"set_state {node_id}: {response.message if response else 'no answer'}")
