"""What reasoners read: small, purpose-made views of the scene graph.

- :func:`object_subgraph` — SG-Nav's subgraph of one object (itself, its ancestors, the
  objects it has spatial edges with).
- :func:`compressed_text` — MSGNav's compressed graph for key-subgraph selection, one
  line per object: ``id: category, room, [neighbour ids]``.
- :func:`scout_view_text` — SCOUT's observed graph: rooms with their state, actionable
  nodes (frontiers, unexplored rooms, closed containers) and observed objects.
- JSON export: :func:`sg_search.scene_graph.serialization.graph_to_dict`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, Layer, NodeState, SceneEdge, SceneNode


@dataclass(frozen=True)
class Subgraph:
    """A set of nodes and the edges among them."""

    center: str
    nodes: tuple[SceneNode, ...]
    edges: tuple[SceneEdge, ...]

    def text(self) -> str:
        """One line per node and per edge, for a prompt."""
        lines = [f"{n.id}: {n.category or n.kind} ({n.kind}, room {n.room_id or '?'})" for n in self.nodes]
        lines += [f"{e.source} --{e.relation}--> {e.target}" for e in self.edges]
        return "\n".join(lines)


def object_subgraph(graph: SceneGraph, node_id: str) -> Subgraph:
    """The node, its ancestors up to the root, and the objects it shares spatial edges with."""
    center = graph.node(node_id)
    ids = {center.id}
    parent = center.parent_id
    while parent:
        ids.add(parent)
        parent = graph.node(parent).parent_id
    for edge in graph.edges_of(node_id):
        if edge.kind == EdgeKind.SPATIAL:
            ids.add(edge.target if edge.source == node_id else edge.source)
    nodes = tuple(n for n in graph.nodes() if n.id in ids)
    edges = tuple(e for e in graph.edges() if e.source in ids and e.target in ids)
    return Subgraph(node_id, nodes, edges)


def compressed_text(graph: SceneGraph) -> str:
    """``id: category, room, [neighbour ids]`` for every object-layer node."""
    lines = []
    for node in graph.nodes(layer=Layer.OBJECT):
        neighbours = sorted(
            {
                e.target if e.source == node.id else e.source
                for e in graph.edges_of(node.id)
                if e.kind == EdgeKind.SPATIAL
            }
        )
        lines.append(f"{node.id}: {node.category}, {node.room_id or '?'}, [{', '.join(neighbours)}]")
    return "\n".join(lines)


def scout_view_text(graph: SceneGraph) -> str:
    """Rooms with state, then actionable nodes, then observed objects, one per line."""
    lines = ["Rooms:"]
    for room in graph.nodes(layer=Layer.ROOM):
        lines.append(f"- {room.id} ({room.category}): {room.state.name.lower()}")
    lines.append("Actionable:")
    for node in graph.nodes():
        if node.kind == "frontier" and node.state != NodeState.EXPLORED:
            lines.append(f"- {node.id}: frontier in {node.room_id or '?'}")
        elif node.layer == Layer.ROOM and node.state == NodeState.UNEXPLORED:
            lines.append(f"- {node.id}: unexplored {node.category}")
        elif node.state == NodeState.CLOSED:
            lines.append(f"- {node.id}: closed {node.category} in {node.room_id or '?'}")
    lines.append("Observed objects:")
    for node in graph.nodes(layer=Layer.OBJECT):
        if node.state != NodeState.CLOSED:
            where = f"{node.parent_id}" if node.parent_id and node.parent_id != node.room_id else node.room_id
            lines.append(f"- {node.id}: {node.category} in {where or '?'}")
    return "\n".join(lines)
