"""scene_graph_server takes frontier sets over DDS and runs retriever code in its sandbox."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import wait_for
from geometry_msgs.msg import Point
from rclpy.node import Node
from sg_search_interfaces.msg import Frontier, FrontierArray
from sg_search_interfaces.srv import QuerySceneGraph, RunGraphCode
from std_msgs.msg import Header
from test_stack_over_dds import SCENE, call

pytestmark = pytest.mark.ros


def test_frontiers_become_nodes_and_code_runs_sandboxed(start_node: Any, ros_node: Node) -> None:
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    publisher = ros_node.create_publisher(FrontierArray, "frontiers", 10)
    assert wait_for(lambda: publisher.get_subscription_count() > 0)
    frontier = Frontier(id="frontier_1", centroid=Point(x=1.5, y=5.9), goal=Point(x=1.5, y=5.6), size=10)
    publisher.publish(FrontierArray(header=Header(frame_id="map"), frontiers=[frontier]))

    def frontier_ids() -> list[str]:
        response = call(
            ros_node, QuerySceneGraph, "scene_graph/query", QuerySceneGraph.Request(kind="frontier")
        )
        return [n.id for n in response.nodes]

    assert wait_for(lambda: frontier_ids() == ["frontier_1"])
    code = "print(sorted(d['room_id'] for n, d in G.nodes(data=True) if d['kind'] == 'frontier'))"
    ran = call(ros_node, RunGraphCode, "scene_graph/run_code", RunGraphCode.Request(code=code))
    assert ran.success and ran.stdout.strip() == "['kitchen_0']"
    refused = call(
        ros_node,
        RunGraphCode,
        "scene_graph/run_code",
        RunGraphCode.Request(code="import socket; socket.socket()"),
    )
    assert not refused.success and "sandbox refuses" in refused.error
    looping = call(
        ros_node,
        RunGraphCode,
        "scene_graph/run_code",
        RunGraphCode.Request(code="while True: pass", time_limit_s=0.5),
        timeout=30.0,
    )
    assert looping.timed_out
