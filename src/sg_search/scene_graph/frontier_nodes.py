"""Frontier nodes from the planner's frontier segments (``map`` frame, metres).

Each call carries the complete current set: frontiers not in it are removed. A frontier
is a REGION-layer node of kind "frontier" in the room that contains its centroid (or
under the building when no room does), navigable, and unexplored until it disappears.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import Affordance, Layer, NodeState, SceneNode, Vec3


@dataclass(frozen=True)
class FrontierObservation:
    """A frontier segment: centroid and goal cell [m], cell count, length [m]."""

    frontier_id: str
    centroid: Vec3
    goal: Vec3
    size: int = 1
    length: float = 0.0


def integrate_frontiers(graph: SceneGraph, frontiers: Sequence[FrontierObservation]) -> list[str]:
    """Replace the graph's frontier nodes with ``frontiers``; return the ids removed.

    ValueError (graph unchanged) on empty or duplicate ids, non-finite positions, or an id
    that belongs to a node that is not a frontier.
    """
    ids = [f.frontier_id for f in frontiers]
    if len(ids) != len(set(ids)):
        raise ValueError(f"duplicate frontier ids in {ids}")
    for f in frontiers:
        if not f.frontier_id:
            raise ValueError("frontier with an empty id")
        if not all(math.isfinite(v) for v in (*f.centroid, *f.goal)):
            raise ValueError(f"frontier {f.frontier_id!r}: position is not finite")
        old = graph.get(f.frontier_id)
        if old is not None and old.kind != "frontier":
            raise ValueError(f"frontier id {f.frontier_id!r} collides with a {old.kind} node")
    rooms = graph.rooms()
    fallback = next((n.id for n in graph.nodes(layer=Layer.BUILDING)), "")
    removed = []
    with graph.transaction():
        for node in graph.nodes(kind="frontier"):
            if node.id not in set(ids):
                graph.remove_node(node.id)
                removed.append(node.id)
        for f in frontiers:
            room = next((r.id for r in rooms if r.bbox is not None and r.bbox.contains_xy(f.centroid)), "")
            graph.upsert_node(
                SceneNode(
                    id=f.frontier_id,
                    layer=Layer.REGION,
                    kind="frontier",
                    category="frontier",
                    position=f.centroid,
                    parent_id=room or fallback,
                    room_id=room,
                    affordances=Affordance.NAVIGABLE,
                    state=NodeState.UNEXPLORED,
                    observation_count=max(1, f.size),
                )
            )
    return removed
