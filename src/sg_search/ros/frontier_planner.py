"""frontier_planner: occupancy map, frontiers, geodesic distances and the navigate action.

Topics (relative):
  sub ``depth`` (sensor_msgs/Image, 32FC1 m or 16UC1), ``camera_info``; TF map <- camera, map <- base
  pub ``map`` (nav_msgs/OccupancyGrid, latched), ``frontiers`` (FrontierArray), ``plan`` (nav_msgs/Path),
      ``cmd_vel`` (geometry_msgs/Twist, in ``base_frame``)
Services: ``geodesic_distances`` (GetGeodesicDistances)
Actions:  ``navigate`` (NavigateTo): a pose, a frontier id, or a scene-graph node id (VVD viewpoint)
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace

import numpy as np
from geometry_msgs.msg import Point, PoseStamped, Twist
from nav_msgs.msg import OccupancyGrid, Path
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.action import NavigateTo
from sg_search_interfaces.msg import Frontier, FrontierArray
from sg_search_interfaces.srv import GetGeodesicDistances, GetSceneGraph

from sg_search.geometry import TransformError
from sg_search.mapping.frontiers import FrontierExtractor, FrontierSegment
from sg_search.mapping.occupancy import CameraIntrinsics, OccupancyMap
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.follower import FollowStatus, PathFollower, Pose2D
from sg_search.planning.geodesic import DistanceField, PlanningError, path_length, traversable
from sg_search.planning.viewpoints import box_viewpoints
from sg_search.ros.futures import wait_future
from sg_search.ros.images import depth_from_msg, intrinsics_from_msg
from sg_search.ros.params import declare_config
from sg_search.ros.tf import create_transform_source

MAP_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
POSE_JUMP_M = 1.0  # a pose change this large between control ticks forces a re-plan


class GoalError(ValueError):
    """A navigate goal that cannot be turned into a position; ``code`` is the result code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _yaw(rotation: np.ndarray) -> float:
    x, y, z, w = rotation
    return math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


class FrontierPlanner(Node):
    """Hosts the occupancy map, frontier extraction, planner and follower (all in the core)."""

    def __init__(self, node_name: str = "frontier_planner", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, FrontierPlannerConfig)
        self.spec = self.config.grid()
        self.map = OccupancyMap(self.spec, self.config.occupancy())
        self.extractor = FrontierExtractor(self.config.min_frontier_cells)
        self.frontiers: list[FrontierSegment] = []
        self.field: DistanceField | None = None
        self._free = np.zeros(self.spec.shape, dtype=bool)
        self._intrinsics: CameraIntrinsics | None = None
        self._lock = threading.Lock()
        self._busy = threading.Lock()
        self.tf = create_transform_source(self)
        sensors = MutuallyExclusiveCallbackGroup()
        # Best effort matches both best-effort (camera drivers, sim_bridge) and reliable publishers.
        sensor_qos = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.create_subscription(
            CameraInfo, "camera_info", self._on_camera_info, sensor_qos, callback_group=sensors
        )
        self.create_subscription(Image, "depth", self._on_depth, sensor_qos, callback_group=sensors)
        self._map_pub = self.create_publisher(OccupancyGrid, "map", MAP_QOS)
        self._frontier_pub = self.create_publisher(FrontierArray, "frontiers", 10)
        self._plan_pub = self.create_publisher(Path, "plan", 10)
        self._cmd_pub = self.create_publisher(Twist, "cmd_vel", 10)
        self.create_timer(
            self.config.update_period_s, self._update, callback_group=MutuallyExclusiveCallbackGroup()
        )
        self.create_service(GetGeodesicDistances, "geodesic_distances", self._on_distances)
        self._graph_client = self.create_client(GetSceneGraph, "scene_graph/get")
        ActionServer(
            self,
            NavigateTo,
            "navigate",
            execute_callback=self._navigate,
            goal_callback=lambda _: GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup(),
        )

    # ------------------------------------------------------------------ mapping
    def _on_camera_info(self, msg: CameraInfo) -> None:
        try:
            self._intrinsics = intrinsics_from_msg(msg)
        except ValueError as exc:
            self.get_logger().error(str(exc), throttle_duration_sec=5.0)

    def _on_depth(self, msg: Image) -> None:
        if self._intrinsics is None:
            self.get_logger().warn("depth before camera_info: frame dropped", throttle_duration_sec=5.0)
            return
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        try:
            depth = depth_from_msg(msg, self.config.depth_scale)
            t_map_camera = self._lookup(msg.header.frame_id, stamp)
        except (ValueError, TransformError) as exc:
            self.get_logger().warn(f"depth frame dropped, map unchanged: {exc}", throttle_duration_sec=5.0)
            return
        with self._lock:
            self.map.integrate_depth(depth, self._intrinsics, t_map_camera)

    def _lookup(self, frame: str, stamp: float | None):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + self.config.tf_timeout_s
        while True:
            try:
                return self.tf.lookup(self.config.map_frame, frame, stamp)
            except TransformError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def robot_pose(self) -> Pose2D | None:
        """(x, y, yaw) of the base in the map, or None if TF does not know it."""
        try:
            t = self.tf.lookup(self.config.map_frame, self.config.base_frame)
        except TransformError:
            return None
        return (float(t.translation[0]), float(t.translation[1]), _yaw(t.rotation))

    def _update(self) -> None:
        with self._lock:
            states = self.map.states()
        free = traversable(states, self.spec, self.config.planner())
        pose = self.robot_pose()
        field = None
        if pose is not None:
            try:
                field = DistanceField(free, self.spec, pose[:2], self.config.planner())
            except PlanningError as exc:
                self.get_logger().warn(f"no distance field: {exc}", throttle_duration_sec=5.0)
        frontiers = self.extractor.extract(states, self.spec, field.distance if field else None)
        with self._lock:
            self._free, self.field, self.frontiers = free, field, frontiers
        self._map_pub.publish(self._grid_msg(states))
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

    def _grid_msg(self, states: np.ndarray) -> OccupancyGrid:
        msg = OccupancyGrid()
        msg.header.frame_id = self.config.map_frame
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.info.resolution = float(self.spec.resolution)
        msg.info.width, msg.info.height = self.spec.width, self.spec.height
        msg.info.origin.position.x, msg.info.origin.position.y = self.spec.origin_x, self.spec.origin_y
        msg.info.origin.orientation.w = 1.0
        msg.data = states.astype(np.int8).ravel().tolist()
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
        try:
            return self._drive(handle, result)
        finally:
            self._cmd_pub.publish(Twist())
            self._busy.release()

    def _goal_of(self, goal: NavigateTo.Goal) -> tuple[float, float]:
        """Goal position [m] in the map; GoalError with the result code if there is none."""
        if not goal.node_id:
            if goal.pose.header.frame_id not in ("", self.config.map_frame):
                frame = goal.pose.header.frame_id
                raise GoalError(
                    NavigateTo.Result.INVALID_GOAL, f"goal frame {frame!r} is not {self.config.map_frame!r}"
                )
            return (goal.pose.pose.position.x, goal.pose.pose.position.y)
        for frontier in self.frontiers:
            if frontier.frontier_id == goal.node_id:
                return frontier.goal
        return self._viewpoint_of(goal.node_id)

    def _viewpoint_of(self, node_id: str) -> tuple[float, float]:
        if not self._graph_client.wait_for_service(timeout_sec=2.0):
            raise GoalError(
                NavigateTo.Result.UNKNOWN_NODE, "scene graph server not available to resolve node ids"
            )
        response = wait_future(self._graph_client.call_async(GetSceneGraph.Request()), 10.0)
        if response is None:
            raise GoalError(
                NavigateTo.Result.UNKNOWN, f"the scene graph server did not answer for {node_id!r}"
            )
        node = next((n for n in response.update.nodes if n.id == node_id), None)
        if node is None:
            raise GoalError(NavigateTo.Result.UNKNOWN_NODE, f"unknown node {node_id!r}")
        centre = np.array([node.position.x, node.position.y, node.position.z])
        size = np.array([node.bbox.size.x, node.bbox.size.y, node.bbox.size.z])
        with self._lock:
            states = self.map.states()
            free, field = self._free, self.field
        c = self.config
        views = box_viewpoints(
            centre, size, states, free, self.spec, c.viewpoints(), field.distance if field else None,
            (c.obstacle_min_z, c.obstacle_max_z),
        )  # fmt: skip
        if not views:
            raise GoalError(NavigateTo.Result.NO_VALID_PATH, f"no reachable viewpoint around {node_id!r}")
        return views[0].xy

    def _drive(self, handle: ServerGoalHandle, result: NavigateTo.Result) -> NavigateTo.Result:
        goal: NavigateTo.Goal = handle.request
        try:
            target = self._goal_of(goal)
        except GoalError as exc:
            handle.abort()
            result.error_code, result.error_msg = exc.code, str(exc)
            return result
        params = self.config.follower()
        if goal.tolerance > 0:
            params = replace(params, goal_tolerance=float(goal.tolerance))
        follower = PathFollower(params)
        start, travelled, last = time.monotonic(), 0.0, None
        need_plan = True
        while True:
            if handle.is_cancel_requested:
                handle.canceled()
                result.error_code, result.error_msg = NavigateTo.Result.CANCELED, "canceled"
                break
            if time.monotonic() - start > self.config.navigate_timeout_s:
                handle.abort()
                result.error_code = NavigateTo.Result.TIMEOUT
                result.error_msg = f"not there after {self.config.navigate_timeout_s:.0f} s"
                break
            pose = self.robot_pose()
            if pose is None:
                time.sleep(self.config.control_period_s)
                continue
            if last is not None:
                step = math.hypot(pose[0] - last[0], pose[1] - last[1])
                need_plan |= step > POSE_JUMP_M
                travelled += step if step <= POSE_JUMP_M else 0.0
            last = pose
            if need_plan:
                failure = self._plan(follower, pose, target)
                if failure:
                    handle.abort()
                    result.error_code, result.error_msg = failure
                    break
                need_plan = False
            command = follower.command(pose, time.monotonic())
            if command.status == FollowStatus.ARRIVED:
                handle.succeed()
                break
            if command.status == FollowStatus.STUCK:
                handle.abort()
                result.error_code, result.error_msg = NavigateTo.Result.STUCK, command.note
                break
            need_plan = command.status == FollowStatus.REPLAN
            twist = Twist()
            twist.linear.x, twist.angular.z = command.linear, command.angular
            self._cmd_pub.publish(twist)
            feedback = NavigateTo.Feedback(recoveries=follower.recoveries)
            feedback.current_pose = self._pose_msg(pose)
            feedback.distance_remaining = float(math.hypot(target[0] - pose[0], target[1] - pose[1]))
            handle.publish_feedback(feedback)
            time.sleep(self.config.control_period_s)
        result.path_length = float(travelled)
        if last is not None:
            result.final_pose = self._pose_msg(last)
        return result

    def _plan(
        self, follower: PathFollower, pose: Pose2D, target: tuple[float, float]
    ) -> tuple[int, str] | None:
        with self._lock:
            states = self.map.states()
        free = traversable(states, self.spec, self.config.planner())
        try:
            path = DistanceField(free, self.spec, pose[:2], self.config.planner()).path_to(target)
        except PlanningError as exc:
            code = NavigateTo.Result.INVALID_GOAL if exc.outside_map else NavigateTo.Result.NO_VALID_PATH
            return code, str(exc)
        follower.set_path(path, keep_recoveries=True)
        msg = Path()
        msg.header.frame_id = self.config.map_frame
        msg.poses = [self._pose_msg((float(x), float(y), 0.0)) for x, y in path]
        self._plan_pub.publish(msg)
        self.get_logger().info(f"planned {path_length(path):.2f} m to ({target[0]:.2f}, {target[1]:.2f})")
        return None

    def _pose_msg(self, pose: Pose2D) -> PoseStamped:
        msg = PoseStamped()
        msg.header.frame_id = self.config.map_frame
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.pose.position.x, msg.pose.position.y = pose[0], pose[1]
        msg.pose.orientation.z, msg.pose.orientation.w = math.sin(pose[2] / 2), math.cos(pose[2] / 2)
        return msg
