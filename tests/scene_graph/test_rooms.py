"""Room nodes from successive segmentations keep their ids; objects follow their room."""

from __future__ import annotations

import numpy as np

from sg_search.mapping.grid import GridSpec
from sg_search.perception.room_segmentation import RoomSegmentation
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.room_layer import RoomTracker

SPEC = GridSpec(0.1, 100, 40, 0.0, 0.0)  # 10 m x 4 m


def _labels(*spans: tuple[int, int, int]) -> RoomSegmentation:
    """Label columns [a, b) with label k for each (k, a, b)."""
    labels = np.zeros(SPEC.shape, dtype=np.int32)
    for label, a, b in spans:
        labels[:, a:b] = label
    return RoomSegmentation(labels, SPEC, reach=0.0)


def test_a_growing_room_keeps_its_id_state_and_objects() -> None:
    graph, tracker = SceneGraph(), RoomTracker()
    first = tracker.update(graph, _labels((1, 0, 30)), {1: "kitchen"})
    kitchen = first[1]
    graph.upsert_node(SceneNode("mug", Layer.OBJECT, "object", "mug", (1.0, 2.0, 0.8)))
    tracker.update(graph, _labels((1, 0, 30)), {1: "kitchen"})
    assert graph.node("mug").room_id == kitchen and graph.node("mug").parent_id == kitchen
    graph.upsert_node(SceneNode(kitchen, Layer.ROOM, "room", "kitchen", state=NodeState.UNEXPLORED))
    # the map grew: the kitchen is wider and a second room appeared; labels are renumbered
    second = tracker.update(graph, _labels((2, 0, 45), (1, 60, 100)), {2: "kitchen", 1: "bedroom"})
    assert second[2] == kitchen and second[1] != kitchen
    room = graph.node(kitchen)
    assert room.state == NodeState.UNEXPLORED  # what the search knew survives
    assert room.bbox is not None and room.bbox.size[0] == 4.5
    assert graph.node(second[1]).category == "bedroom"


def test_a_vanished_room_is_removed_without_its_objects() -> None:
    graph, tracker = SceneGraph(), RoomTracker()
    ids = tracker.update(graph, _labels((1, 0, 30), (2, 50, 100)), {})
    graph.upsert_node(SceneNode("cup", Layer.OBJECT, "object", "cup", (7.0, 2.0, 0.8)))
    tracker.update(graph, _labels((1, 0, 30), (2, 50, 100)), {})
    assert graph.node("cup").room_id == ids[2]
    # the two regions turn out to be one room (an opening was mapped): one id survives
    merged = tracker.update(graph, _labels((1, 0, 100)), {1: "living room"})
    assert merged[1] in (ids[1], ids[2]) and len(graph.rooms()) == 1
    assert graph.node("cup").room_id == merged[1]  # re-parented, not deleted with its room
    assert graph.get("root") is not None and graph.node(merged[1]).parent_id == "building_0"
