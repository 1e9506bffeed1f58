"""A driver whose executor fell behind takes only the newest velocity command: with a queue it
played old commands after the planner's stop, and the simulated base rolled on 0.1 m at
0.13-0.23 m/s after the planner had stopped it at its goal (a demo run; a container was then
opened from there)."""

from __future__ import annotations

import pytest
import rclpy
from geometry_msgs.msg import Twist
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

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
