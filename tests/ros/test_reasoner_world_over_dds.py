"""The reasoner node's world over DDS: a reasoner running in the node (a probe installed as a
plugin package, in its own process) receives the robot's position from TF and the recent RGB
frames from the camera topic, keyed by the frame index perception gave them — as the
in-process world passes them in the benchmarks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import OBSERVE_ONLY, wait_for
from plugin_builder import install_reasoner_plugin
from rclpy.node import Node
from sensor_msgs.msg import Image
from sg_search_interfaces.msg import ObjectObservationArray
from std_msgs.msg import Header
from test_stack_over_dds import SCENE, STARTUP_S

from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_yaw
from sg_search.ros.conversions import instances_to_msg
from sg_search.ros.search_client import SearchClient
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros

PROBE = '''
import json, os
from sg_search.reasoning import Decision, Reasoner


class Probe(Reasoner):
    """Writes what it is given, then waits (decides nothing)."""

    name = "probe"

    def decide(self, observation):
        with open(os.environ["SG_SEARCH_PROBE_OUT"], "a") as out:
            images = {str(k): list(getattr(v, "shape", ())) for k, v in observation.images.items()}
            out.write(json.dumps({"position": observation.robot_position, "images": images}) + "\\n")
        return Decision(())


def create(params):
    return Probe()
'''


def _probes(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_reasoner_in_the_node_gets_the_pose_from_tf_and_frames_from_the_camera(
    start_node: Any, ros_node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = install_reasoner_plugin(tmp_path, "probe_reasoner", PROBE, {"probe": "probe_reasoner:create"})
    out = tmp_path / "probe.jsonl"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("SG_SEARCH_PROBE_OUT", str(out))
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node(
        "reasoner",
        "-p",
        "step_period_s:=0.1",
        "-p",
        "default_reasoner:=probe",
        "-p",
        "kept_frames:=4",
        *OBSERVE_ONLY,
    )

    tf = TfBroadcaster(ros_node)
    base = Transform(np.array([1.5, 4.0, 0.0]), quat_from_yaw(0.5))  # in the kitchen, not at the origin
    timer = ros_node.create_timer(
        0.1,
        lambda: tf.send(
            [transform_to_msg("map", "base_link", ros_node.get_clock().now().nanoseconds * 1e-9, base)]
        ),
    )
    rgb = ros_node.create_publisher(Image, "rgb", 10)
    observations = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)
    assert wait_for(lambda: rgb.get_subscription_count() > 0 and observations.get_subscription_count() > 1)
    assert client.start("find the passport", max_steps=10_000, timeout_s=60.0)

    def publish_frame(index: int) -> None:  # what the camera and perception send for one frame
        header = Header(stamp=ros_node.get_clock().now().to_msg(), frame_id="camera_optical")
        pixels = np.full((6, 8, 3), index, dtype=np.uint8)
        rgb.publish(Image(header=header, height=6, width=8, encoding="rgb8", step=24, data=pixels.tobytes()))
        header.frame_id = "map"
        mug = ObjectInstance(f"obj_{100 + index}", "mug", 0.9, (1.5, 4.5, 0.9))
        observations.publish(instances_to_msg([mug], header, index))

    def seen() -> bool:
        publish_frame(len(_probes(out)) + 7)
        return any(len(p["images"]) >= 2 for p in _probes(out))

    try:
        assert wait_for(seen, 30.0, period=0.2), f"no frames reached the reasoner: {_probes(out)[-1:]}"
    finally:
        client.cancel()
        ros_node.destroy_timer(timer)
    last = _probes(out)[-1]
    assert last["position"][:2] == pytest.approx([1.5, 4.0], abs=1e-6)
    assert len(last["images"]) <= 4 and all(shape == [6, 8, 3] for shape in last["images"].values())
    assert all(int(k) >= 7 for k in last["images"])  # perception's frame indices, not ours
