"""Consistency rules of a scene graph; tests call :func:`check_invariants` after every operation."""

from __future__ import annotations

import math

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, Layer


class InvariantError(AssertionError):
    """The graph breaks a structural rule; the message lists every violation."""


def violations(graph: SceneGraph) -> list[str]:
    """Every broken rule, as readable lines (empty when the graph is consistent)."""
    problems: list[str] = []
    incoming: dict[str, list[str]] = {}
    for edge in graph.edges(EdgeKind.HIERARCHY):
        incoming.setdefault(edge.target, []).append(edge.source)
    adjacency = {(e.source, e.target) for e in graph.edges(EdgeKind.ADJACENCY)}
    for source, target in adjacency:
        if (target, source) not in adjacency:
            problems.append(f"door edge {source}->{target} has no reverse edge")
    for node in graph.nodes():
        if not all(math.isfinite(v) for v in node.position):
            problems.append(f"{node.id}: position {node.position} is not finite")
        parents = incoming.get(node.id, [])
        if node.parent_id:
            parent = graph.get(node.parent_id)
            if parent is None:
                problems.append(f"{node.id}: parent {node.parent_id!r} missing")
                continue
            if parents != [node.parent_id]:
                problems.append(f"{node.id}: hierarchy edges from {parents}, parent_id is {node.parent_id!r}")
            nested = parent.layer == node.layer == Layer.OBJECT
            if parent.layer >= node.layer and not nested:
                problems.append(f"{node.id}: parent {parent.id} is not on a higher layer")
        elif parents:
            problems.append(f"{node.id}: hierarchy edges from {parents} but no parent_id")
        if node.room_id:
            room = graph.get(node.room_id)
            if room is None or room.layer != Layer.ROOM:
                problems.append(f"{node.id}: room {node.room_id!r} is not a room node")
        seen = {node.id}
        ancestor = node.parent_id
        while ancestor:
            if ancestor in seen:
                problems.append(f"{node.id}: hierarchy cycle through {ancestor}")
                break
            seen.add(ancestor)
            parent_node = graph.get(ancestor)
            ancestor = parent_node.parent_id if parent_node else ""
    return problems


def check_invariants(graph: SceneGraph) -> None:
    """Raise :class:`InvariantError` listing all violations, if any."""
    problems = violations(graph)
    if problems:
        raise InvariantError("scene graph inconsistent:\n  " + "\n  ".join(problems))
