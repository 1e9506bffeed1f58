"""A search's first action over DDS: the affordance executor turns the simulated base a full
turn in place for LOOK_AROUND (no node), as the in-process world turns twelve 30-degree
actions; without it the first map is one camera's view, and the in-process benchmark lost 5 of
28 val searches (docs/BENCHMARKS.md, session 42)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance
from test_stack_over_dds import SCENE, STARTUP_S

from sg_search.reasoning.base import SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.futures import wait_future
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
    client = ActionClient(ros_node, ExecuteAffordance, "execute_affordance")
    assert client.wait_for_server(timeout_sec=STARTUP_S), "the affordance executor never came up"
    goal = ExecuteAffordance.Goal(node_id="", affordance=int(SkillAffordance.LOOK_AROUND))

    handle = client.send_goal_with_resend(goal, timeout_s=20.0)
    assert handle is not None and handle.accepted
    response = wait_future(handle.get_result_async(), 120.0)

    assert response is not None and response.result.error_code == ExecutorError.NONE, response
    assert response.result.path_length == 0.0
    moved = [m for m in odom if abs(m.twist.twist.angular.z) > 1e-6]
    assert moved, "the base never turned"
    yaws = [_yaw(m) for m in odom[odom.index(moved[0]) - 1 :]]
    turned = sum(math.remainder(b - a, math.tau) for a, b in itertools.pairwise(yaws))
    assert turned >= math.tau - 0.3, f"turned {math.degrees(turned):.0f} degrees, not a full turn"
    start, end = odom[odom.index(moved[0]) - 1].pose.pose.position, odom[-1].pose.pose.position
    assert math.hypot(end.x - start.x, end.y - start.y) < 0.05  # in place
