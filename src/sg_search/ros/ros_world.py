"""The search's world over ROS (:mod:`sg_search.search.world`), inside the reasoner node.

Sensing: the graph from the node's mirror of ``scene_graph/updates``; the base's pose from TF
(``map_frame`` <- ``base_frame``); recent RGB frames from the ``rgb`` topic, keyed by the
frame index perception gave the same stamp on ``observations`` (the ids in a node's
``frame_ids``); geodesic distances from the planner's ``geodesic_distances`` service, a
frontier's measured to its goal on the planner's ``frontiers``. Acting:
the affordance executor's ``execute_affordance`` action. Re-observing: perception's next
observation of the candidate, read from the mirror.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rcl_interfaces.srv import GetParameters
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.parameter import parameter_value_to_python
from sensor_msgs.msg import Image
from sg_search_interfaces.action import ExecuteAffordance
from sg_search_interfaces.msg import FrontierArray, ObjectObservationArray
from sg_search_interfaces.srv import GetGeodesicDistances

from sg_search.geometry import Pose2D
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.conversions import fronts_from_msg, point_to_msg
from sg_search.ros.futures import goal_failure, wait_future
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.liveliness import AliveWatch
from sg_search.ros.perception_node import rgb_from_msg, stamp_of
from sg_search.ros.qos import SENSOR_QOS
from sg_search.ros.tf import base_pose, create_transform_source
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.fronts import Front, approach_distance, measured_at
from sg_search.search.config import ReasonerNodeConfig
from sg_search.search.reports import ExecutionReport
from sg_search.search.verification import follow_candidate

if TYPE_CHECKING:
    from rclpy.node import Node

STAMP_SLOP_S = 1e-3  # an RGB image and an observation with stamps this close are one frame
# Affordances whose executor ends by looking and waiting until the server's graph holds what it
# saw: the next step's graph must hold it too, or the search closes a container on its target.
_LOOKING = (SkillAffordance.OPEN, SkillAffordance.INSPECT, SkillAffordance.LOOK_AROUND)


class RecentImages:
    """The last ``kept`` RGB frames, keyed by perception's frame index (module docstring). The
    image and the observation of one frame travel on different topics: whichever comes second
    completes the pair."""

    def __init__(self, node: Node, kept: int) -> None:
        self.kept = kept
        self._images: OrderedDict[float, Image] = OrderedDict()  # stamp -> image not yet paired
        self._indices: OrderedDict[float, int] = OrderedDict()  # stamp -> frame index not yet paired
        self._by_frame: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()
        node.create_subscription(Image, "rgb", self._on_rgb, SENSOR_QOS)
        node.create_subscription(ObjectObservationArray, "observations", self._on_observations, 10)

    def _on_rgb(self, msg: Image) -> None:
        t = stamp_of(msg)
        with self._lock:
            index = _pop_near(self._indices, t)
            if index is None:
                _bounded_put(self._images, t, msg, 4 * self.kept)
                return
        self._pair(index, msg)

    def _on_observations(self, msg: ObjectObservationArray) -> None:
        t = stamp_of(msg)
        with self._lock:
            image = _pop_near(self._images, t)
            if image is None:
                _bounded_put(self._indices, t, int(msg.frame_index), 4 * self.kept)
                return
        self._pair(int(msg.frame_index), image)

    def _pair(self, index: int, image: Image) -> None:
        try:
            rgb = rgb_from_msg(image)
        except ValueError:
            return  # an encoding perception skips too
        with self._lock:
            self._by_frame[index] = rgb
            while len(self._by_frame) > self.kept:
                self._by_frame.popitem(last=False)

    def by_frame(self) -> dict[int, Any]:
        """Frame index -> (H, W, 3) RGB, oldest first."""
        with self._lock:
            return dict(self._by_frame)


def _pop_near(table: OrderedDict[float, Any], t: float) -> Any:
    """The entry stamped within STAMP_SLOP_S of ``t`` (removed), or None."""
    match = min(table, key=lambda s: abs(s - t), default=None)
    if match is None or abs(match - t) > STAMP_SLOP_S:
        return None
    return table.pop(match)


def _bounded_put(table: OrderedDict[float, Any], t: float, value: Any, limit: int) -> None:
    table[t] = value
    while len(table) > limit:
        table.popitem(last=False)


PLANNER_ANSWER_GRACE_S = 10.0
"""[s] how long the planner may take to answer for its ``reach_radii`` before the reasoner
node warns (at start-up its parameter service is found a little after its other services)."""


class RosSensing:
    """A :class:`~sg_search.search.world.SensedWorld` over the reasoner node's subscriptions."""

    def __init__(self, node: Node, config: ReasonerNodeConfig, mirror: GraphMirror) -> None:
        self.node = node
        self.config = config
        self.mirror = mirror
        self.refused: dict[str, tuple[Front, ...]] = {}  # the executor: sides each would not open from
        self.tf = create_transform_source(node)
        self.images = RecentImages(node, config.kept_frames)
        group = ReentrantCallbackGroup()
        self._planner_parameters = node.create_client(
            GetParameters, f"{config.planner_node}/get_parameters", callback_group=group
        )
        self._reach_radii: tuple[float, ...] | None = None
        self._first_asked = math.inf  # [s, monotonic] when the radii were first needed
        self._distance_client = node.create_client(
            GetGeodesicDistances, "geodesic_distances", callback_group=group
        )
        self._frontier_goals: dict[str, tuple[float, float]] = {}  # [m, map] the planner's, by id
        node.create_subscription(FrontierArray, "frontiers", self._on_frontiers, 10, callback_group=group)
        self.watches = {name: AliveWatch(node, name) for name in config.sensing_nodes}
        self.perception = self.watches.get("perception") or AliveWatch(node, "")

    def _on_frontiers(self, msg: FrontierArray) -> None:
        """The planner's current frontiers (a complete set): where a drive to each goes."""
        self._frontier_goals = {f.id: (f.goal.x, f.goal.y) for f in msg.frontiers}

    def dead(self) -> list[str]:
        """The nodes the search senses through (``sensing_nodes``) that were running and died."""
        return [name for name, watch in self.watches.items() if watch.lost]

    def wait_alive(self, timeout_s: float) -> list[str]:
        """Wait up to ``timeout_s`` [s] until no sensing node is lost; those still lost."""
        deadline = time.monotonic() + timeout_s
        while (dead := self.dead()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return dead

    def graph(self) -> SceneGraph | None:
        """The mirror's copy of the graph."""
        return self.mirror.copy()

    def pose(self) -> Pose2D | None:
        """The base in ``map_frame`` from TF, or None when TF does not know it."""
        return base_pose(self.tf, self.config.map_frame, self.config.base_frame)

    def recent_images(self) -> Mapping[int, Any]:
        """Recent RGB frames by perception's frame index."""
        return self.images.by_frame()

    def distances(self) -> dict[str, float]:
        """Geodesic metres from the robot to every room, region and object (the planner's
        ``geodesic_distances``), to a frontier's goal (the planner's ``frontiers``), to a
        container where the base would stand to open it, less the sides the executor reported it
        would not open from (:func:`~sg_search.scene_graph.fronts.measured_at`, as the in-process
        world measures them); empty while the planner answers neither these nor its
        ``reach_radii`` (reasoners then rank by utility)."""
        graph = self.mirror.copy()
        if graph is None or not self._distance_client.service_is_ready():
            return {}
        radii = self._planner_reach_radii()
        if not radii:
            return {}
        nodes = [n for n in graph.nodes() if n.layer >= 2]
        goals = self._frontier_goals
        points = [measured_at(n, graph.get, radii, self.refused.get(n.id, ()), goals) for n in nodes]
        flat = [(x, y, 0.0) for each in points for x, y in each]
        request = GetGeodesicDistances.Request(points=[point_to_msg(p) for p in flat])
        response = wait_future(self._distance_client.call_async(request), 2.0)
        if response is None or not response.success or len(response.distances) != len(flat):
            return {}
        ways = iter(d if d >= 0 else math.inf for d in response.distances)
        return {
            n.id: approach_distance([next(ways) for _ in each]) for n, each in zip(nodes, points, strict=True)
        }

    def _planner_reach_radii(self) -> tuple[float, ...] | None:
        """The planner's ``reach_radii`` [m], the circles its approaches to open a container
        drive to: asked of its parameters (one source for both nodes) until it answers. None
        while it does not (a warning once it has not for ``PLANNER_ANSWER_GRACE_S``); () once it
        answered without a non-empty list of numbers (a wrong ``planner_node``), said in a warning."""
        if self._reach_radii is not None:
            return self._reach_radii
        now = time.monotonic()
        self._first_asked = min(self._first_asked, now)
        response = None
        if self._planner_parameters.service_is_ready():
            request = GetParameters.Request(names=["reach_radii"])
            response = wait_future(self._planner_parameters.call_async(request), 2.0)
        if response is None:  # not there or not answered in time: asked again at the next decision
            if now - self._first_asked > PLANNER_ANSWER_GRACE_S:
                self.node.get_logger().warning(
                    f"planner_node {self.config.planner_node!r} does not answer for its reach_radii: "
                    "no distances for reasoners",
                    once=True,
                )
            return None
        values = [parameter_value_to_python(v) for v in response.values]
        radii = list(values[0]) if len(values) == 1 and isinstance(values[0], Sequence) else []
        numbers = [float(r) for r in radii if isinstance(r, int | float) and not isinstance(r, bool)]
        self._reach_radii = tuple(numbers) if radii and len(numbers) == len(radii) else ()
        if not self._reach_radii:
            self.node.get_logger().warning(
                f"planner_node {self.config.planner_node!r} has no reach_radii (it answered "
                f"{values!r}): no distances for reasoners"
            )
        return self._reach_radii


class RosWorld:
    """A :class:`~sg_search.search.world.VerifyingWorld`: sensing plus the affordance
    executor's action for one search; ``should_stop`` cancels what runs."""

    def __init__(self, sensing: RosSensing, executor: ActionClient, should_stop: Callable[[], bool]) -> None:
        self.sensing = sensing
        self.config = sensing.config
        self.executor = executor
        self.should_stop = should_stop
        self._in_flight: Any = None
        self._faced: tuple[str, Pose2D] | None = None  # (node id, base pose) after the last approach

    def graph(self) -> SceneGraph | None:
        """See :class:`RosSensing`."""
        return self.sensing.graph()

    def pose(self) -> Pose2D | None:
        """See :class:`RosSensing`."""
        return self.sensing.pose()

    def recent_images(self) -> Mapping[int, Any]:
        """See :class:`RosSensing`."""
        return self.sensing.recent_images()

    def distances(self) -> dict[str, float]:
        """See :class:`RosSensing`."""
        return self.sensing.distances()

    def execute(self, candidate: Candidate) -> ExecutionReport:
        """One ExecuteAffordance goal; cancelled with the search; fatal if the executor is gone
        or reports that a skill server is (UNAVAILABLE). After an open or inspection the graph
        is caught up with the server's (the executor's own copy may have been served first)."""
        client = self.executor
        if self.sensing.dead() and (dead := self.sensing.wait_alive(self.config.revive_wait_s)):
            return _blind(dead)
        goal = ExecuteAffordance.Goal(node_id=candidate.node_id, affordance=int(candidate.affordance))
        handle = client.send_goal_with_resend(goal, timeout_s=self.config.executor_wait_s + 5.0)
        if handle is None:  # no response and no status in the whole wait: it is gone
            return ExecutionReport(
                False,
                message=f"the affordance executor did not answer the goal for {candidate.node_id}",
                fatal=True,
            )
        if not handle.accepted:
            return ExecutionReport(False, message=f"the affordance executor refused {candidate.node_id}")
        self._in_flight = handle
        try:
            future = handle.get_result_async()
            deadline = time.monotonic() + self.config.execute_timeout_s
            while not future.done():
                if self.should_stop():
                    self.stop()
                    wait_future(future, 5.0)
                    return ExecutionReport(False, message="canceled")
                if not client.server_is_ready():
                    return ExecutionReport(
                        False, message="the affordance executor stopped answering", fatal=True
                    )
                if lapsed := self.sensing.dead():  # stop the base now, not when the action ends
                    self.sensing.node.get_logger().warning(
                        f"{', '.join(lapsed)} lost: stopping the action on {candidate.node_id}"
                    )
                    self.stop()
                    wait_future(future, 5.0)
                    return self._lapse(lapsed)
                if time.monotonic() > deadline:
                    self.stop()
                    return ExecutionReport(False, message=f"executor timed out on {candidate.node_id}")
                time.sleep(0.05)
        finally:
            self._in_flight = None
        response = future.result()
        if response is None:  # the result future was cancelled: no answer is no success
            return ExecutionReport(False, message="the affordance executor gave no result", fatal=True)
        result = response.result
        failure = goal_failure(response, "affordance executor")
        try:
            if refused := fronts_from_msg(result.refused_fronts, "refused_fronts"):
                self.sensing.refused[candidate.node_id] = refused
            else:
                self.sensing.refused.pop(candidate.node_id, None)
        except ValueError as exc:
            failure = failure or f"affordance executor: {exc}"
        succeeded = not failure and result.error_code == 0
        if succeeded and candidate.affordance in _LOOKING:
            self.sensing.mirror.catch_up(self.config.graph_wait_s)
        return ExecutionReport(
            succeeded,
            float(result.path_length),
            message=failure or result.error_msg,
            code=int(result.error_code),
            fatal=result.error_code == ExecuteAffordance.Result.UNAVAILABLE,
        )

    def _lapse(self, lapsed: list[str]) -> ExecutionReport:
        """Sensing nodes' liveliness lapsed: dead (fatal) if still lost after ``revive_wait_s``;
        else they stalled (a starved process misses its lease) and the search goes on."""
        if dead := self.sensing.wait_alive(self.config.revive_wait_s):
            return _blind(dead)
        return ExecutionReport(False, message=f"{', '.join(lapsed)} stalled and came back; action stopped")

    def stop(self) -> None:
        """Cancel the executor's goal in flight (the executor stops the base)."""
        handle = self._in_flight
        if handle is not None:
            wait_future(handle.cancel_goal_async(), 2.0)

    def approach(self, node: SceneNode) -> ExecutionReport:
        """NAVIGATE to an object: the executor drives within reach of it (the viewpoints the
        in-process world's approach uses) and looks at it."""
        report = self.execute(Candidate(node.id, SkillAffordance.NAVIGATE))
        pose = self.pose()
        self._faced = (node.id, pose) if pose is not None and not report.fatal else None
        return report

    def reobserve(self, node: SceneNode, after_frame: int) -> SceneNode | None:
        """Face the candidate again unless the base still stands where the last approach to it
        left it (:meth:`approach`: back within reach if the base has drifted, then look at it, as
        the in-process world aims before each frame, so that an accepted find ends with it in
        view), then wait up to ``verify_observation_timeout_s`` for perception to report it in a
        frame newer than ``after_frame``."""
        if not self._still_facing(node) and self.approach(node).fatal:
            return None  # the executor is gone; a drive that fell short is not fatal
        deadline = time.monotonic() + self.config.verify_observation_timeout_s
        while time.monotonic() < deadline and not self.should_stop() and not self.sensing.perception.lost:
            graph = self.sensing.graph()
            seen = follow_candidate(graph, node, node.category) if graph is not None else None
            if seen is not None and seen.frame_ids and seen.frame_ids[-1] > after_frame:
                return seen
            time.sleep(0.1)
        return None

    def _still_facing(self, node: SceneNode) -> bool:
        """Whether the base stands within ``still_facing_m`` / ``still_facing_deg`` of its pose
        after approaching ``node``."""
        pose = self.pose()
        if self._faced is None or self._faced[0] != node.id or pose is None:
            return False
        x, y, yaw = self._faced[1]
        turn = abs(math.remainder(pose[2] - yaw, math.tau))
        near = math.hypot(pose[0] - x, pose[1] - y) <= self.config.still_facing_m
        return near and turn <= math.radians(self.config.still_facing_deg)


def _blind(dead: list[str]) -> ExecutionReport:
    """The fatal report of a search whose sensing nodes died."""
    return ExecutionReport(False, message=f"{', '.join(dead)} died: the search cannot see", fatal=True)
