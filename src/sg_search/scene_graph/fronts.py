"""Which way a container in the graph opens: away from the nearest edge of its room's box
(:func:`~sg_search.planning.viewpoints.opening_side`), so that the base opens a door and looks
in from the front, not from beside it or from behind a wall. Frame ``map``."""

from __future__ import annotations

import math

from sg_search.planning.viewpoints import opening_side
from sg_search.scene_graph.model import Affordance, SceneNode


def opening_front(node: SceneNode, room: SceneNode | None) -> tuple[float, float] | None:
    """Unit vector (x, y) a container opens towards; None for a node that does not open, or
    without a box for it or for its ``room``."""
    if not node.affordances & Affordance.OPENABLE or node.bbox is None or room is None or room.bbox is None:
        return None
    return opening_side(node.bbox.center, node.bbox.size, room.bbox.minimum, room.bbox.maximum)


def handle_pose(node: SceneNode, room: SceneNode | None) -> tuple[tuple[float, float, float], float] | None:
    """Where an opening skill takes hold of a container: the centre [m] of the face it opens
    towards, and that face's outward yaw [rad] (the HSR driver's ``OpenContainer`` handle);
    None where :func:`opening_front` is."""
    front = opening_front(node, room)
    if front is None or node.bbox is None:
        return None
    (cx, cy, cz), (sx, sy, _) = node.bbox.center, node.bbox.size
    half_depth = abs(front[0]) * sx / 2 + abs(front[1]) * sy / 2
    return (cx + front[0] * half_depth, cy + front[1] * half_depth, cz), math.atan2(front[1], front[0])
