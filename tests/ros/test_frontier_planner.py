"""frontier_planner in its own process, fed over DDS by a kinematic base double that renders
depth of an empty 6 m x 4 m room (a stand-in for the simulator bridge, which has no
MuJoCo scene yet): the map, frontiers, geodesic distances and the navigate action."""

from __future__ import annotations

import math
import re
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest
from action_msgs.msg import GoalStatus
from box_room import HEIGHT, INTRINSICS, WIDTH, camera_pose, render_box_room
from conftest import wait_for
from geometry_msgs.msg import Point, Twist
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.action import NavigateTo
from sg_search_interfaces.msg import FrontierArray
from sg_search_interfaces.srv import GetGeodesicDistances, GetSceneGraph
from test_stack_over_dds import call, graph_io, observe

from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_yaw
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.ros.action_client import ActionClient
from sg_search.ros.futures import wait_future
from sg_search.ros.images import depth_to_msg
from sg_search.ros.processes import NodeProcess
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros
CAMERA_HEIGHT = 0.9
GRID = (
    "-p",
    "width:=160",
    "-p",
    "height:=120",
    "-p",
    "origin_x:=-1.0",
    "-p",
    "origin_y:=-1.0",
    "-p",
    "update_period_s:=0.3",
    "-p",
    "robot_radius:=0.2",
)


class KinematicBaseDouble:
    """Integrates cmd_vel as a unicycle, publishes TF and depth of the box room (test double).
    ``pillar``: (x, y, radius) [m] of an obstacle the depth camera does not show (a glass
    pillar): the base does not move into it."""

    def __init__(
        self, node: Node, x: float, y: float, yaw: float, pillar: tuple[float, float, float] | None = None
    ) -> None:
        self.node, self.pose, self.cmd, self.pillar = node, [x, y, yaw], Twist(), pillar
        self.tf = TfBroadcaster(node)
        self.depth = node.create_publisher(Image, "depth", 10)
        self.info = node.create_publisher(CameraInfo, "camera_info", 10)
        node.create_subscription(Twist, "cmd_vel", self._on_cmd, 10)
        # optical frame: z forward, x right, y down, relative to base_link
        optical = camera_pose(0.0, 0.0, 0.0, CAMERA_HEIGHT)
        self.tf.send_static(
            [
                transform_to_msg("map", "odom", 0.0, Transform()),
                transform_to_msg("base_link", "camera", 0.0, optical),
            ]
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _on_cmd(self, msg: Twist) -> None:
        self.cmd = msg

    def _run(self) -> None:
        dt, frame = 0.05, 0
        while not self._stop.is_set():
            x, y, yaw = self.pose
            v, w = self.cmd.linear.x, self.cmd.angular.z
            ahead = (x + v * math.cos(yaw) * dt, y + v * math.sin(yaw) * dt)
            if self.pillar is not None and math.dist(ahead, self.pillar[:2]) < self.pillar[2] + 0.2:
                ahead = (x, y)  # the base's 0.2 m radius touches the pillar: it does not move
            self.pose = [*ahead, yaw + w * dt]
            now = self.node.get_clock().now()
            stamp = now.nanoseconds * 1e-9
            base = Transform(np.array([self.pose[0], self.pose[1], 0.0]), quat_from_yaw(self.pose[2]))
            self.tf.send([transform_to_msg("odom", "base_link", stamp, base)])
            if frame % 4 == 0:
                depth = render_box_room(camera_pose(self.pose[0], self.pose[1], self.pose[2], CAMERA_HEIGHT))
                image = depth_to_msg(depth, "camera")
                image.header.stamp = now.to_msg()
                info = CameraInfo(width=WIDTH, height=HEIGHT)
                info.header = image.header
                info.k = [INTRINSICS.fx, 0.0, INTRINSICS.cx, 0.0, INTRINSICS.fy, INTRINSICS.cy, 0.0, 0.0, 1.0]
                self.info.publish(info)
                self.depth.publish(image)
            frame += 1
            time.sleep(dt)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)


@pytest.fixture
def base(ros_node: Node):  # type: ignore[no-untyped-def]
    double = KinematicBaseDouble(ros_node, 1.0, 2.0, 0.0)
    yield double
    double.stop()


def _send_pose(client: ActionClient, x: float, y: float) -> Any:
    """A navigate goal to (x, y) [m] in ``map``, accepted: its handle."""
    goal = NavigateTo.Goal()
    goal.pose.header.frame_id = "map"
    goal.pose.pose.position.x, goal.pose.pose.position.y = x, y
    handle = client.send_goal_with_resend(goal, timeout_s=10.0)
    assert handle is not None and handle.accepted
    return handle


def test_map_frontiers_and_distances(start_node: Any, ros_node: Node, base: KinematicBaseDouble) -> None:
    start_node("frontier_planner", *GRID)
    maps: list[OccupancyGrid] = []
    frontiers: list[FrontierArray] = []
    qos = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    ros_node.create_subscription(OccupancyGrid, "map", maps.append, qos)
    ros_node.create_subscription(FrontierArray, "frontiers", frontiers.append, 10)

    def mapped() -> bool:
        return (
            bool(maps)
            and (np.array(maps[-1].data) == 0).sum() > 500
            and bool(frontiers and frontiers[-1].frontiers)
        )

    assert wait_for(mapped, timeout=30), "no map with free space and frontiers"
    grid = np.array(maps[-1].data, dtype=np.int16).reshape(120, 160)
    wall = (int((2.0 + 1.0) / 0.05), int((6.0 + 1.0) / 0.05))  # (row, col) of (6.0, 2.0)
    assert grid[wall] == 100 and grid[60, 80] == 0 and maps[-1].header.frame_id == "map"
    response = call(
        ros_node,
        GetGeodesicDistances,
        "geodesic_distances",
        GetGeodesicDistances.Request(points=[Point(x=3.0, y=2.0), Point(x=40.0, y=2.0)]),
    )
    assert response.success
    assert response.distances[0] == pytest.approx(2.0, abs=0.1) and response.distances[1] == -1.0


def test_navigate_to_a_pose_and_refuse_bad_goals(
    start_node: Any, ros_node: Node, base: KinematicBaseDouble
) -> None:
    start_node("frontier_planner", *GRID)
    client = ActionClient(ros_node, NavigateTo, "navigate")
    assert client.wait_for_server(timeout_sec=20)
    time.sleep(2.0)  # a few depth frames: the space ahead becomes known

    def send(x: float, y: float) -> Any:
        return wait_future(_send_pose(client, x, y).get_result_async(), 90.0)

    outside = send(40.0, 2.0)
    assert (
        outside.result.error_code == NavigateTo.Result.INVALID_GOAL and "outside" in outside.result.error_msg
    )
    arrived = send(4.5, 2.5)
    assert arrived.result.error_code == NavigateTo.Result.NONE, arrived.result.error_msg
    assert math.hypot(base.pose[0] - 4.5, base.pose[1] - 2.5) < 0.3
    assert arrived.result.path_length == pytest.approx(math.hypot(3.5, 0.5), rel=0.3)


def test_a_base_blocked_by_what_the_camera_misses_marks_it_and_drives_around(
    start_node: Any, ros_node: Node
) -> None:
    double = KinematicBaseDouble(ros_node, 1.0, 2.0, 0.0, pillar=(2.6, 2.0, 0.1))
    try:
        start_node("frontier_planner", *GRID, "-p", "stall_window_s:=1.0")
        client = ActionClient(ros_node, NavigateTo, "navigate")
        assert client.wait_for_server(timeout_sec=20)
        time.sleep(2.0)  # a few depth frames: the space ahead becomes known
        handle = _send_pose(client, 4.5, 2.0)  # straight through the pillar
        result = wait_future(handle.get_result_async(), 120.0)
        assert result is not None
        assert result.result.error_code == NavigateTo.Result.NONE, result.result.error_msg
        assert math.hypot(double.pose[0] - 4.5, double.pose[1] - 2.0) < 0.3
    finally:
        double.stop()


def test_a_drive_to_a_frontier_ends_once_the_map_sees_beyond_it(
    start_node: Any, ros_node: Node, base: KinematicBaseDouble
) -> None:
    """The goal of a frontier behind the base: turning towards it shows the room beyond, so the
    navigation ends (NONE) before the base gets there and the frontier is gone."""
    start_node("frontier_planner", *GRID)
    frontiers: list[FrontierArray] = []
    ros_node.create_subscription(FrontierArray, "frontiers", frontiers.append, 10)
    client = ActionClient(ros_node, NavigateTo, "navigate")
    assert client.wait_for_server(timeout_sec=20)
    assert wait_for(lambda: bool(frontiers and frontiers[-1].frontiers), timeout=30), "no frontiers"
    far = max(frontiers[-1].frontiers, key=lambda f: math.dist((f.goal.x, f.goal.y), base.pose[:2]))
    goal = NavigateTo.Goal(node_id=far.id)
    handle = client.send_goal_with_resend(goal, timeout_s=10.0)
    assert handle is not None and handle.accepted
    response = wait_future(handle.get_result_async(), 90.0)
    assert response.result.error_code == NavigateTo.Result.NONE, response.result.error_msg
    assert "saw beyond" in response.result.error_msg
    assert math.dist(base.pose[:2], (far.goal.x, far.goal.y)) > 0.3
    latest = frontiers[-1].frontiers
    assert not any(math.dist((f.goal.x, f.goal.y), (far.goal.x, far.goal.y)) <= 1.0 for f in latest)


def _mug_and_planner(
    start_node: Any, ros_node: Node, at: tuple[float, float, float]
) -> tuple[ActionClient, NodeProcess]:
    """The planner and the graph server running, a mug perception reported ``at`` [m] in the
    graph, the planner's map built from the base's depth (so it knows where the base is: a goal
    before the first transform is refused, "the base's pose is not known"): a client of the
    planner's navigate action, its server up, and the planner's process."""
    planner = start_node("frontier_planner", *GRID)
    start_node("scene_graph_server")
    frontiers: list[FrontierArray] = []
    ros_node.create_subscription(FrontierArray, "frontiers", frontiers.append, 10)
    assert wait_for(lambda: bool(frontiers and frontiers[-1].frontiers), timeout=30), "no map from depth"
    _, observations = graph_io(ros_node)
    assert wait_for(lambda: observations.get_subscription_count() > 0)
    observe(ros_node, observations, 1, ObjectInstance("mug_1", "mug", 0.9, at))

    def known() -> bool:
        response = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request(since_sequence=0))
        return any(n.id == "mug_1" for n in response.update.nodes)

    assert wait_for(known, timeout=20), "the graph has no mug"
    client = ActionClient(ros_node, NavigateTo, "navigate")
    assert client.wait_for_server(timeout_sec=20)
    return client, planner


def _within_reach_of_the_mug(client: ActionClient, timeout_s: float) -> NavigateTo.Result:
    handle = client.send_goal_with_resend(NavigateTo.Goal(node_id="mug_1", within_reach=True), timeout_s=10.0)
    assert handle is not None and handle.accepted
    result: NavigateTo.Result = wait_future(handle.get_result_async(), timeout_s).result
    assert result.error_code == NavigateTo.Result.NONE, result.error_msg
    return result


def _assert_at_a_viewpoint_of_the_mug(base_xy: list[float]) -> float:
    """The base arrived at a viewpoint of the mug at (4, 2): within the tolerance and a cell of
    a reach circle (the largest is the edge, not a margin); that bound [m] back."""
    config = FrontierPlannerConfig()
    reach = max(config.reach_radii) + config.reach_tolerance_m + config.resolution
    ended = math.dist(base_xy, (4.0, 2.0))
    assert ended <= reach, f"the base ended {ended:.3f} m from the mug, beyond {reach:.2f} m"
    return reach


def test_an_object_the_base_sees_within_reach_is_reached_where_it_stands(
    start_node: Any, ros_node: Node, base: KinematicBaseDouble
) -> None:
    """A mug perception reported 0.5 m ahead in the newest frame: a navigation within reach of it
    ends where the base stands (a search ends so, the mug in view), not at another viewpoint."""
    client, _ = _mug_and_planner(start_node, ros_node, (1.5, 2.0, 0.5))
    time.sleep(2.0)  # a few depth frames: the space around the mug becomes known
    before = list(base.pose)
    result = _within_reach_of_the_mug(client, 90.0)
    assert result.path_length < 0.05 and math.dist(base.pose[:2], before[:2]) < 0.05


def test_an_object_across_the_room_is_approached_to_within_reach(
    start_node: Any, ros_node: Node, base: KinematicBaseDouble
) -> None:
    """A mug 3 m ahead: the navigation within reach of it (the approach the in-process world runs
    too) drives to one of its viewpoints and ends there, within reach, with the metres driven."""
    client, _ = _mug_and_planner(start_node, ros_node, (4.0, 2.0, 0.5))
    result = _within_reach_of_the_mug(client, 120.0)
    reach = _assert_at_a_viewpoint_of_the_mug(base.pose[:2])
    assert result.path_length >= 3.0 - reach - 0.1


def test_an_approach_whose_viewpoint_the_base_cannot_reach_tries_another(
    start_node: Any, ros_node: Node
) -> None:
    """A glass pillar (the camera does not see it) stands on the mug's nearest viewpoint, 0.8 m
    before it on the base's line: the drive there gets stuck against it, and the approach drives
    to another viewpoint (as the in-process world does), reporting the metres of both tries.
    With one try the navigation fails STUCK, 1.1 m from the mug (checked). The pillar, once
    bumped, stays marked while the base drives round it (``bump_memory_s``), so the base runs
    into its face once: when the marks lasted 50 depth frames (10 s at this camera's 5 Hz) they
    were gone before the base was round, it ran into the pillar again, and the third viewpoint's
    drive was at times left with no recovery (session 84)."""
    double = KinematicBaseDouble(ros_node, 1.0, 2.0, 0.0, pillar=(3.2, 2.0, 0.1))
    try:
        client, planner = _mug_and_planner(start_node, ros_node, (4.0, 2.0, 0.5))
        result = _within_reach_of_the_mug(client, 180.0)
        _assert_at_a_viewpoint_of_the_mug(double.pose[:2])
        # to the pillar (1.9 m less the base's and the pillar's radii), then round it
        assert result.path_length >= 1.6 + math.dist((2.9, 2.0), double.pose[:2]) - 0.1
        bumps = re.findall(r"cell\(s\) about \(([-\d.]+), ([-\d.]+)\) marked", planner.output_so_far())
        marked = [(float(x), float(y)) for x, y in bumps]
        on_its_face = [xy for xy in marked if math.dist(xy, (3.2, 2.0)) <= 0.1]
        assert len(on_its_face) == 1, f"marks of each bump: {marked}"
    finally:
        double.stop()


SENDER = """
import rclpy
from rclpy.node import Node
from sg_search.ros.liveliness import announce_alive
rclpy.init()
node = Node("sender_probe")
alive = announce_alive(node)
while alive.get_subscription_count() == 0:  # the planner's watch has matched this sender
    rclpy.spin_once(node, timeout_sec=0.05)
print("watched", flush=True)
rclpy.spin(node)
"""


def test_a_drive_whose_sender_dies_is_aborted_and_the_next_goal_is_driven(
    start_node: Any, ros_node: Node, base: KinematicBaseDouble
) -> None:
    """The planner watches its ``goal_sender``. When that process dies mid-drive, the base is
    stopped and the goal ends ABORTED, naming the dead sender. Before session 80 the node called
    ``canceled()`` with no cancel requested: rclpy refused the transition and the execute
    callback raised. Once the sender is back, the planner drives its next goal."""
    planner = start_node("frontier_planner", *GRID, "-p", "goal_sender:=sender_probe")
    senders: list[subprocess.Popen[str]] = []

    def start_sender() -> None:
        senders.append(subprocess.Popen([sys.executable, "-c", SENDER], stdout=subprocess.PIPE, text=True))
        assert senders[-1].stdout is not None and senders[-1].stdout.readline().strip() == "watched"

    try:
        start_sender()
        frontiers: list[FrontierArray] = []
        ros_node.create_subscription(FrontierArray, "frontiers", frontiers.append, 10)
        client = ActionClient(ros_node, NavigateTo, "navigate")
        assert client.wait_for_server(timeout_sec=20)
        assert wait_for(lambda: bool(frontiers and frontiers[-1].frontiers), timeout=30), "no map from depth"
        far = _send_pose(client, 4.5, 2.5)
        assert wait_for(lambda: math.hypot(base.pose[0] - 1.0, base.pose[1] - 2.0) > 0.2, timeout=30)
        senders[0].kill()
        ended = wait_future(far.get_result_async(), 30.0)
        assert ended is not None and ended.status == GoalStatus.STATUS_ABORTED
        assert "which sent the goal, died" in ended.result.error_msg
        assert "Traceback" not in planner.output_so_far(), planner.output_so_far()[-2000:]
        start_sender()  # a restarted executor
        next_one = wait_future(_send_pose(client, 4.5, 2.5).get_result_async(), 90.0)
        assert next_one is not None and next_one.result.error_code == NavigateTo.Result.NONE, next_one
    finally:
        for sender in senders:
            sender.kill()
            sender.wait(10)
