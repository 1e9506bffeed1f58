"""sim_bridge in its own process, over DDS: sensor topics, simulated time, cmd_vel, skills."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
from conftest import wait_for
from geometry_msgs.msg import Point, Twist
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.srv import SetContainer
from std_msgs.msg import String
from std_srvs.srv import Trigger
from test_stack_over_dds import call

SENSOR = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)


def test_bridge_publishes_a_consistent_world_and_obeys(start_node: Any, ros_node: Node) -> None:
    start_node(
        "sim_bridge",
        "-p", "width:=96", "-p", "height:=72", "-p", "rate_hz:=20.0",
        "-p", "start_room:=bathroom_0",
        "-p", "target_query:=milk carton", "-p", "target_relation:=inside",
        "-p", "target_holder:=kitchen_0/fridge_0",
    )  # fmt: skip
    got: dict[str, list[Any]] = {
        k: [] for k in ("rgb", "depth", "instances", "camera_info", "odom", "clock", "table")
    }
    ros_node.create_subscription(Image, "rgb", got["rgb"].append, SENSOR)
    ros_node.create_subscription(Image, "depth", got["depth"].append, SENSOR)
    ros_node.create_subscription(Image, "instances", got["instances"].append, SENSOR)
    ros_node.create_subscription(CameraInfo, "camera_info", got["camera_info"].append, SENSOR)
    ros_node.create_subscription(Odometry, "odom", got["odom"].append, 10)
    ros_node.create_subscription(Clock, "/clock", got["clock"].append, 10)
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    ros_node.create_subscription(String, "instance_categories", got["table"].append, latched)
    assert wait_for(lambda: all(got[k] for k in got), timeout=60.0), {k: len(v) for k, v in got.items()}

    rgb, depth, info = got["rgb"][-1], got["depth"][-1], got["camera_info"][-1]
    assert (rgb.width, rgb.height, rgb.encoding, len(rgb.data)) == (96, 72, "rgb8", 96 * 72 * 3)
    assert depth.encoding == "32FC1" and got["instances"][-1].encoding == "32SC1"
    assert info.k[2] == 47.5 and info.k[5] == 35.5 and info.header.frame_id == "camera_optical"
    table = json.loads(got["table"][-1].data)
    assert ["kitchen_0/fridge_0", "fridge"] in table.values() and ["target", "milk carton"] in table.values()
    times = [c.clock.sec + c.clock.nanosec * 1e-9 for c in got["clock"]]
    steps = [(b - a) / 0.05 for a, b in itertools.pairwise(times)]
    assert all(s >= 1 - 1e-6 and abs(s - round(s)) < 1e-6 for s in steps)  # whole ticks of 1/rate

    start = got["odom"][-1].pose.pose.position
    drive = ros_node.create_publisher(Twist, "cmd_vel", 10)
    command = Twist()
    command.angular.z = 0.8  # turn in place: never blocked

    def turned() -> bool:
        drive.publish(command)
        q = got["odom"][-1].pose.pose.orientation
        return abs(q.z) > 0.3

    assert wait_for(turned, timeout=30.0), "the base did not turn under cmd_vel"
    now = got["odom"][-1].pose.pose.position
    assert abs(now.x - start.x) < 1e-6 and abs(now.y - start.y) < 1e-6

    far = call(ros_node, SetContainer, "open", SetContainer.Request(node_id="kitchen_0/fridge_0"))
    assert not far.success and "reach is 1.00 m" in far.message
    # out of reach is REFUSED, not WRONG_SIDE: the executor does not try another side for it
    assert far.error_code == SetContainer.Response.REFUSED
    sofa = call(ros_node, SetContainer, "close", SetContainer.Request(node_id="living_room_0/sofa_0"))
    assert not sofa.success and "not openable" in sofa.message
    reset = call(ros_node, Trigger, "reset_episode", Trigger.Request())
    assert reset.success
    got["odom"].clear()
    assert wait_for(lambda: bool(got["odom"]) and abs(got["odom"][-1].pose.pose.orientation.z) < 1e-9)


def test_frontier_planner_maps_the_simulated_house(start_node: Any, ros_node: Node) -> None:
    start_node("sim_bridge", "-p", "width:=160", "-p", "height:=120", "-p", "rate_hz:=10.0")
    start_node("frontier_planner", "-p", "use_sim_time:=true")
    maps: list[OccupancyGrid] = []
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    ros_node.create_subscription(OccupancyGrid, "map", maps.append, latched)

    def mapped() -> bool:
        if not maps:
            return False
        cells = np.frombuffer(bytes(np.array(maps[-1].data, dtype=np.int8)), dtype=np.int8)
        return int(np.count_nonzero(cells == 0)) > 300 and int(np.count_nonzero(cells == 100)) > 30

    assert wait_for(mapped, timeout=90.0), "the planner built no map from the simulated depth"
    assert maps[-1].header.frame_id == "map"


def test_a_close_goes_to_what_the_same_node_opened(start_node: Any, ros_node: Node) -> None:
    """Rs_int's bedroom and kitchen cabinets stand back to back across a wall. The base starts
    before the bedroom's; a perceived cabinet opened there whose point then moved onto the
    kitchen's (fused with it) closes the bedroom's, not the kitchen's from behind the wall."""
    start_node("sim_bridge", "-p", "width:=64", "-p", "height:=48", "-p", "start_room:=bedroom_0")
    bedroom, kitchen = Point(x=4.65, y=3.3, z=0.45), Point(x=3.9, y=3.9, z=0.45)
    opened = call(ros_node, SetContainer, "open", SetContainer.Request(node_id="obj_15", point=bedroom))
    assert opened.success and opened.message == "bedroom_0/bottom_cabinet_0 opened", opened.message
    for _ in range(2):  # a retried close too
        closed = call(ros_node, SetContainer, "close", SetContainer.Request(node_id="obj_15", point=kitchen))
        assert closed.success and closed.message == "bedroom_0/bottom_cabinet_0 closed", closed.message
    other = call(ros_node, SetContainer, "close", SetContainer.Request(node_id="obj_16", point=kitchen))
    assert not other.success and "'kitchen_0/bottom_cabinet_1' is" in other.message  # by its point
