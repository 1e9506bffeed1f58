"""Object-layer relations: short-range ones from geometry, long-range ones proposed by an LLM.

Short range (SG-Nav's "short edges", here decided geometrically; a VLM check can veto them
later): "next to" when two objects of one room are within ``next_to_distance`` metres
horizontally and overlap in height; "above"/"below" when their footprints overlap and one
is higher. "on"/"inside" a container come from :mod:`sg_search.scene_graph.observations`.

Long range (SG-Nav's "long edges"): ONE prompt per update lists every (new, new-or-old)
pair and asks an :class:`EdgeProposer` (an LLM, through the stack's LLM client) for their
relations; a proposal survives only if both objects are in the same room, the straight
line between them is unobstructed and roughly parallel to a wall (rooms are axis-aligned
in ``map``). The cost is one call per batch of new nodes instead of m(m+n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, EdgeOrigin, Layer, SceneEdge, SceneNode, Vec3

GEOMETRIC_RELATIONS = ("next to", "above", "below")
LONG_RANGE_RELATIONS = ("opposite to", "in front of", "behind", "facing", "same row as")


@dataclass(frozen=True)
class RelationParams:
    """Thresholds of the geometric relations [m] and the long-edge pruning [deg]."""

    next_to_distance: float = 0.8
    vertical_gap: float = 0.05
    max_wall_angle_deg: float = 15.0


class EdgeProposer(Protocol):
    """Proposes relations for many object pairs in one call (an LLM behind the stack's client)."""

    def propose(
        self, prompt: str, pairs: Sequence[tuple[SceneNode, SceneNode]]
    ) -> list[tuple[str, str, str]]:
        """(source id, target id, relation) triples for some of ``pairs``."""


def _footprint(node: SceneNode) -> tuple[float, float, float, float]:
    if node.bbox is None:
        x, y, _ = node.position
        return (x, y, x, y)
    lo, hi = node.bbox.minimum, node.bbox.maximum
    return (lo[0], lo[1], hi[0], hi[1])


def _vertical(node: SceneNode) -> tuple[float, float]:
    if node.bbox is None:
        return (node.position[2], node.position[2])
    return (node.bbox.minimum[2], node.bbox.maximum[2])


def geometric_relation(a: SceneNode, b: SceneNode, params: RelationParams) -> str | None:
    """The relation of ``a`` to ``b`` ("next to", "above", "below") or None."""
    ax0, ay0, ax1, ay1 = _footprint(a)
    bx0, by0, bx1, by1 = _footprint(b)
    gap_x = max(0.0, max(ax0, bx0) - min(ax1, bx1))
    gap_y = max(0.0, max(ay0, by0) - min(ay1, by1))
    (az0, az1), (bz0, bz1) = _vertical(a), _vertical(b)
    if gap_x == 0.0 and gap_y == 0.0:
        if az0 >= bz1 - params.vertical_gap:
            return "above"
        if bz0 >= az1 - params.vertical_gap:
            return "below"
    if (
        math.hypot(gap_x, gap_y) <= params.next_to_distance
        and min(az1, bz1) >= max(az0, bz0) - params.vertical_gap
    ):
        return "next to"
    return None


def update_geometric_relations(graph: SceneGraph, changed: Sequence[str], params: RelationParams) -> None:
    """Recompute the geometric relations of the ``changed`` object nodes with their room's objects."""
    with graph.transaction():
        for node_id in changed:
            node = graph.get(node_id)
            if node is None or node.layer != Layer.OBJECT:
                continue
            for edge in graph.edges_of(node_id):
                if edge.kind == EdgeKind.SPATIAL and edge.relation in GEOMETRIC_RELATIONS:
                    graph.remove_edge(edge.key)
            if not node.room_id:
                continue
            for other in graph.nodes(layer=Layer.OBJECT):
                if other.id == node.id or other.room_id != node.room_id:
                    continue
                relation = geometric_relation(node, other, params)
                if relation is not None:
                    inverse = {"above": "below", "below": "above"}.get(relation, relation)
                    graph.upsert_edge(SceneEdge(node.id, other.id, EdgeKind.SPATIAL, relation))
                    graph.upsert_edge(SceneEdge(other.id, node.id, EdgeKind.SPATIAL, inverse))


def edge_proposal_prompt(pairs: Sequence[tuple[SceneNode, SceneNode]]) -> str:
    """The single batched prompt for all pairs (JSON answer)."""
    lines = [
        "You see objects in a home, with positions in metres (x, y, z).",
        "For each numbered pair, give the most likely spatial relation of the first object to the",
        f"second, one of: {', '.join(LONG_RANGE_RELATIONS)}, or none.",
        'Answer JSON only: {"relations": [{"pair": <number>, "relation": "<relation>"}]}',
        "Pairs:",
    ]
    for i, (a, b) in enumerate(pairs):
        pa = ", ".join(f"{v:.1f}" for v in a.position)
        pb = ", ".join(f"{v:.1f}" for v in b.position)
        lines.append(f"{i}: {a.category} ({a.id}) at ({pa}) -- {b.category} ({b.id}) at ({pb})")
    return "\n".join(lines)


ObstructionCheck = Callable[[Vec3, Vec3], bool]


@dataclass
class LongEdgeStats:
    """Counts that show the batching: calls made vs pairs covered, proposals kept."""

    calls: int = 0
    pairs: int = 0
    proposed: int = 0
    kept: int = 0


def propose_long_edges(
    graph: SceneGraph,
    new_ids: Sequence[str],
    proposer: EdgeProposer,
    is_unobstructed: ObstructionCheck | None,
    params: RelationParams,
    stats: LongEdgeStats,
) -> list[SceneEdge]:
    """One proposer call for all (new x (new and old)) object pairs; add and return the kept edges.

    Without an obstruction check (no occupancy map yet) proposals are kept only by the
    same-room and wall-parallel rules.
    """
    objects = {n.id: n for n in graph.nodes(layer=Layer.OBJECT)}
    new = [objects[i] for i in new_ids if i in objects]
    pairs = [
        (a, b)
        for i, a in enumerate(new)
        for b in [*new[i + 1 :], *(o for o in objects.values() if o.id not in set(new_ids))]
    ]
    if not pairs:
        return []
    stats.calls += 1
    stats.pairs += len(pairs)
    proposals = proposer.propose(edge_proposal_prompt(pairs), pairs)
    stats.proposed += len(proposals)
    kept = []
    with graph.transaction():
        for source, target, relation in proposals:
            a, b = objects.get(source), objects.get(target)
            if a is None or b is None or relation not in LONG_RANGE_RELATIONS:
                continue
            if (
                not a.room_id
                or a.room_id != b.room_id
                or not _parallel_to_wall(a.position, b.position, params)
            ):
                continue
            if is_unobstructed is not None and not is_unobstructed(a.position, b.position):
                continue
            edge = SceneEdge(source, target, EdgeKind.SPATIAL, relation, EdgeOrigin.LLM, 0.5)
            graph.upsert_edge(edge)
            kept.append(edge)
    stats.kept += len(kept)
    return kept


def _parallel_to_wall(a: Vec3, b: Vec3, params: RelationParams) -> bool:
    angle = math.degrees(math.atan2(abs(b[1] - a[1]), abs(b[0] - a[0])))
    return min(angle, 90.0 - angle) <= params.max_wall_angle_deg
