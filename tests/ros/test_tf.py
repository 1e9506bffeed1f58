"""/tf_static crosses processes with the repo's own tf2_msgs and fills the core buffer."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import wait_for
from rclpy.node import Node

from sg_search.geometry import Transform, TransformError
from sg_search.ros.tf import (
    STATIC_REPUBLISH_S,
    TfBroadcaster,
    TfListener,
    create_transform_source,
    transform_to_msg,
)

pytestmark = pytest.mark.ros

PUBLISHER = """
import time, numpy as np, rclpy
from rclpy.node import Node
from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_yaw
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
rclpy.init()
node = Node("tf_publisher")
tf = TfBroadcaster(node)
tf.send_static([transform_to_msg("base_link", "camera", 0.0, Transform([0.1, 0.0, 0.9]))])
for i in range(200):
    now = 1000.0 + i * 0.05
    tf.send([transform_to_msg("odom", "base_link", now, Transform([i * 0.01, 0.0, 0.0], quat_from_yaw(0.0)))])
    rclpy.spin_once(node, timeout_sec=0.05)
"""


def test_static_and_dynamic_transforms_across_processes(ros_node: Node) -> None:
    listener = TfListener(ros_node)
    proc = subprocess.Popen([sys.executable, "-c", PUBLISHER])
    try:
        assert wait_for(lambda: {"odom", "base_link", "camera"} <= listener.buffer.frames(), timeout=20)

        def resolved() -> bool:
            try:
                listener.lookup("odom", "camera")
                return True
            except TransformError:
                return False

        assert wait_for(resolved)
        t = listener.lookup("odom", "camera")
        assert t.translation[2] == pytest.approx(0.9)
        assert t.translation[0] >= 0.1
    finally:
        proc.kill()
        proc.wait()


def test_pip_only_install_falls_back_to_own_listener(ros_node: Node) -> None:
    try:
        import tf2_ros  # noqa: F401
    except ImportError:
        assert isinstance(create_transform_source(ros_node), TfListener)
    else:
        pytest.skip("tf2_ros present: the distro path is used")


def test_static_transforms_are_re_sent_for_a_reader_that_missed_the_latched_sample(ros_node: Node) -> None:
    """A VOLATILE reader never gets the latched sample; it stands for a late joiner Fast DDS
    failed to serve (eProsima/Fast-DDS#3822) and must still get the transform by the re-send."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    broadcaster = TfBroadcaster(ros_node)
    broadcaster.send_static([transform_to_msg("map", "odom", 0.0, Transform())])
    received: list[TFMessage] = []
    volatile = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    ros_node.create_subscription(TFMessage, "/tf_static", received.append, volatile)
    assert wait_for(lambda: bool(received), timeout=4 * STATIC_REPUBLISH_S)
    assert [(t.header.frame_id, t.child_frame_id) for t in received[-1].transforms] == [("map", "odom")]
