"""Consistency rules of a scene graph; tests call :func:`check_invariants` after every operation."""

from __future__ import annotations

import math

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, Layer, SceneNode


class InvariantError(AssertionError):
    """The graph breaks a structural rule; the message lists every violation."""


def violations(graph: SceneGraph) -> list[str]:
    """Every broken rule, as readable lines (empty when the graph is consistent)."""
    return [*_door_violations(graph), *_node_violations(graph), *_index_violations(graph)]


def _door_violations(graph: SceneGraph) -> list[str]:
    adjacency = {(e.source, e.target) for e in graph.edges(EdgeKind.ADJACENCY)}
    return [f"door edge {s}->{t} has no reverse edge" for s, t in adjacency if (t, s) not in adjacency]


def _node_violations(graph: SceneGraph) -> list[str]:
    problems: list[str] = []
    incoming: dict[str, list[str]] = {}
    for edge in graph.edges(EdgeKind.HIERARCHY):
        incoming.setdefault(edge.target, []).append(edge.source)
    for node in graph.nodes():
        if not all(math.isfinite(v) for v in node.position):
            problems.append(f"{node.id}: position {node.position} is not finite")
        parents = incoming.get(node.id, [])
        if node.parent_id:
            problems += _parent_violations(graph, node, parents)
        elif parents:
            problems.append(f"{node.id}: hierarchy edges from {parents} but no parent_id")
        if node.room_id:
            room = graph.get(node.room_id)
            if room is None or room.layer != Layer.ROOM:
                problems.append(f"{node.id}: room {node.room_id!r} is not a room node")
    return problems


def _parent_violations(graph: SceneGraph, node: SceneNode, parents: list[str]) -> list[str]:
    parent = graph.get(node.parent_id)
    if parent is None:
        return [f"{node.id}: parent {node.parent_id!r} missing"]
    problems = []
    if parents != [node.parent_id]:
        problems.append(f"{node.id}: hierarchy edges from {parents}, parent_id is {node.parent_id!r}")
    nested = parent.layer == node.layer == Layer.OBJECT
    if parent.layer >= node.layer and not nested:
        problems.append(f"{node.id}: parent {parent.id} is not on a higher layer")
    seen = {node.id}
    ancestor = node.parent_id
    while ancestor:
        if ancestor in seen:
            problems.append(f"{node.id}: hierarchy cycle through {ancestor}")
            break
        seen.add(ancestor)
        above = graph.get(ancestor)
        ancestor = above.parent_id if above else ""
    return problems


def _index_violations(graph: SceneGraph) -> list[str]:
    by_room: dict[str, set[str]] = {}
    for node in graph.nodes():
        by_room.setdefault(node.room_id, set()).add(node.id)
    problems = []
    for room_id, ids in by_room.items():
        indexed = {n.id for n in graph.nodes_in_room(room_id)}
        if indexed != ids:
            problems.append(f"room index of {room_id!r} holds {sorted(indexed ^ ids)} wrongly")
    return problems


def check_invariants(graph: SceneGraph) -> None:
    """Raise :class:`InvariantError` listing all violations, if any."""
    problems = violations(graph)
    if problems:
        raise InvariantError("scene graph inconsistent:\n  " + "\n  ".join(problems))
