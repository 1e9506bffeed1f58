"""A search's first action over DDS: the affordance executor turns the simulated base a full
turn in place for LOOK_AROUND (no node), as the in-process world turns twelve 30-degree
actions; without it the first map is one camera's view, and the in-process benchmark lost 5 of
28 val searches (docs/BENCHMARKS.md, session 42). A search's last look around in a room turns
with the head aimed over the room (the simulator's ``look_at``), not pitched at the floor."""

from __future__ import annotations

import itertools
import math
import threading
from typing import Any

import numpy as np
import pytest
import rclpy
from conftest import wait_for
from nav_msgs.msg import Odometry
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from test_goal_status import execute_goal
from test_stack_over_dds import SCENE, STARTUP_S
from tf2_msgs.msg import TFMessage

from sg_search.geometry.transforms import quat_to_matrix
from sg_search.reasoning.base import SkillAffordance
from sg_search.ros.affordance_executor import AffordanceExecutorNode
from sg_search.search.executor import ExecutorError

pytestmark = pytest.mark.ros


def _yaw(message: Odometry) -> float:
    q = message.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def test_look_around_turns_the_base_a_full_turn_where_it_stands(start_node: Any, ros_node: Node) -> None:
    start_node("sim_bridge", "-p", "width:=96", "-p", "height:=72", "-p", "rate_hz:=20.0")
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node("affordance_executor", "-p", "use_sim_time:=true", "-p", "observe_timeout_s:=1.0")
    odom: list[Odometry] = []
    ros_node.create_subscription(Odometry, "odom", odom.append, 50)
    # the base's pose before the goal: under load the subscription can match after the turn began
    assert wait_for(lambda: bool(odom), STARTUP_S), "no odometry from the simulator"
    before = len(odom) - 1

    result = execute_goal(ros_node, "", SkillAffordance.LOOK_AROUND, 120.0)

    assert result.error_code == ExecutorError.NONE and result.path_length == 0.0, result
    yaws = [_yaw(m) for m in odom[before:]]
    turned = sum(math.remainder(b - a, math.tau) for a, b in itertools.pairwise(yaws))
    assert turned >= math.tau - 0.3, f"turned {math.degrees(turned):.0f} degrees, not a full turn"
    start, end = odom[before].pose.pose.position, odom[-1].pose.pose.position
    assert math.hypot(end.x - start.x, end.y - start.y) < 0.05  # in place


def test_a_level_look_around_turns_with_the_head_aimed_over_the_room(start_node: Any, ros_node: Node) -> None:
    """The executor's skill itself (the core drives into the room first: tests/search): the
    plain turn keeps the camera pitched at the floor, the level one raises and levels it."""
    start_node("sim_bridge", "-p", "width:=96", "-p", "height:=72", "-p", "rate_hz:=20.0")
    camera: list[tuple[float, float]] = []  # (pitch down [rad], height [m]) over the base, from /tf

    def on_tf(message: TFMessage) -> None:
        for t in message.transforms:
            if t.child_frame_id == "camera_optical":
                q = t.transform.rotation
                forward = quat_to_matrix(np.array([q.x, q.y, q.z, q.w]))[:, 2]  # the optical axis
                camera.append((-math.asin(forward[2]), t.transform.translation.z))

    ros_node.create_subscription(TFMessage, "/tf", on_tf, 100)
    context = rclpy.Context()
    rclpy.init(context=context)
    overrides = [Parameter("use_sim_time", value=True), Parameter("observe_timeout_s", value=1.0)]
    executor = AffordanceExecutorNode(context=context, parameter_overrides=overrides)
    spinner = MultiThreadedExecutor(context=context)
    spinner.add_node(executor)
    thread = threading.Thread(target=spinner.spin, daemon=True)
    thread.start()
    try:
        # the simulator's look_at, as the executor sees it (else it turns with the head as it is)
        assert wait_for(lambda: bool(camera) and executor._look_action.server_is_ready(), STARTUP_S)
        start = len(camera)
        assert executor.look_around().success
        plain = camera[start:]
        assert executor.look_around(level=True).success
        level = camera[start + len(plain) :]
    finally:
        spinner.shutdown()
        executor.destroy_node()
        rclpy.shutdown(context=context)
        thread.join(timeout=5)
    assert plain and all(abs(pitch - 0.25) < 0.02 for pitch, _ in plain)  # camera_tilt_rad
    # aimed at 1.2 m, 3 m ahead, from the head raised 0.4 m (head_lift_max_m): 0.03 rad down
    turning = level[len(level) // 4 :]
    assert turning and all(abs(pitch) < 0.1 and height > 1.2 for pitch, height in turning), turning[:5]
