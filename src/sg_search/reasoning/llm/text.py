"""The scene graph as prompt text: short lines that name node ids, so a model can answer with
an id and the answer can be checked against the graph."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.scene_graph import EdgeKind, Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.model import Vec3

VERBS = {
    SkillAffordance.NAVIGATE: "explore",
    SkillAffordance.OPEN: "open",
    SkillAffordance.INSPECT: "look at",
    SkillAffordance.CLOSE: "close",
}


def label(node: SceneNode) -> str:
    """What a node is in words: its category, or its kind."""
    if node.layer == Layer.ROOM:
        return node.category if node.category and node.state != NodeState.UNEXPLORED else "unexplored room"
    return node.category or node.kind


def room_name(graph: SceneGraph, node: SceneNode) -> str:
    """The category of the node's room ("" when unknown)."""
    room = graph.get(node.room_id) if node.room_id else None
    return label(room) if room is not None else ""


def candidate_text(graph: SceneGraph, candidate: Candidate) -> str:
    """``explore frontier in the kitchen, 3.2 m``: what acting on a candidate means."""
    node = graph.node(candidate.node_id)
    where = room_name(graph, node)
    where = f" in the {where}" if where and node.layer != Layer.ROOM else ""
    distance = f", {candidate.distance:.1f} m" if candidate.distance < 1e8 else ""
    return f"{VERBS[candidate.affordance]} {label(node)}{where}{distance}"


def candidate_line(graph: SceneGraph, candidate: Candidate) -> str:
    """``id: explore frontier in the kitchen, 3.2 m``."""
    return f"{candidate.node_id}: {candidate_text(graph, candidate)}"


def candidate_lines(graph: SceneGraph, candidates: Sequence[Candidate]) -> str:
    """One :func:`candidate_line` per candidate, newline separated."""
    return "\n".join(candidate_line(graph, c) for c in candidates)


def objects_near(graph: SceneGraph, position: Vec3, limit: int) -> list[SceneNode]:
    """Object-layer nodes nearest ``position`` (metres, ``map``), at most ``limit``."""
    objects = graph.nodes(Layer.OBJECT)
    objects.sort(key=lambda n: (math.dist(n.position[:2], position[:2]), n.id))
    return objects[:limit]


def neighbours(graph: SceneGraph, node: SceneNode) -> list[tuple[str, SceneNode]]:
    """(relation, other object) for the object-level edges of ``node``."""
    out = []
    for edge in graph.edges_of(node.id):
        if edge.kind != EdgeKind.SPATIAL:
            continue
        other = graph.get(edge.target if edge.source == node.id else edge.source)
        if other is not None and other.layer == Layer.OBJECT:
            relation = edge.relation if edge.source == node.id else f"has {edge.relation}"
            out.append((relation, other))
    return out


def object_line(graph: SceneGraph, node: SceneNode) -> str:
    """``obj_3: sofa in the living room (state explored); next to table (obj_4)``."""
    where = room_name(graph, node)
    parent = graph.get(node.parent_id) if node.parent_id and node.parent_id != node.room_id else None
    text = f"{node.id}: {label(node)}" + (f" in the {where}" if where else "")
    if parent is not None:
        text += f", in/on {label(parent)} ({parent.id})"
    if node.state != NodeState.UNKNOWN:
        text += f" ({node.state.name.lower()})"
    near = neighbours(graph, node)[:4]
    if near:
        text += "; " + ", ".join(f"{relation} {label(o)} ({o.id})" for relation, o in near)
    return text


def robot_room(graph: SceneGraph, position: Vec3 | None) -> SceneNode | None:
    """The room whose box holds ``position``, else the nearest room centre; None without rooms."""
    rooms = graph.rooms()
    if position is None or not rooms:
        return None
    for room in rooms:
        if room.bbox is not None and room.bbox.contains_xy(position):
            return room
    return min(rooms, key=lambda r: math.dist(r.position[:2], position[:2]))
