"""A driver whose executor fell behind takes only the newest velocity command: with a queue it
played old commands after the planner's stop, and the simulated base rolled on 0.1 m at
0.13-0.23 m/s after the planner had stopped it at its goal (a demo run; a container was then
opened from there)."""

from __future__ import annotations

import importlib

import pytest
import rclpy
from geometry_msgs.msg import Twist
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, ReliabilityPolicy

from sg_search.ros.qos import CMD_VEL_QOS

pytestmark = pytest.mark.ros


def test_a_driver_that_fell_behind_gets_only_the_stop(ros_node: Node) -> None:
    driver = Node("late_driver", context=ros_node.context)  # its executor does not spin yet
    received: list[float] = []
    driver.create_subscription(Twist, "cmd_vel_qos_test", lambda m: received.append(m.linear.x), CMD_VEL_QOS)
    planner = ros_node.create_publisher(Twist, "cmd_vel_qos_test", CMD_VEL_QOS)
    executor = SingleThreadedExecutor(context=ros_node.context)
    executor.add_node(driver)
    try:
        for _ in range(200):  # discovery: at most 10 s
            if planner.get_subscription_count():
                break
            executor.spin_once(timeout_sec=0.05)
        assert planner.get_subscription_count() == 1
        for speed in (0.3, 0.23, 0.2, 0.17, 0.13, 0.0):  # the planner slows down and stops
            twist = Twist()
            twist.linear.x = speed
            planner.publish(twist)
        assert planner.wait_for_all_acked(rclpy.duration.Duration(seconds=10))  # all in the driver's queue
        for _ in range(5):  # a queue would hand over one message per spin
            executor.spin_once(timeout_sec=0.1)
        assert received == [0.0]
    finally:
        executor.shutdown()
        driver.destroy_node()


@pytest.mark.parametrize(
    ("module", "node_class", "topics"),
    [
        ("sim_bridge", "SimBridge", {"/cmd_vel"}),
        ("hsr_driver", "HsrDriver", {"/cmd_vel", "/base_cmd_vel"}),
        ("fake_hsr_bridge", "FakeHsr", {"/omni_base_controller/cmd_vel"}),
        ("frontier_planner", "FrontierPlanner", {"/cmd_vel"}),
        ("affordance_executor", "AffordanceExecutorNode", {"/cmd_vel"}),
    ],
)
def test_every_node_that_drives_or_commands_the_base_keeps_only_the_newest_command(
    ros_node: Node, module: str, node_class: str, topics: set[str]
) -> None:
    """Each driver and commander as the launch files start it (habitat_bridge needs habitat-sim,
    which cannot be installed here; it uses the same profile)."""
    cls = getattr(importlib.import_module(f"sg_search.ros.{module}"), node_class)
    node = cls(context=ros_node.context)
    try:
        ends = [e for e in (*node.subscriptions, *node.publishers) if e.topic_name in topics]
        assert {e.topic_name for e in ends} == topics
        for end in ends:
            qos = end.qos_profile
            assert (qos.history, qos.depth) == (HistoryPolicy.KEEP_LAST, 1), (end.topic_name, qos)
            assert qos.reliability == ReliabilityPolicy.RELIABLE, end.topic_name
    finally:
        node.destroy_node()
