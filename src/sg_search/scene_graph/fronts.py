"""Which way a container in the graph opens: away from the nearest edge of its room's box
(:func:`~sg_search.planning.viewpoints.opening_side`), so that the base opens a door and looks
in from the front, not from beside it or from behind a wall. The estimate can be wrong (a
segmented room reaches past a wall): :class:`RefusedFronts` keeps the sides a container would
not open from, and the next estimate passes over them. Frame ``map``."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from sg_search.planning.viewpoints import Face, opening_side, side_towards
from sg_search.scene_graph.model import Affordance, SceneNode

Front = tuple[float, float]  # unit vector (x, y) in ``map``


def opening_front(node: SceneNode, room: SceneNode | None, refused: Sequence[Front] = ()) -> Front | None:
    """Unit vector (x, y) a container opens towards, other than the ``refused`` sides; None for
    a node that does not open, without a box for it or for its ``room``, or with every side
    refused."""
    if not node.affordances & Affordance.OPENABLE or node.bbox is None or room is None or room.bbox is None:
        return None
    return opening_side(node.bbox.center, node.bbox.size, room.bbox.minimum, room.bbox.maximum, refused)


def approach_face(
    node: SceneNode,
    lookup: Callable[[str], SceneNode | None],
    inside: bool,
    base_xy: tuple[float, float],
    refused: Sequence[Front] = (),
) -> Face | None:
    """The face to approach ``node`` from: a container's estimated front (less the ``refused``
    sides); for an object ``inside`` its parent container, the side of that container the base
    at ``base_xy`` [m] stands beyond, where it was seen from into the opened container (the
    estimate may be wrong there: a door opened from a corner); None otherwise. ``lookup``
    finds nodes by id (the room, the parent)."""
    if node.affordances & Affordance.OPENABLE:
        direction = opening_front(node, lookup(node.room_id), refused)
        return (
            None
            if direction is None or node.bbox is None
            else Face(direction, node.bbox.center, node.bbox.size)
        )
    holder = lookup(node.parent_id) if inside else None
    if holder is None or holder.bbox is None:
        return None
    box = holder.bbox
    return Face(side_towards(box.center, box.size, base_xy), box.center, box.size)


def handle_pose(
    node: SceneNode, room: SceneNode | None, refused: Sequence[Front] = ()
) -> tuple[tuple[float, float, float], float] | None:
    """Where an opening skill takes hold of a container: the centre [m] of the face it opens
    towards, and that face's outward yaw [rad] (the HSR driver's ``OpenContainer`` handle);
    None where :func:`opening_front` is."""
    front = opening_front(node, room, refused)
    if front is None or node.bbox is None:
        return None
    (cx, cy, cz), (sx, sy, _) = node.bbox.center, node.bbox.size
    half_depth = abs(front[0]) * sx / 2 + abs(front[1]) * sy / 2
    return (cx + front[0] * half_depth, cy + front[1] * half_depth, cz), math.atan2(front[1], front[0])


class RefusedFronts:
    """The sides each container (by node id) would not open from: an open that fails from
    in front of the estimated face rules that face out, and the base tries the next estimate."""

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[Front, ...]] = {}

    def of(self, node_id: str) -> tuple[Front, ...]:
        """The sides ``node_id`` was refused from, first refusal first."""
        return self._by_node.get(node_id, ())

    def refuse(self, node: SceneNode, room: SceneNode | None) -> bool:
        """Record that ``node`` did not open from the side estimated now; True if a side is
        left to try."""
        front = opening_front(node, room, self.of(node.id))
        if front is None:
            return False
        self._by_node[node.id] = (*self.of(node.id), front)
        return opening_front(node, room, self._by_node[node.id]) is not None
