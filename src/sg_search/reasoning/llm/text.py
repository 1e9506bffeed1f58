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


MAX_NAME_CHARS = 48  # a name from the world (a detector, a prior file) is data, not an instruction


def as_data(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """A name from the world as prompt data: control characters (newlines included) become
    spaces, whitespace is collapsed, and it is cut to ``limit`` characters, so a name cannot
    open a line of its own ("SYSTEM: ...") or carry a long instruction."""
    flat = "".join(c if c.isprintable() else " " for c in text)
    flat = " ".join(flat.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def as_quoted(text: str) -> str:
    """Tool or code output as prompt data after a tag ("[Retrieved] ..."): control characters
    become spaces, and every line after the first starts with "| ", so nothing printed (a name
    from the world included) can open a line of its own."""
    lines = ["".join(c if c.isprintable() else " " for c in line) for line in text.splitlines()]
    return "\n| ".join(lines)


def label(node: SceneNode) -> str:
    """What a node is in words: its category, or its kind (as prompt data)."""
    if node.layer == Layer.ROOM:
        name = node.category if node.category and node.state != NodeState.UNEXPLORED else "unexplored room"
    else:
        name = node.category or node.kind
    return as_data(name)


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
    return f"{as_data(candidate.node_id)}: {candidate_text(graph, candidate)}"


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
    text = f"{as_data(node.id)}: {label(node)}" + (f" in the {where}" if where else "")
    if parent is not None:
        text += f", in/on {label(parent)} ({as_data(parent.id)})"
    if node.state != NodeState.UNKNOWN:
        text += f" ({node.state.name.lower()})"
    near = neighbours(graph, node)[:4]
    if near:
        text += "; " + ", ".join(f"{relation} {label(o)} ({as_data(o.id)})" for relation, o in near)
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
