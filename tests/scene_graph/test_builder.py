"""Groups, geometric relations and batched long-edge proposals, with invariants after each frame."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sg_search.scene_graph import EdgeKind, EdgeOrigin, Layer, SceneEdge, SceneGraph, SceneNode
from sg_search.scene_graph.builder import BuilderParams, SceneGraphBuilder
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.invariants import check_invariants
from sg_search.scene_graph.model import Box3D
from sg_search.scene_graph.observations import ObjectInstance


class ScriptedVerifier:
    """Test double for the VLM yes/no check: refuses every "next to" it is asked about."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, int]] = []

    def verify(self, edge: SceneEdge, source: SceneNode, target: SceneNode, frame_id: int) -> bool:
        self.asked.append((edge.source, edge.target, frame_id))
        return edge.relation != "next to"


class ScriptedEdgeProposer:
    """Test double for the LLM behind the edge hook: answers 'opposite to' for every pair."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def propose(
        self, prompt: str, pairs: Sequence[tuple[SceneNode, SceneNode]]
    ) -> list[tuple[str, str, str]]:
        self.prompts.append(prompt)
        return [(a.id, b.id, "opposite to") for a, b in pairs]


Vec = tuple[float, float, float]


def _inst(i: str, cat: str, c: Vec, s: Vec = (0.3, 0.3, 0.3)) -> ObjectInstance:
    return ObjectInstance(i, cat, 0.9, c, Box3D(c, s))


def test_related_objects_close_together_form_a_group(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(
        1, [_inst("bed", "bed", (6.5, 1.0, 0.3), (1.6, 2.0, 0.6)), _inst("lamp", "lamp", (7.0, 2.2, 0.3))]
    )
    check_invariants(two_rooms)
    # the prior's nightstand_0 (7.5, 0.5) is related to the bed and close: it joins
    (group,) = two_rooms.nodes(layer=Layer.GROUP)
    assert group.id == "group_bed" and group.parent_id == "bedroom_0"
    assert group.category == "bed + lamp + nightstand"
    assert {e.target for e in two_rooms.edges(EdgeKind.GROUP)} == {"bed", "lamp", "nightstand_0"}


def test_group_dissolves_when_members_move_apart(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(1, [_inst("table", "table", (2.0, 1.0, 0.4)), _inst("chair", "chair", (2.8, 1.0, 0.4))])
    assert [g.id for g in two_rooms.nodes(layer=Layer.GROUP)] == ["group_chair"]
    builder.integrate(2, [_inst("chair", "chair", (0.5, 0.4, 0.4))])
    check_invariants(two_rooms)
    assert two_rooms.nodes(layer=Layer.GROUP) == []
    assert two_rooms.edges(EdgeKind.GROUP) == []


def test_unrelated_or_other_room_objects_do_not_group(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(
        1,
        [
            _inst("bed", "bed", (4.2, 1.0, 0.3)),
            _inst("lamp", "lamp", (3.8, 1.0, 0.3)),
            _inst("mug", "mug", (4.4, 1.0, 0.3)),
        ],
    )
    assert two_rooms.nodes(layer=Layer.GROUP) == []


def test_geometric_relations_are_symmetric_and_refreshed(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(
        1,
        [
            _inst("shelf", "shelf", (2.0, 1.0, 0.5), (1.0, 0.4, 1.0)),
            _inst("vase", "vase", (2.0, 1.0, 1.15), (0.2, 0.2, 0.3)),
            _inst("chair", "chair", (3.0, 1.0, 0.45), (0.5, 0.5, 0.9)),
        ],
    )
    check_invariants(two_rooms)
    spatial = {(e.source, e.relation, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL)}
    assert ("vase", "above", "shelf") in spatial and ("shelf", "below", "vase") in spatial
    assert ("chair", "next to", "shelf") in spatial and ("shelf", "next to", "chair") in spatial
    assert not any(s == "vase" and t == "chair" for s, _, t in spatial)
    builder.integrate(2, [_inst("chair", "chair", (0.5, 3.5, 0.45), (0.5, 0.5, 0.9))])
    spatial = {(e.source, e.relation, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL)}
    assert not any("chair" in (s, t) and "shelf" in (s, t) for s, _, t in spatial)


def test_long_edges_one_call_per_frame_pruned_by_room_and_wall_angle(two_rooms: SceneGraph) -> None:
    proposer = ScriptedEdgeProposer()
    blocked: list[tuple[object, object]] = []

    def unobstructed(a: tuple[float, float, float], b: tuple[float, float, float]) -> bool:
        blocked.append((a, b))
        return a[1] < 3.0  # pretend a wall blocks lines that start high in y

    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs(), proposer, unobstructed)
    builder.integrate(
        1,
        [
            _inst("a", "sofa", (0.5, 1.0, 0.4)),
            _inst("b", "tv", (3.5, 1.1, 0.8)),
            _inst("c", "plant", (3.5, 3.5, 0.5)),
            _inst("d", "bed", (6.0, 1.0, 0.3)),
        ],
    )
    assert builder.long_edge_stats.calls == 0, "no LLM call on the perception path"
    builder.propose_pending()
    assert builder.long_edge_stats.calls == 1
    # ONE prompt for the 4 new objects, pairs within a room only: kitchen a, b, c (3 pairs) and
    # each with fridge_0 (3); bedroom d with nightstand_0 (1)
    assert builder.long_edge_stats.pairs == 7
    assert len(proposer.prompts) == 1 and "sofa (a)" in proposer.prompts[0]
    llm_edges = {
        (e.source, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL) if e.origin == EdgeOrigin.LLM
    }
    # kept: same room, parallel to a wall, unobstructed. a-c is diagonal, d is in the other room,
    # c-fridge_0 starts where the check reports a wall.
    assert llm_edges == {("a", "b"), ("b", "c"), ("a", "fridge_0")}
    builder.integrate(2, [_inst("e", "lamp", (0.5, 2.0, 0.4))])
    builder.propose_pending()
    assert builder.long_edge_stats.calls == 2 and builder.long_edge_stats.pairs == 7 + 4
    builder.integrate(3, [_inst("e", "lamp", (0.6, 2.0, 0.4))])  # no new object: no call
    builder.propose_pending()
    assert builder.long_edge_stats.calls == 2
    check_invariants(two_rooms)


def test_invalid_frame_changes_nothing(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(1, [_inst("bed", "bed", (6.5, 1.0, 0.3))])
    before = (two_rooms.sequence, len(two_rooms), len(two_rooms.edges()))
    with pytest.raises(ValueError):
        builder.integrate(2, [_inst("lamp", "lamp", (7.0, 1.5, 0.3)), _inst("", "lamp", (7.0, 1.5, 0.3))])
    assert (two_rooms.sequence, len(two_rooms), len(two_rooms.edges())) == before
    check_invariants(two_rooms)


def test_vlm_check_vetoes_short_edges_once_and_for_good(two_rooms: SceneGraph) -> None:
    verifier = ScriptedVerifier()
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs(), verifier=verifier)
    frame = [
        _inst("shelf", "shelf", (2.0, 1.0, 0.5), (1.0, 0.4, 1.0)),
        _inst("vase", "vase", (2.0, 1.0, 1.15), (0.2, 0.2, 0.3)),
        _inst("chair", "chair", (3.0, 1.0, 0.45), (0.5, 0.5, 0.9)),
    ]
    builder.integrate(1, frame)
    relations = {(e.source, e.relation, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL)}
    assert ("vase", "above", "shelf") in relations  # confirmed
    assert not any(r == "next to" for _, r, _ in relations)  # refused, both directions
    assert all(frame_id == 1 for *_, frame_id in verifier.asked)
    calls = builder.short_edge_stats.calls
    assert calls == 2 and builder.short_edge_stats.refused == 1
    builder.integrate(2, frame)  # same geometry: the refused edge is not re-proposed, nothing asked
    assert builder.short_edge_stats.calls == calls
    assert not any(e.relation == "next to" for e in two_rooms.edges(EdgeKind.SPATIAL))
    check_invariants(two_rooms)


def test_duplicate_ids_in_a_frame_are_refused(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    before = two_rooms.sequence
    with pytest.raises(ValueError, match="duplicate instance ids"):
        builder.integrate(1, [_inst("a", "mug", (1.0, 1.0, 0.5)), _inst("a", "cup", (2.0, 1.0, 0.5))])
    assert two_rooms.sequence == before


def test_jitter_below_min_move_leaves_relations_alone(two_rooms: SceneGraph) -> None:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(min_move=0.05), load_related_pairs())
    builder.integrate(
        1,
        [
            _inst("shelf", "shelf", (2.0, 1.0, 0.5), (1.0, 0.4, 1.0)),
            _inst("chair", "chair", (3.0, 1.0, 0.45), (0.5, 0.5, 0.9)),
        ],
    )
    edges = set(two_rooms.edges(EdgeKind.SPATIAL))
    before = two_rooms.sequence
    # 2 cm of jitter: the nodes update (new positions), their relations are not recomputed
    builder.integrate(2, [_inst("chair", "chair", (3.02, 1.0, 0.45), (0.5, 0.5, 0.9))])
    assert two_rooms.sequence == before + 1
    assert set(two_rooms.edges(EdgeKind.SPATIAL)) == edges
    assert two_rooms.updates_since(before).edges == ()
    # moving 1.5 m away is beyond min_move: the "next to" pair goes
    builder.integrate(3, [_inst("chair", "chair", (3.5, 3.0, 0.45), (0.5, 0.5, 0.9))])
    assert not any("chair" in (e.source, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL))
    check_invariants(two_rooms)
