"""The reasoner's copy of the scene graph catches up with the server on demand over DDS: after an
open, the update that put the target in the graph may reach the executor's copy before the
reasoner's, and a search reading the older copy closes the container on its target."""

from __future__ import annotations

import pytest
from rclpy.node import Node
from sg_search_interfaces.srv import GetSceneGraph
from std_msgs.msg import Header

from sg_search.ros.conversions import update_to_msg
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.scene_graph import Layer, SceneGraph, SceneNode

pytestmark = pytest.mark.ros


class _Server:
    """Test double of the scene graph server's ``scene_graph/get`` (it never publishes
    updates: only a catch-up can bring what it holds). ``stale`` answers with a graph older
    than what it last answered."""

    def __init__(self, node: Node) -> None:
        self.graph = SceneGraph()
        self.stale: SceneGraph | None = None
        node.create_service(GetSceneGraph, "scene_graph/get", self._on_get)

    def _on_get(
        self, request: GetSceneGraph.Request, response: GetSceneGraph.Response
    ) -> GetSceneGraph.Response:
        graph = self.stale if self.stale is not None else self.graph
        response.update = update_to_msg(graph.updates_since(request.since_sequence), Header(frame_id="map"))
        response.success = True
        return response


def _object(node_id: str, category: str) -> SceneNode:
    return SceneNode(node_id, Layer.OBJECT, "object", category, position=(1.0, 2.0, 0.5))


def test_a_catch_up_brings_the_servers_graph_and_never_an_older_one(ros_node: Node) -> None:
    server = _Server(ros_node)
    mirror = GraphMirror(ros_node)
    server.graph.upsert_node(_object("obj_1", "fridge"))
    assert mirror.copy() is None, "no update was published"

    assert mirror.catch_up(10.0)
    first = mirror.copy()
    assert first is not None and {n.category for n in first.nodes()} == {"fridge"}

    server.stale = SceneGraph()  # an answer older than the copy (sequence 0, no nodes)
    assert mirror.catch_up(10.0)
    kept = mirror.copy()
    assert kept is not None and kept.get("obj_1") is not None, "an older answer replaced the copy"
    assert mirror.sequence == first.sequence

    server.graph.upsert_node(_object("obj_2", "beefsteak tomato"))  # seen once the fridge opened

    server.stale = None
    assert mirror.catch_up(10.0)
    caught = mirror.copy()
    assert caught is not None and caught.get("obj_2") is not None
    assert mirror.sequence == server.graph.sequence
