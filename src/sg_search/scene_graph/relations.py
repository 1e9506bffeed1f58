"""Object-layer relations: short-range ones from geometry, long-range ones proposed by an LLM.

Short range (SG-Nav's "short edges", here decided geometrically; a VLM check can veto them
later): "next to" when two objects of one room are within ``next_to_distance`` metres
horizontally and overlap in height; "above"/"below" when their footprints overlap and one
is higher. "on"/"inside" a container come from :mod:`sg_search.scene_graph.observations`.

Long range (SG-Nav's "long edges"): ONE prompt per update lists every (new, new-or-old)
pair within a room (cross-room pairs would be pruned anyway) and asks an
:class:`EdgeProposer` (an LLM, through the stack's LLM client) for their
relations; a proposal survives only if both objects are in the same room, the straight
line between them is unobstructed and roughly parallel to a wall (rooms are axis-aligned
in ``map``). The cost is one call per batch of new nodes instead of m(m+n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKey, EdgeKind, EdgeOrigin, Layer, SceneEdge, SceneNode, Vec3

GEOMETRIC_RELATIONS = ("next to", "above", "below")
LONG_RANGE_RELATIONS = ("opposite to", "in front of", "behind", "facing", "same row as")


@dataclass(frozen=True)
class RelationParams:
    """Thresholds of the geometric relations [m] and the long-edge pruning [deg]."""

    next_to_distance: float = 0.8
    vertical_gap: float = 0.05
    max_wall_angle_deg: float = 15.0


class ShortEdgeVerifier(Protocol):
    """Checks a geometric relation on an RGB frame that shows both objects (a VLM yes/no)."""

    def verify(self, edge: SceneEdge, source: SceneNode, target: SceneNode, frame_id: int) -> bool:
        """True if the relation holds in frame ``frame_id``."""


class EdgeProposer(Protocol):
    """Proposes relations for many object pairs in one call (an LLM behind the stack's client)."""

    def propose(
        self, prompt: str, pairs: Sequence[tuple[SceneNode, SceneNode]]
    ) -> list[tuple[str, str, str]]:
        """(source id, target id, relation) triples for some of ``pairs``."""


def _bounds(nodes: Sequence[SceneNode]) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners, shape (N, 3) [m]; a node without a box is a point."""
    lo = np.array([n.bbox.minimum if n.bbox is not None else n.position for n in nodes], dtype=float)
    hi = np.array([n.bbox.maximum if n.bbox is not None else n.position for n in nodes], dtype=float)
    return lo.reshape(-1, 3), hi.reshape(-1, 3)


def relations_to(
    node: SceneNode,
    others: Sequence[SceneNode],
    params: RelationParams,
    bounds: tuple[np.ndarray, np.ndarray] | None = None,
) -> list[str | None]:
    """The relation of ``node`` to each of ``others`` ("next to", "above", "below") or None.

    ``bounds``: ``_bounds(others)`` if the caller already has it.
    """
    if not others:
        return []
    (a_lo,), (a_hi,) = _bounds([node])
    lo, hi = bounds if bounds is not None else _bounds(others)
    gap = np.maximum(0.0, np.maximum(a_lo[:2], lo[:, :2]) - np.minimum(a_hi[:2], hi[:, :2]))
    overlap_xy = (gap == 0.0).all(axis=1)
    above = overlap_xy & (a_lo[2] >= hi[:, 2] - params.vertical_gap)
    below = overlap_xy & ~above & (lo[:, 2] >= a_hi[2] - params.vertical_gap)
    heights_overlap = np.minimum(a_hi[2], hi[:, 2]) >= np.maximum(a_lo[2], lo[:, 2]) - params.vertical_gap
    next_to = ~(above | below) & (np.hypot(gap[:, 0], gap[:, 1]) <= params.next_to_distance) & heights_overlap
    labels = np.where(above, "above", np.where(below, "below", np.where(next_to, "next to", "")))
    return [str(label) or None for label in labels]


_INVERSE = {"above": "below", "below": "above", "next to": "next to"}


def update_geometric_relations(
    graph: SceneGraph,
    changed: Sequence[str],
    params: RelationParams,
    vetoed: AbstractSet[EdgeKey] = frozenset(),
) -> list[SceneEdge]:
    """Bring the geometric relations of the ``changed`` object nodes up to date with their room.

    Only edges that appear or disappear are written, so unchanged relations cost no update.
    ``vetoed`` edges (refused by a VLM check) are never added. Returns the edges added.
    """
    added: list[SceneEdge] = []
    rooms: dict[str, tuple[list[SceneNode], tuple[np.ndarray, np.ndarray]]] = {}  # only edges change below
    with graph.transaction():
        for node_id in changed:
            node = graph.get(node_id)
            if node is None or node.layer != Layer.OBJECT:
                continue
            wanted: set[tuple[str, str, str]] = set()
            if node.room_id:
                if node.room_id not in rooms:
                    members = graph.nodes_in_room(node.room_id, Layer.OBJECT)
                    rooms[node.room_id] = (members, _bounds(members))
                members, bounds = rooms[node.room_id]
                for other, relation in zip(members, relations_to(node, members, params, bounds), strict=True):
                    if other.id == node_id:
                        continue
                    if relation is not None and (node_id, other.id, relation) not in vetoed:
                        wanted.add((node_id, other.id, relation))
                        wanted.add((other.id, node_id, _INVERSE[relation]))
            for edge in graph.edges_of(node_id):
                if (
                    edge.kind == EdgeKind.SPATIAL
                    and edge.relation in GEOMETRIC_RELATIONS
                    and edge.key not in wanted
                ):
                    graph.remove_edge(edge.key)
            for source, target, relation in sorted(wanted):
                edge = SceneEdge(source, target, EdgeKind.SPATIAL, relation)
                if graph.upsert_edge(edge):
                    added.append(edge)
    return added


def edge_proposal_prompt(pairs: Sequence[tuple[SceneNode, SceneNode]]) -> str:
    """The single batched prompt for all pairs (template ``sgnav_edges``; JSON answer)."""
    from sg_search.llm.prompts import render

    lines = []
    for i, (a, b) in enumerate(pairs):
        pa = ", ".join(f"{v:.1f}" for v in a.position)
        pb = ", ".join(f"{v:.1f}" for v in b.position)
        lines.append(f"{i}: {a.category} ({a.id}) at ({pa}) -- {b.category} ({b.id}) at ({pb})")
    return render("sgnav_edges", relations=", ".join(LONG_RANGE_RELATIONS), pairs="\n".join(lines))


ObstructionCheck = Callable[[Vec3, Vec3], bool]


@dataclass
class ShortEdgeStats:
    """VLM checks of short edges: calls made, edges refused."""

    calls: int = 0
    refused: int = 0


def verify_short_edges(
    graph: SceneGraph,
    added: Sequence[SceneEdge],
    verifier: ShortEdgeVerifier,
    vetoed: set[EdgeKey],
    stats: ShortEdgeStats,
) -> None:
    """Ask ``verifier`` about each newly added relation whose ends share a frame; a refusal
    removes the edge and its inverse and remembers both keys in ``vetoed``."""
    seen: set[frozenset[str]] = set()
    for edge in added:
        pair = frozenset((edge.source, edge.target))
        source, target = graph.get(edge.source), graph.get(edge.target)
        if pair in seen or source is None or target is None or not graph.get_edge(edge.key):
            continue
        seen.add(pair)
        shared = set(source.frame_ids) & set(target.frame_ids)
        if not shared:
            continue
        stats.calls += 1
        if verifier.verify(edge, source, target, max(shared)):
            continue
        stats.refused += 1
        inverse = (edge.target, edge.source, _INVERSE[edge.relation])
        for key in (edge.key, inverse):
            graph.remove_edge(key)
            vetoed.add(key)


@dataclass
class LongEdgeStats:
    """Counts that show the batching: calls made vs pairs covered, proposals kept."""

    calls: int = 0
    pairs: int = 0
    proposed: int = 0
    kept: int = 0

    def record(self, pairs: int, proposed: int, kept: int) -> None:
        """Count one proposal request."""
        self.calls += 1
        self.pairs += pairs
        self.proposed += proposed
        self.kept += kept


def long_edge_pairs(graph: SceneGraph, new_ids: Sequence[str]) -> list[tuple[SceneNode, SceneNode]]:
    """All (new x (new and old)) object pairs within a room, for one proposal request (pairs
    across rooms would be pruned by the same-room rule anyway)."""
    new_set = set(new_ids)
    new = [n for n in (graph.get(i) for i in new_ids) if n is not None and n.layer == Layer.OBJECT]
    pairs = []
    for i, a in enumerate(new):
        if not a.room_id:
            continue
        partners = [b for b in new[i + 1 :] if b.room_id == a.room_id]
        partners += [b for b in graph.nodes_in_room(a.room_id, Layer.OBJECT) if b.id not in new_set]
        pairs += [(a, b) for b in partners]
    return pairs


def add_long_edges(
    graph: SceneGraph,
    pairs: Sequence[tuple[SceneNode, SceneNode]],
    proposals: Sequence[tuple[str, str, str]],
    is_unobstructed: ObstructionCheck | None,
    params: RelationParams,
) -> list[SceneEdge]:
    """Add the proposals that survive pruning (both objects asked about and still in the graph,
    a long-range relation, same room, wall-parallel, unobstructed); return them."""
    asked = {n.id for pair in pairs for n in pair}
    kept = []
    with graph.transaction():
        for source, target, relation in proposals:
            src = graph.get(source) if source in asked else None
            dst = graph.get(target) if target in asked else None
            if src is None or dst is None or relation not in LONG_RANGE_RELATIONS:
                continue
            if (
                not src.room_id
                or src.room_id != dst.room_id
                or not _parallel_to_wall(src.position, dst.position, params)
            ):
                continue
            if is_unobstructed is not None and not is_unobstructed(src.position, dst.position):
                continue
            edge = SceneEdge(source, target, EdgeKind.SPATIAL, relation, EdgeOrigin.LLM, 0.5)
            graph.upsert_edge(edge)
            kept.append(edge)
    return kept


def _parallel_to_wall(a: Vec3, b: Vec3, params: RelationParams) -> bool:
    angle = math.degrees(math.atan2(abs(b[1] - a[1]), abs(b[0] - a[0])))
    return min(angle, 90.0 - angle) <= params.max_wall_angle_deg
