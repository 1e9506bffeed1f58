"""The MCAP recorder over DDS: the simulator's odometry lands in a ROS 2 MCAP file that a
reader decodes with the recorded schema."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from mcap.reader import make_reader
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message

from sg_search.ros.recorder import SEPARATOR, message_definition

pytestmark = pytest.mark.ros


def test_message_definitions_carry_their_dependencies() -> None:
    text = message_definition("nav_msgs/msg/Odometry")
    own = text.split(SEPARATOR)[0]
    assert "PoseWithCovariance pose" in own and "MSG:" not in own
    for dep in ("MSG: std_msgs/Header", "MSG: geometry_msgs/PoseWithCovariance", "MSG: geometry_msgs/Point"):
        assert text.count(dep) == 1, dep
    with pytest.raises(FileNotFoundError, match="no_such_pkg"):
        message_definition("no_such_pkg/msg/Nothing")


def test_recorder_writes_a_readable_ros2_mcap(start_node: Any, tmp_path: Path) -> None:
    output = tmp_path / "run.mcap"
    start_node("sim_bridge", "-p", "width:=64", "-p", "height:=48", "-p", "rate_hz:=10.0")
    recorder = start_node(
        "recorder", "-p", f"output:={output}", "-p", "topics:=['odom']", "-p", "throttled_topics:=['rgb']"
    )
    time.sleep(15.0)
    log = recorder.stop()  # SIGINT: the node finishes the file (summary, index)
    with output.open("rb") as stream:
        reader = make_reader(stream)
        summary = reader.get_summary()
        assert summary is not None, log
        topics = {c.topic: summary.schemas[c.schema_id] for c in summary.channels.values()}
        assert set(topics) == {"/odom", "/rgb"}, log
        assert topics["/odom"].name == "nav_msgs/msg/Odometry" and topics["/odom"].encoding == "ros2msg"
        odom = [m for _, c, m in reader.iter_messages(topics=["/odom"])]
        rgb = [m for _, c, m in reader.iter_messages(topics=["/rgb"])]
    assert len(odom) >= 20, log
    assert 1 <= len(rgb) <= len(odom) // 5  # throttled to one per 2 s of simulated time
    first = deserialize_message(odom[0].data, Odometry)
    assert first.header.frame_id == "odom" and first.child_frame_id == "base_link"
