"""A killed scene_graph_server restarts from its snapshot and a running search goes on;
rviz markers are published for the graph."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import OBSERVE_ONLY, wait_for
from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray
from sg_search_interfaces.srv import GetSceneGraph
from test_stack_over_dds import SCENE, STARTUP_S, call, observe
from visualization_msgs.msg import MarkerArray

from sg_search.ros.search_client import SearchClient, TaskResult
from sg_search.scene_graph.observations import ObjectInstance
from sg_search.scene_graph.serialization import load_snapshot

pytestmark = pytest.mark.ros


def test_killed_server_restarts_from_snapshot_and_search_continues(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    snapshot = tmp_path / "graph.json"
    args = (
        "-p",
        f"prior_scene_file:={SCENE}",
        "-p",
        f"snapshot_file:={snapshot}",
        "-p",
        "snapshot_period_s:=0.2",
    )
    server = start_node("scene_graph_server", *args)
    start_node("reasoner", "-p", "step_period_s:=0.05", "-p", "max_steps:=5000", *OBSERVE_ONLY)
    observations = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    assert wait_for(lambda: observations.get_subscription_count() > 0)
    observe(ros_node, observations, 1, ObjectInstance("obj_1", "mug", 0.9, (2.1, 5.6, 0.95)))
    assert wait_for(lambda: snapshot.is_file() and "obj_1" in load_snapshot(snapshot))

    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)
    assert client.start("find the passport", timeout_s=90.0)
    assert wait_for(lambda: len(client.feedback) >= 2)

    server.process.kill()  # SIGKILL: no clean shutdown, no final save
    server.process.wait(10)
    time.sleep(0.5)
    assert not client.is_done(), "the search must survive the graph server's crash"
    start_node("scene_graph_server", *args)
    restored = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).update
    assert "obj_1" in {n.id for n in restored.nodes}, "the restarted server lost the mapped object"

    assert wait_for(lambda: observations.get_subscription_count() > 0)
    observe(ros_node, observations, 2, ObjectInstance("obj_9", "passport", 0.8, (7.6, -1.5, 0.2)))
    assert client.wait(30.0)
    assert client.status() == TaskResult.SUCCEEDED
    assert client.result().object_id == "obj_9"


def test_markers_show_rooms_objects_and_edges(start_node: Any, ros_node: Node) -> None:
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}", "-p", "markers_period_s:=0.2")
    received: list[MarkerArray] = []
    ros_node.create_subscription(MarkerArray, "scene_graph/markers", received.append, 1)
    assert wait_for(lambda: bool(received))
    markers = received[-1].markers
    namespaces = {m.ns for m in markers}
    assert {"rooms", "objects", "labels", "edges/adjacency", "edges/hierarchy"} <= namespaces
    labels = {m.text for m in markers if m.ns == "labels"}
    assert "fridge [fridge_0]" in labels
    assert all(m.header.frame_id == "map" for m in markers)
