"""The scene-graph server survives input it cannot use: a malformed map and a snapshot that
cannot be written are logged and refused, the graph it built stays, and it keeps serving;
run_code calls are bounded in number and time; a negative period or a room segmentation
parameter out of range stops it at start, named."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import NodeProcess, wait_for
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray
from sg_search_interfaces.srv import GetSceneGraph, RunGraphCode
from test_stack_over_dds import call, observe

from sg_search.ros.futures import wait_future
from sg_search.ros.qos import LATCHED_QOS
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros


def _bad_map() -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.header.frame_id = "map"
    msg.info.resolution, msg.info.width, msg.info.height = 0.05, 100, 100
    msg.data = [0] * 17  # 17 cells for a 100 x 100 map
    return msg


def test_a_malformed_map_and_a_failing_snapshot_leave_the_server_serving(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    server = start_node(
        "scene_graph_server",
        *("-p", f"snapshot_file:={blocked / 'graph.json'}", "-p", "snapshot_period_s:=0.2"),
        *("-p", "rooms_period_s:=0.0"),
    )
    observations = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    maps = ros_node.create_publisher(OccupancyGrid, "map", LATCHED_QOS)
    assert wait_for(lambda: observations.get_subscription_count() > 0 and maps.get_subscription_count() > 0)
    observe(ros_node, observations, 1, ObjectInstance("obj_1", "mug", 0.9, (2.1, 5.6, 0.95)))
    maps.publish(_bad_map())

    def has_mug() -> bool:
        nodes = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).update.nodes
        return "obj_1" in {n.id for n in nodes}

    assert wait_for(has_mug, 20.0, period=0.5), "the server lost the graph it had built"
    assert wait_for(lambda: "map rejected" in server.output_so_far(), 20.0), server.output_so_far()
    assert "data has 17 cells" in server.output_so_far()
    assert wait_for(lambda: "could not save snapshot" in server.output_so_far(), 20.0)
    assert server.process.poll() is None, server.output_so_far()


def test_run_code_is_bounded_and_bad_limits_are_refused(start_node: Any, ros_node: Node) -> None:
    start_node("scene_graph_server", "-p", "sandbox_max_concurrent:=1", "-p", "rooms_from_map:=false")
    client = ros_node.create_client(RunGraphCode, "scene_graph/run_code")
    assert client.wait_for_service(timeout_sec=60.0)
    long = RunGraphCode.Request(code="x = 0\nwhile True:\n    x += 1", time_limit_s=6.0)
    pending = [client.call_async(long), client.call_async(long)]  # sent together; either may run first
    answers = [wait_future(f, 60.0) for f in pending]
    assert all(a is not None for a in answers), answers
    ran = [a for a in answers if a.timed_out]
    refused = [a for a in answers if not a.success and "calls are running" in a.error]
    assert len(ran) == 1 and len(refused) == 1, answers  # one ran its 6 s, the other was refused at once
    for bad in (1e9, math.nan, -1.0):
        refused = call(
            ros_node,
            RunGraphCode,
            "scene_graph/run_code",
            RunGraphCode.Request(code="print(1)", time_limit_s=bad),
        )
        assert not refused.success and "time_s" in refused.error, (bad, refused)
    after = call(ros_node, RunGraphCode, "scene_graph/run_code", RunGraphCode.Request(code="print(len(G))"))
    assert after.success and after.stdout.strip().isdigit(), after  # the slot is free again


def _refused_at_start(*ros_args: str) -> str:
    """What a server started with ``ros_args`` printed; it must exit, with an error, within 60 s.
    One that does not is stopped all the same (its stacks in the message: ``NodeProcess.stop``)."""
    server = NodeProcess("scene_graph_server", *ros_args)
    try:
        code = server.process.wait(60.0)
    except subprocess.TimeoutExpired:
        code = None
    output = server.stop()
    assert code not in (None, 0), f"exit code {code}:\n{output}"
    return output


def test_a_negative_period_is_refused_at_start_naming_the_parameter() -> None:
    assert "snapshot_period_s" in _refused_at_start("-p", "snapshot_period_s:=-1.0")


def test_a_bad_room_segmentation_parameter_is_refused_at_start_naming_it() -> None:
    """The server declares ``rooms.*`` and builds its segmentation from them."""
    output = _refused_at_start("-p", "rooms.door_width:=0.0")
    assert "door_width must be a positive finite number" in output
