"""frontier_planner: occupancy map, frontiers, geodesic distances and the navigate action.

Topics (relative):
  sub ``depth`` (sensor_msgs/Image, 32FC1 m or 16UC1), ``camera_info``; TF map <- camera, map <- base
  pub ``map`` (nav_msgs/OccupancyGrid, latched), ``frontiers`` (FrontierArray), ``plan`` (nav_msgs/Path),
      ``cmd_vel`` (geometry_msgs/Twist, in ``base_frame``)
Services: ``geodesic_distances`` (GetGeodesicDistances)
Actions:  ``navigate`` (NavigateTo): a pose, a frontier id, or a scene-graph node id (its VVD
          viewpoint, or with ``within_reach`` one within arm's reach; chosen, and tried in
          turn, by the approach the in-process world runs: :mod:`sg_search.planning.approach`,
          the metres of all its tries in ``path_length``). A drive to a frontier ends (NONE)
          once no frontier's goal lies within ``frontier_seen_m`` of its goal and the base
          stands where the safest clearance lets it: the map saw beyond it. A base that is told
          to drive forward and does not move for ``stall_window_s`` marks what lies ahead
          occupied (a disc of ``bump_size_m``: a bumper from odometry; not where that would
          shut the base in) and the path is planned again around it.
"""

from __future__ import annotations

import array
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path as FilePath

import numpy as np
from geometry_msgs.msg import Point, PoseStamped, Twist
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.action import NavigateTo
from sg_search_interfaces.msg import Frontier, FrontierArray
from sg_search_interfaces.srv import GetGeodesicDistances, GetSceneGraph

from sg_search.geometry import Pose2D, TransformError
from sg_search.mapping.frontier_extraction import FrontierExtractor, FrontierSegment, seen_beyond
from sg_search.mapping.occupancy import CameraIntrinsics, OccupancyMap
from sg_search.planning.approach import XY, ApproachDriver, Odometer, approach
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.geodesic import DistanceField, path_length, traversable
from sg_search.planning.navigator import NavError, Navigator, NavResult
from sg_search.planning.stall import StallDetector
from sg_search.ros.conversions import fronts_from_msg, update_from_msg
from sg_search.ros.futures import call_with_resend
from sg_search.ros.images import depth_from_msg, intrinsics_from_msg
from sg_search.ros.liveliness import AliveWatch, announce_alive
from sg_search.ros.params import declare_config
from sg_search.ros.qos import CMD_VEL_QOS, LATCHED_QOS, SENSOR_QOS
from sg_search.ros.tf import create_transform_source, wait_for_transform
from sg_search.ros.twist_base import TwistBase
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.fronts import Front, node_viewpoint
from sg_search.scene_graph.observations import seen_within_reach


class GoalError(ValueError):
    """A navigate goal that cannot be turned into a position; ``code`` is the result code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class FrontierPlanner(Node):
    """Hosts the occupancy map, frontier extraction, planner and follower (all in the core)."""

    def __init__(self, node_name: str = "frontier_planner", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, FrontierPlannerConfig)
        self.spec = self.config.grid()
        self.map = OccupancyMap(self.spec, self.config.occupancy())
        self._load_map()
        self.extractor = FrontierExtractor(self.config.min_frontier_cells)
        self.frontiers: list[FrontierSegment] = []
        self._roomy = False  # the base stands where the safest clearance lets it (at the last update)
        self.field: DistanceField | None = None
        self.navigator = Navigator(self.spec, self._states, self.config.navigator())
        self._free = np.zeros(self.spec.shape, dtype=bool)
        self._updated_for: tuple[np.ndarray, tuple[int, ...] | None] | None = None  # (states, base cell)
        self._intrinsics: CameraIntrinsics | None = None
        self._lock = threading.Lock()
        self._busy = threading.Lock()
        self._driving: ServerGoalHandle | None = None  # the goal under way
        self.tf = create_transform_source(self)
        sensors = MutuallyExclusiveCallbackGroup()
        self.create_subscription(
            CameraInfo, "camera_info", self._on_camera_info, SENSOR_QOS, callback_group=sensors
        )
        self.create_subscription(Image, "depth", self._on_depth, SENSOR_QOS, callback_group=sensors)
        self._map_pub = self.create_publisher(OccupancyGrid, "map", LATCHED_QOS)
        self._frontier_pub = self.create_publisher(FrontierArray, "frontiers", 10)
        self._plan_pub = self.create_publisher(Path, "plan", 10)
        self._cmd_pub = self.create_publisher(Twist, "cmd_vel", CMD_VEL_QOS)
        self._alive = announce_alive(self)
        self._sender = AliveWatch(self, self.config.goal_sender, on_lost=self._halt_driving)
        c = self.config
        self.base = TwistBase(
            self.tf, self._cmd_pub, c.map_frame, c.base_frame, c.control_period_s,
            StallDetector(c.stall_window_s, c.stall_progress_m), self._on_blocked,
            clock=lambda: self.get_clock().now().nanoseconds * 1e-9,
        )  # fmt: skip
        self.create_timer(
            self.config.update_period_s, self._update, callback_group=MutuallyExclusiveCallbackGroup()
        )
        if self.config.map_file and self.config.map_save_period_s > 0:
            self.create_timer(self.config.map_save_period_s, self._save_map)
        self.create_service(GetGeodesicDistances, "geodesic_distances", self._on_distances)
        self._graph_client = self.create_client(GetSceneGraph, "scene_graph/get")
        ActionServer(
            self,
            NavigateTo,
            "navigate",
            execute_callback=self._navigate,
            goal_callback=lambda _: GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel,
            callback_group=ReentrantCallbackGroup(),
        )

    # ------------------------------------------------------------------ mapping
    def _load_map(self) -> None:
        """The map saved by an earlier run of this node (``map_file``), if there is one."""
        path = FilePath(self.config.map_file) if self.config.map_file else None
        if path is None or not path.exists():
            return
        try:
            self.map.load(path)
        except ValueError as exc:
            self.get_logger().error(f"map not loaded, starting empty: {exc}")
            return
        self.get_logger().info(f"map loaded from {path}: {int(self.map.observed.sum())} cells known")

    def _save_map(self) -> None:
        """The save timer (and shutdown): a failed save is logged; the map in memory stays."""
        if not self.config.map_file:
            return
        with self._lock:
            snapshot = self.map.copy()
        try:
            snapshot.save(FilePath(self.config.map_file))
        except OSError as exc:
            self.get_logger().error(f"could not save map {self.config.map_file}: {exc}")

    def destroy_node(self) -> None:
        """Save the map before going away."""
        self._save_map()
        super().destroy_node()

    def _on_camera_info(self, msg: CameraInfo) -> None:
        try:
            self._intrinsics = intrinsics_from_msg(msg)
        except ValueError as exc:
            self.get_logger().error(str(exc), throttle_duration_sec=5.0)

    def _on_depth(self, msg: Image) -> None:
        if self._intrinsics is None:
            self.get_logger().warning("depth before camera_info: frame dropped", throttle_duration_sec=5.0)
            return
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        try:
            depth = depth_from_msg(msg, self.config.depth_scale)
            t_map_camera = wait_for_transform(
                self.tf, self.config.map_frame, msg.header.frame_id, stamp, self.config.tf_timeout_s
            )
        except (ValueError, TransformError) as exc:
            self.get_logger().warning(f"depth frame dropped, map unchanged: {exc}", throttle_duration_sec=5.0)
            return
        with self._lock:
            self.map.integrate_depth(depth, self._intrinsics, t_map_camera, stamp)

    def robot_pose(self) -> Pose2D | None:
        """(x, y, yaw) of the base in the map, or None if TF does not know it."""
        return self.base.pose()

    def _update(self) -> None:
        with self._lock:
            states = self.map.states()
        pose = self.robot_pose()
        cell = None if pose is None else tuple(int(v) for v in self.spec.to_cells(np.array([pose[:2]]))[0])
        last = self._updated_for
        if last is None or cell != last[1] or not np.array_equal(states, last[0]):
            self._updated_for = (states, cell)  # else the same field and frontiers as the last update
            self._plan_update(states, pose)
        # every period, changed or not: a late subscriber (the live view) gets the frontiers, and
        # the scene graph server re-segments rooms on a map message (rate-limited): it names
        # them from the objects seen since, which change while the map does not
        self._map_pub.publish(self._grid_msg(states))
        with self._lock:
            frontiers = self.frontiers
        out = FrontierArray()
        out.header.frame_id = self.config.map_frame
        out.header.stamp = self.get_clock().now().to_msg()
        out.frontiers = [
            Frontier(
                id=f.frontier_id,
                centroid=Point(x=f.centroid[0], y=f.centroid[1]),
                goal=Point(x=f.goal[0], y=f.goal[1]),
                size=f.size,
                length=f.length,
            )
            for f in frontiers
        ]
        self._frontier_pub.publish(out)

    def _plan_update(self, states: np.ndarray, pose: Pose2D | None) -> None:
        """The distance field from the base, the traversable cells and the frontiers of ``states``."""
        first = next(self.navigator.fields(pose[:2]), None) if pose is not None else None
        if first is not None:  # the safest clearance that can place the base
            free, field = first
        else:
            free, field = traversable(states, self.spec, self.config.planner()), None
            if pose is not None:
                self.get_logger().warning(
                    "no distance field: the base is not on free space", throttle_duration_sec=5.0
                )
        frontiers = self.extractor.extract(states, self.spec, field.distance if field else None)
        safest = first is not None and first[1].params is self.navigator.params.planners[0]
        roomy = pose is not None and self.navigator.roomy(pose[:2], free if safest else None)
        with self._lock:
            self._free, self.field, self.frontiers, self._roomy = free, field, frontiers, roomy

    def _grid_msg(self, states: np.ndarray) -> OccupancyGrid:
        msg = OccupancyGrid()
        msg.header.frame_id = self.config.map_frame
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.info.resolution = float(self.spec.resolution)
        msg.info.width, msg.info.height = self.spec.width, self.spec.height
        msg.info.origin.position.x, msg.info.origin.position.y = self.spec.origin_x, self.spec.origin_y
        msg.info.origin.orientation.w = 1.0
        msg.data = array.array("b", states.astype(np.int8).tobytes())  # C order: row-major as the message's
        return msg

    def _on_distances(
        self, request: GetGeodesicDistances.Request, response: GetGeodesicDistances.Response
    ) -> GetGeodesicDistances.Response:
        field = self.field
        if field is None:
            response.success, response.message = False, "robot pose or map not available yet"
            return response
        points = np.array([[p.x, p.y] for p in request.points]).reshape(-1, 2)
        distances = field.distances_to(points)
        response.distances = [float(d) if np.isfinite(d) else -1.0 for d in distances]
        response.success = True
        return response

    # ------------------------------------------------------------------ navigation
    def _navigate(self, handle: ServerGoalHandle) -> NavigateTo.Result:
        result = NavigateTo.Result()
        if not self._busy.acquire(blocking=False):
            handle.abort()
            result.error_code, result.error_msg = NavigateTo.Result.UNKNOWN, "another goal is active"
            return result
        self.base.resume()  # before the goal is marked under way: a halt for it is never undone
        self._driving = handle
        try:
            return self._drive(handle, result)
        finally:
            self._driving = None
            self.base.halt()  # every goal ends with the base stopped, through the one stop
            self._busy.release()

    def _on_cancel(self, handle: ServerGoalHandle) -> CancelResponse:
        """A cancel of the goal under way stops the base as it arrives, not when the control
        loop next looks (after a replan of up to 0.9 s on a loaded machine)."""
        if handle is self._driving:
            self.base.halt()
        return CancelResponse.ACCEPT

    def _halt_driving(self) -> None:
        """The goal's sender died: the base stops now, as for a cancel."""
        if self._driving is not None:
            self.base.halt()

    def _goal_of(self, goal: NavigateTo.Goal) -> tuple[float, float] | None:
        """A pose goal's or a frontier's position [m] in the map, None for another node (its
        viewpoints are approached); GoalError with the result code for a bad pose goal."""
        if not goal.node_id:
            if goal.pose.header.frame_id not in ("", self.config.map_frame):
                frame = goal.pose.header.frame_id
                raise GoalError(
                    NavigateTo.Result.INVALID_GOAL, f"goal frame {frame!r} is not {self.config.map_frame!r}"
                )
            xy = (goal.pose.pose.position.x, goal.pose.pose.position.y)
            if not all(math.isfinite(v) for v in xy):
                raise GoalError(NavigateTo.Result.INVALID_GOAL, f"goal pose.position {xy} is not finite")
            return xy
        return next((f.goal for f in self.frontiers if f.frontier_id == goal.node_id), None)

    def _refused(self, goal: NavigateTo.Goal) -> Sequence[Front]:
        """The sides the goal's container refused to open from; GoalError if malformed."""
        try:
            return fronts_from_msg(goal.refused_fronts, "refused_fronts")
        except ValueError as exc:
            raise GoalError(NavigateTo.Result.INVALID_GOAL, str(exc)) from exc

    def _viewpoint_of(
        self, node_id: str, within_reach: bool, refused: Sequence[Front], failed: Sequence[XY] = ()
    ) -> tuple[float, float]:
        """The node's viewpoint (:func:`~sg_search.planning.viewpoints.approach_goal`, as the
        in-process world chooses it) from the base's pose, away from ``failed`` goals; within
        reach of an object the base already sees there
        (:func:`~sg_search.scene_graph.observations.seen_within_reach`), the base's own position."""
        if not self._graph_client.wait_for_service(timeout_sec=2.0):
            raise GoalError(
                NavigateTo.Result.UNKNOWN_NODE, "scene graph server not available to resolve node ids"
            )
        response = call_with_resend(self._graph_client, GetSceneGraph.Request(), 10.0)
        if response is None:
            raise GoalError(
                NavigateTo.Result.UNKNOWN, f"the scene graph server did not answer for {node_id!r}"
            )
        graph = SceneGraph()
        try:
            graph.apply(update_from_msg(response.update))
        except ValueError as exc:
            raise GoalError(NavigateTo.Result.UNKNOWN, f"the scene graph sent a bad node: {exc}") from None
        node = graph.get(node_id)
        if node is None:
            raise GoalError(NavigateTo.Result.UNKNOWN_NODE, f"unknown node {node_id!r}")
        pose = self.base.pose()
        if pose is None:
            raise GoalError(NavigateTo.Result.UNKNOWN, "the base's pose is not known (no transform)")
        if within_reach and seen_within_reach(graph, node, pose[:2], self.config.reach_m):
            return (float(pose[0]), float(pose[1]))
        goal = node_viewpoint(
            graph, node, pose[:2], refused, self._states(), self.navigator.fields(pose[:2]), self.spec,
            self.config, within_reach, failed,
        )  # fmt: skip
        if goal is None:
            raise GoalError(NavigateTo.Result.NO_VALID_PATH, f"no reachable viewpoint around {node_id!r}")
        return goal

    def _drive(self, handle: ServerGoalHandle, result: NavigateTo.Result) -> NavigateTo.Result:
        goal: NavigateTo.Goal = handle.request
        try:
            if not (math.isfinite(goal.tolerance) and goal.tolerance >= 0.0):
                raise GoalError(
                    NavigateTo.Result.INVALID_GOAL, f"goal tolerance {goal.tolerance} is not >= 0"
                )
            target = self._goal_of(goal)
            frontier = target if goal.node_id else None  # a frontier's goal
            refused = self._refused(goal) if target is None else ()
        except GoalError as exc:
            handle.abort()
            result.error_code, result.error_msg = exc.code, str(exc)
            return result

        odometer = Odometer(self.navigator.params.pose_jump_m)

        def feedback(pose: Pose2D, remaining: float, recoveries: int) -> None:
            odometer.at(pose)
            message = NavigateTo.Feedback(recoveries=recoveries, distance_remaining=float(remaining))
            message.current_pose = self._pose_msg(pose)
            handle.publish_feedback(message)

        sender, losses = self._sender, self._sender.losses  # the sender's death during this goal stops it
        seen = [False]  # the map saw beyond the frontier on the way and the base may stand here: arrived

        def beyond_seen() -> bool:
            seen[0] = (
                frontier is not None
                and self._roomy
                and seen_beyond(frontier, self.frontiers, self.config.frontier_seen_m)
            )
            return seen[0]

        def stopped() -> bool:
            return bool(handle.is_cancel_requested or sender.losses != losses)

        tolerance = float(goal.tolerance) or (self.config.reach_tolerance_m if goal.within_reach else 0.0)

        def drive(to: XY, max_travel_m: float = math.inf) -> NavResult:
            return odometer.ended(
                self.navigator.navigate(
                    self.base,
                    to,
                    tolerance,
                    should_stop=lambda: stopped() or beyond_seen() or odometer.leg_m > max_travel_m,
                    on_path=self._publish_plan,
                    on_feedback=feedback,
                )
            )

        if target is None:
            try:
                outcome = self._approach(goal, refused, tolerance, drive, odometer, stopped)
            except GoalError as exc:
                handle.abort()
                result.error_code, result.error_msg = exc.code, str(exc)
                result.path_length = odometer.total_m
                return result
        else:
            outcome = drive(target)
        if seen[0] and outcome.code == NavError.CANCELED and not handle.is_cancel_requested:
            outcome = replace(
                outcome, code=NavError.NONE, message="the map saw beyond the frontier on the way"
            )
        if sender.losses != losses and not handle.is_cancel_requested:
            self.get_logger().error(f"{sender.name} died during the navigation: the base is stopped")
            outcome = replace(outcome, message=f"stopped: {sender.name}, which sent the goal, died")
        if outcome.code == NavError.CANCELED and handle.is_cancel_requested:
            self.get_logger().info(f"navigation canceled after {outcome.path_length:.2f} m: the base stops")
            handle.canceled()
        elif outcome.success:
            handle.succeed()
        else:
            handle.abort()
        result.error_code, result.error_msg = int(outcome.code), outcome.message
        result.path_length = float(outcome.path_length)
        if outcome.final_pose is not None:
            result.final_pose = self._pose_msg(outcome.final_pose)
        return result

    def _approach(
        self,
        goal: NavigateTo.Goal,
        refused: Sequence[Front],
        tolerance: float,
        drive: Callable[[XY, float], NavResult],
        odometer: Odometer,
        stopped: Callable[[], bool],
    ) -> NavResult:
        """The approach to a node's viewpoints (:func:`~sg_search.planning.approach.approach`, as
        the in-process world runs it), told as one navigation: metres driven over all its tries;
        GoalError when the first viewpoint cannot be chosen (no node, no way to any)."""
        first = [True]

        def choose(failed: Sequence[XY]) -> XY | None:
            if stopped():
                return None
            try:
                return self._viewpoint_of(goal.node_id, goal.within_reach, refused, failed)
            except GoalError as exc:
                if first[0] or exc.code != NavigateTo.Result.NO_VALID_PATH:
                    raise
                return None  # no viewpoint left
            finally:
                first[0] = False

        def position() -> XY:
            pose = self.base.pose()
            if pose is None:
                raise GoalError(NavigateTo.Result.UNKNOWN, "the base's pose is not known (no transform)")
            return (float(pose[0]), float(pose[1]))

        def way(to: XY) -> float:
            return self.navigator.way(position(), to)

        host = ApproachDriver(choose, drive, position, way, lambda: odometer.total_m)
        end = approach(host, tolerance or self.navigator.params.follower.goal_tolerance, self.spec.resolution,
                       self.navigator.params)  # fmt: skip
        code, message = end.code(), end.message()
        if not end.arrived and stopped():
            code, message = NavError.CANCELED, "canceled"
        final_pose = end.last.final_pose if end.last is not None else None
        return NavResult(code, message, odometer.total_m, final_pose)

    def _on_blocked(self, pose: Pose2D) -> None:
        """The base pushed forward without moving: what it ran into is occupied (``bump_marks``:
        what the in-process robot's bumper marks), so the next plan goes around it; less, or
        nothing, where the marks would leave the base less floor than they cut it off from
        (``bump_shut_in_m2``): then the follower backs off and re-plans."""
        marks = self.config.bump_marks(pose, self.navigator)
        where = f"blocked at ({pose[0]:.2f}, {pose[1]:.2f})"
        if not len(marks):
            self.get_logger().warning(f"{where}, not marked: it would cut the base off from the floor beyond")
            return
        x, y = marks.mean(axis=0)
        self.get_logger().warning(f"{where}: {len(marks)} cell(s) about ({x:.2f}, {y:.2f}) marked occupied")
        with self._lock:
            self.map.mark_occupied(marks)

    def _states(self) -> np.ndarray:
        with self._lock:
            return self.map.states()

    def _publish_plan(self, path: np.ndarray) -> None:
        msg = Path()
        msg.header.frame_id = self.config.map_frame
        msg.poses = [self._pose_msg((float(x), float(y), 0.0)) for x, y in path]
        self._plan_pub.publish(msg)
        end = path[-1]
        self.get_logger().info(f"planned {path_length(path):.2f} m to ({end[0]:.2f}, {end[1]:.2f})")

    def _pose_msg(self, pose: Pose2D) -> PoseStamped:
        msg = PoseStamped()
        msg.header.frame_id = self.config.map_frame
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.pose.position.x, msg.pose.position.y = pose[0], pose[1]
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(pose[2] / 2), math.cos(pose[2] / 2)
        return msg
