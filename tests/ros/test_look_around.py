"""A search's first action over DDS: the affordance executor turns the simulated base a full
turn in place for LOOK_AROUND (no node), as the in-process world turns twelve 30-degree
actions; without it the first map is one camera's view, and the in-process benchmark lost 5 of
28 val searches (docs/BENCHMARKS.md, session 42)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from conftest import wait_for
from nav_msgs.msg import Odometry
from rclpy.node import Node
from test_goal_status import execute_goal
from test_stack_over_dds import SCENE, STARTUP_S

from sg_search.reasoning.base import SkillAffordance
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
