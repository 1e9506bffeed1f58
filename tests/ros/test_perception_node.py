"""The perception node in its own process, over DDS: on the simulator, and on bad frames."""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
from conftest import wait_for
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.msg import ObjectObservationArray
from sg_search_interfaces.srv import GetSceneGraph
from std_msgs.msg import String
from test_stack_over_dds import call

from sg_search.geometry.transforms import Transform, quat_from_matrix
from sg_search.ros.images import depth_to_msg
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.sim.mujoco.scene import layout_for

SENSOR = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


def set_vocabulary(node: Node, target: str, words: list[str]) -> Any:
    value = ParameterValue(type=ParameterType.PARAMETER_STRING_ARRAY, string_array_value=words)
    request = SetParameters.Request(parameters=[ParameterMsg(name="vocabulary", value=value)])
    return call(node, SetParameters, f"/{target}/set_parameters", request)


def test_perception_fuses_the_simulated_kitchen(start_node: Any, ros_node: Node) -> None:
    start_node(
        "sim_bridge", "-p", "width:=320", "-p", "height:=240", "-p", "rate_hz:=5.0",
        "-p", "start_room:=kitchen_0",
    )  # fmt: skip
    start_node("perception", "-p", "use_sim_time:=true")
    start_node("scene_graph_server", "-p", "use_sim_time:=true")
    got: list[ObjectObservationArray] = []
    ros_node.create_subscription(ObjectObservationArray, "observations", got.append, 10)
    assert wait_for(lambda: len(got) >= 3, timeout=90.0), "no fused instances from the simulated camera"

    boxes = {f.furniture_id: f for f in layout_for("Rs_int", 0).furniture}
    latest = {o.instance_id: o for msg in got for o in msg.observations}
    assert len(latest) >= 2
    assert got[-1].header.frame_id == "map"
    for observation in latest.values():
        assert observation.observation_count >= 2 and observation.point_count >= 8
        centroid = (observation.centroid.x, observation.centroid.y, observation.centroid.z)
        near = [
            f for f in boxes.values()
            if f.category.replace("_", " ") == observation.category
            and all(abs(c - m) <= s / 2 + 0.1 for c, m, s in zip(centroid, f.center, f.size, strict=True))
        ]  # fmt: skip
        assert near, f"{observation.category} at {observation.centroid} lies in no furniture of that category"

    def in_graph() -> bool:  # the scene graph server turns them into object nodes
        graph = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).update
        return {n.id for n in graph.nodes} >= set(latest)

    assert wait_for(in_graph, timeout=30.0, period=1.0)
    first = next(iter(latest.values())).category
    assert set_vocabulary(ros_node, "perception", [first]).results[0].successful
    time.sleep(1.0)
    got.clear()
    assert wait_for(lambda: len(got) >= 2, timeout=60.0)
    assert {o.category for msg in got for o in msg.observations} == {first}


class FramePublisher:
    """Publishes hand-made RGB-D frames of a 'mug' square 2 m ahead of a static camera."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.rgb = node.create_publisher(Image, "rgb", SENSOR)
        self.depth = node.create_publisher(Image, "depth", SENSOR)
        self.instances = node.create_publisher(Image, "instances", SENSOR)
        self.info = node.create_publisher(CameraInfo, "camera_info", SENSOR)
        node.create_publisher(String, "instance_categories", LATCHED).publish(
            String(data=json.dumps({"1": ["mug_0", "mug"]}))
        )
        pose = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=float)  # optical z = map x
        camera = Transform(np.array([0.0, 0.0, 1.0]), quat_from_matrix(pose))
        self.tf = TfBroadcaster(node)
        self.tf.send_static([transform_to_msg("map", "cam", 0.0, camera)])
        self.sec = 1

    def publish(
        self,
        *,
        width: int = 80,
        depth_encoding: str = "32FC1",
        colour: str = "rgb8",
        depth_value: float = 2.0,
        black: bool = False,
        frame_id: str = "cam",
        depth_width: int = 80,
        mug: bool = True,
    ) -> None:
        self.sec += 1
        stamp = self.node.get_clock().now().to_msg()
        stamp.sec, stamp.nanosec = self.sec, 0
        rgb = np.zeros((60, width, 3), np.uint8) if black else np.full((60, width, 3), 120, np.uint8)
        depth = np.full((60, depth_width), depth_value, np.float32)
        if depth_encoding == "16UC1":
            millimetres = (depth * 1000).astype("<u2")
            depth_msg = Image(
                height=60,
                width=depth_width,
                encoding="16UC1",
                step=depth_width * 2,
                data=millimetres.tobytes(),
            )
        else:
            depth_msg = depth_to_msg(depth, frame_id)
        instance = np.zeros((60, width), np.int32)
        instance[20:40, 30:50] = 1 if mug else 0
        messages = [
            Image(height=60, width=width, encoding=colour, step=width * 3, data=rgb.tobytes()),
            depth_msg,
            Image(
                height=60,
                width=width,
                encoding="32SC1",
                step=width * 4,
                data=instance.astype("<i4").tobytes(),
            ),
        ]
        for message in messages:
            message.header.stamp, message.header.frame_id = stamp, frame_id
        info = CameraInfo(
            width=width, height=60, k=[60.0, 0.0, (width - 1) / 2, 0.0, 60.0, 29.5, 0.0, 0.0, 1.0]
        )
        info.header.stamp, info.header.frame_id = stamp, frame_id
        self.info.publish(info)
        time.sleep(0.05)
        self.rgb.publish(messages[0])
        self.instances.publish(messages[2])
        self.depth.publish(messages[1])
        time.sleep(0.4)


def test_bad_frames_are_skipped_with_a_reason_and_lose_nothing(start_node: Any, ros_node: Node) -> None:
    node = start_node("perception", "-p", "tf_timeout_s:=0.1", "-p", "stats_period_s:=0.5")
    got: list[ObjectObservationArray] = []
    stats: list[dict[str, int]] = []
    ros_node.create_subscription(ObjectObservationArray, "observations", got.append, 10)
    ros_node.create_subscription(String, "perception_stats", lambda m: stats.append(json.loads(m.data)), 10)
    frames = FramePublisher(ros_node)

    def reported() -> list[ObjectObservationArray]:
        return [m for m in got if m.observations]

    def linked() -> bool:  # frames without the mug until one of their (empty) results arrives
        frames.publish(mug=False)
        return bool(got)

    def fused() -> bool:
        frames.publish()
        return bool(reported())

    # until DDS has matched the node's publisher to our subscription its first results are lost
    assert wait_for(linked, timeout=60.0), "no result of a processed frame arrived"
    assert not reported()
    got.clear()
    assert wait_for(fused, timeout=60.0), "the good frames were not fused"
    # every processed frame is published: the first, before the mug's second observation, empty
    assert not got[0].observations and got[0].frame_index < reported()[0].frame_index
    (mug,) = reported()[0].observations
    assert mug.category == "mug" and abs(mug.centroid.x - 2.0) < 0.05 and abs(mug.centroid.z - 1.0) < 0.1
    frames.publish(width=96, depth_width=80)  # rgb and depth sizes differ
    frames.publish(colour="mono8")
    frames.publish(depth_encoding="32FC1", depth_value=float("nan"))
    frames.publish(black=True)
    frames.publish(frame_id="nowhere")
    expected = {"skipped_size", "skipped_encoding", "skipped_no_depth", "skipped_black", "skipped_transform"}
    assert wait_for(lambda: bool(stats) and expected <= set(stats[-1]), timeout=20.0), stats[-1:]
    assert node.process.poll() is None and stats[-1]["instances"] == 1
    got.clear()
    frames.publish(depth_encoding="16UC1")  # millimetres are accepted
    assert wait_for(lambda: bool(reported()), timeout=20.0)
    assert [o.instance_id for o in reported()[-1].observations] == [mug.instance_id]
    assert reported()[-1].observations[0].observation_count > mug.observation_count
