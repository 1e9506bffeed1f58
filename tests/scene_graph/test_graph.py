from __future__ import annotations

import pytest

from sg_search.scene_graph import (
    EdgeKind,
    Layer,
    SceneEdge,
    SceneGraph,
    SceneNode,
    SequenceGapError,
)


def _obj(node_id: str, parent: str = "", x: float = 0.0) -> SceneNode:
    return SceneNode(node_id, Layer.OBJECT, "object", "mug", (x, 0.0, 0.0), parent_id=parent)


def test_every_change_bumps_sequence_and_no_op_does_not() -> None:
    graph = SceneGraph()
    assert graph.upsert_node(_obj("a"))
    assert graph.sequence == 1
    assert not graph.upsert_node(_obj("a"))
    assert graph.sequence == 1
    graph.upsert_node(_obj("a", x=1.0))
    assert graph.sequence == 2


def test_transaction_shares_one_sequence_number() -> None:
    graph = SceneGraph()
    with graph.transaction():
        graph.upsert_node(_obj("a"))
        graph.upsert_node(_obj("b"))
        graph.upsert_edge(SceneEdge("a", "b", EdgeKind.SPATIAL, "next to"))
    assert graph.sequence == 1


def test_parent_creates_hierarchy_edge_and_reparenting_moves_it() -> None:
    graph = SceneGraph()
    graph.upsert_node(SceneNode("r1", Layer.ROOM, "room", "kitchen"))
    graph.upsert_node(SceneNode("r2", Layer.ROOM, "room", "bedroom"))
    graph.upsert_node(_obj("a", parent="r1"))
    assert [n.id for n in graph.children("r1")] == ["a"]
    graph.upsert_node(_obj("a", parent="r2"))
    assert graph.children("r1") == []
    assert [n.id for n in graph.children("r2")] == ["a"]


def test_unknown_parent_and_edge_ends_are_rejected_without_change() -> None:
    graph = SceneGraph()
    with pytest.raises(KeyError, match="parent 'nowhere'"):
        graph.upsert_node(_obj("a", parent="nowhere"))
    assert graph.sequence == 0 and len(graph) == 0
    graph.upsert_node(_obj("a"))
    with pytest.raises(KeyError, match="'ghost'"):
        graph.upsert_edge(SceneEdge("a", "ghost", EdgeKind.SPATIAL, "on"))
    assert graph.sequence == 1


def test_removing_a_node_removes_children_and_edges() -> None:
    graph = SceneGraph()
    graph.upsert_node(SceneNode("r", Layer.ROOM, "room", "kitchen"))
    graph.upsert_node(_obj("a", parent="r"))
    graph.upsert_node(_obj("b"))
    graph.upsert_edge(SceneEdge("a", "b", EdgeKind.SPATIAL, "next to"))
    assert graph.remove_node("r")
    assert "a" not in graph and "r" not in graph
    assert graph.edges() == []


def test_updates_since_carries_changes_and_removals() -> None:
    graph = SceneGraph()
    graph.upsert_node(_obj("a"))
    graph.upsert_node(_obj("b"))
    mark = graph.sequence
    graph.upsert_node(_obj("c"))
    graph.remove_node("a")
    update = graph.updates_since(mark)
    assert not update.is_full
    assert update.base_sequence == mark and update.sequence == graph.sequence
    assert [n.id for n in update.nodes] == ["c"]
    assert update.removed_node_ids == ("a",)


def test_mirror_follows_incremental_updates_and_detects_gaps() -> None:
    server, mirror = SceneGraph(), SceneGraph()
    server.upsert_node(_obj("a"))
    assert mirror.apply(server.snapshot())
    first = server.sequence
    server.upsert_node(_obj("b"))
    lost = server.updates_since(first)
    server.upsert_node(_obj("c"))
    with pytest.raises(SequenceGapError):
        mirror.apply(server.updates_since(lost.sequence))
    mirror.apply(lost)
    mirror.apply(server.updates_since(lost.sequence))
    assert {n.id for n in mirror.nodes()} == {"a", "b", "c"}
    assert mirror.sequence == server.sequence
    assert not mirror.apply(lost)  # stale: ignored


def test_old_sequences_get_a_full_snapshot() -> None:
    graph = SceneGraph(history_limit=3)
    for i in range(10):
        graph.upsert_node(_obj(f"n{i}"))
    graph.remove_node("n0")
    assert graph.updates_since(2).is_full
    recent = graph.updates_since(graph.sequence - 1)
    assert not recent.is_full and recent.removed_node_ids == ("n0",)


def test_invalid_nodes_are_refused() -> None:
    with pytest.raises(ValueError, match="kind"):
        SceneNode("x", Layer.OBJECT, "thing")
    with pytest.raises(ValueError, match="confidence"):
        SceneNode("x", Layer.OBJECT, "object", confidence=1.5)
    graph = SceneGraph(max_frame_ids=2)
    with pytest.raises(ValueError, match="frame ids"):
        graph.upsert_node(SceneNode("x", Layer.OBJECT, "object", frame_ids=(1, 2, 3)))
