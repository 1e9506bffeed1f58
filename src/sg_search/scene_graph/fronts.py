"""Which way a container in the graph opens: away from the nearest edge of its room's box
first (:func:`~sg_search.planning.viewpoints.opening_sides`), so that the base opens a door
and looks in from the front, not from beside it or from behind a wall. The estimate can be
wrong (a segmented room reaches past a wall): the approach takes the likeliest side that has
room to stand squarely in front of it, and :class:`RefusedFronts` keeps the sides a container
would not open from. Frame ``map``."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from sg_search.mapping.grid import GridSpec
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.geodesic import DistanceField
from sg_search.planning.viewpoints import AXES, Face, approach_goal, half_extent, opening_sides, side_towards
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import Affordance, SceneNode
from sg_search.scene_graph.observations import holding_relation

Front = tuple[float, float]  # unit vector (x, y) in ``map``

FACE_CLEARANCE_M = 0.25
"""[m] A standing point is at least this far beyond the face it opens, so that it lies off the
box of a deep container (a fridge 0.9 m deep), whose middle reach circle ends inside it."""


def opening_fronts(
    node: SceneNode, room: SceneNode | None, refused: Sequence[Front] = ()
) -> tuple[Front, ...]:
    """Unit vectors (x, y) a container may open towards, likeliest first, less the ``refused``
    sides; none for a node that does not open, or without a box for it or for its ``room``."""
    if not node.affordances & Affordance.OPENABLE or node.bbox is None or room is None or room.bbox is None:
        return ()
    return opening_sides(node.bbox.center, node.bbox.size, room.bbox.minimum, room.bbox.maximum, refused)


def opening_front(node: SceneNode, room: SceneNode | None, refused: Sequence[Front] = ()) -> Front | None:
    """The likeliest of :func:`opening_fronts`, or None."""
    return next(iter(opening_fronts(node, room, refused)), None)


def approach_face(
    node: SceneNode,
    lookup: Callable[[str], SceneNode | None],
    inside: bool,
    base_xy: Sequence[float],
    refused: Sequence[Front] = (),
) -> Face | None:
    """The faces to approach ``node`` from: a container's :func:`opening_fronts` (less the
    ``refused`` sides); for an object ``inside`` its parent container, the side of that
    container the base at ``base_xy`` [m] stands beyond, where it was seen from into the opened
    container; None otherwise. The face carries the container's room's box (goals in the room
    first). ``lookup`` finds nodes by id (the room, the parent)."""
    if node.affordances & Affordance.OPENABLE:
        room = lookup(node.room_id)
        directions = opening_fronts(node, room, refused)
        box = node.bbox
        if not directions or box is None:
            return None
        return Face(directions, box.center, box.size, room.bbox if room is not None else None, tuple(refused))
    holder = lookup(node.parent_id) if inside else None
    if holder is None or holder.bbox is None:
        return None
    box = holder.bbox
    room = lookup(holder.room_id)
    side = side_towards(box.center, box.size, base_xy)
    return Face((side,), box.center, box.size, room.bbox if room is not None else None)


def standing_points(
    node: SceneNode,
    lookup: Callable[[str], SceneNode | None],
    reach_radii: Sequence[float],
    refused: Sequence[Front] = (),
) -> tuple[tuple[float, float], ...]:
    """Where the base would stand to open ``node`` [m, ``map``]: before each face it may open
    towards (less the ``refused`` sides, as its approach leaves them out), likeliest first, at
    the middle of ``reach_radii`` [m] from the box's centre (the planner's circles of
    viewpoints within reach) and at least :data:`FACE_CLEARANCE_M` beyond the face; anything
    that does not open (or has no box or room box): its position (x, y)."""
    fronts = opening_fronts(node, lookup(node.room_id), refused)
    if not fronts or node.bbox is None:
        return ((node.position[0], node.position[1]),)
    cx, cy, _ = node.bbox.center
    standoff = statistics.median(reach_radii)
    outs = [max(standoff, half_extent(node.bbox.size, front) + FACE_CLEARANCE_M) for front in fronts]
    return tuple((cx + f[0] * out, cy + f[1] * out) for f, out in zip(fronts, outs, strict=True))


def node_viewpoint(
    graph: SceneGraph,
    node: SceneNode,
    base_xy: Sequence[float],
    refused: Sequence[Front],
    states: NDArray[np.int8],
    fields: Iterable[tuple[NDArray[np.bool_], DistanceField]],
    spec: GridSpec,
    config: FrontierPlannerConfig,
    within_reach: bool,
    failed: Sequence[tuple[float, float]] = (),
) -> tuple[float, float] | None:
    """Where the base at ``base_xy`` [m, ``map``] goes to see ``node`` (or to be within reach
    of it): :func:`~sg_search.planning.viewpoints.approach_goal` over its box (a node without
    one: at its position), before its :func:`approach_face` less the ``refused`` sides, on the
    map's ``states`` and distance ``fields`` from the base, away from the ``failed`` goals.
    Both wirings choose with this; None when no viewpoint has a way."""
    inside = holding_relation(graph, node) == "inside"
    face = approach_face(node, graph.get, inside, base_xy, refused)
    centre = np.array(node.bbox.center if node.bbox is not None else node.position, dtype=float)
    size = np.array(node.bbox.size if node.bbox is not None else (0.0, 0.0, 0.0), dtype=float)
    return approach_goal(
        centre, size, states, fields, spec, config.viewpoints(within_reach),
        (config.obstacle_min_z, config.obstacle_max_z), config.reach_m if within_reach else None,
        failed, face,
    )  # fmt: skip


def measured_at(
    node: SceneNode,
    lookup: Callable[[str], SceneNode | None],
    reach_radii: Sequence[float],
    refused: Sequence[Front],
    frontier_goals: Mapping[str, tuple[float, float]],
) -> tuple[tuple[float, float], ...]:
    """Where a reasoner's distance to ``node`` is measured to [m, ``map``], the way to the
    first of them that has one counting (:func:`approach_distance`): a frontier at its goal
    (``frontier_goals``, by id: the reachable cell a drive to it goes to, not its centroid),
    anything else at its :func:`standing_points`. Both wirings measure so."""
    goal = frontier_goals.get(node.id)
    return (goal,) if goal is not None else standing_points(node, lookup, reach_radii, refused)


def approach_distance(ways: Iterable[float]) -> float:
    """A node's distance for reasoners from the ways [m] to its :func:`standing_points`, taken
    in order until one is finite: the first with a way (the approach takes the likeliest face
    that has room before it, so a cabinet in a kitchen island is opened from the far side
    however near its back stands); inf if none has."""
    return next((w for w in ways if math.isfinite(w)), math.inf)


def handle_pose(node: SceneNode, front: Front) -> tuple[tuple[float, float, float], float] | None:
    """Where an opening skill takes hold of a container that opens towards ``front``: the
    centre [m] of that face, and its outward yaw [rad] (the HSR driver's ``OpenContainer``
    handle); None without a box."""
    if node.bbox is None:
        return None
    cx, cy, cz = node.bbox.center
    half_depth = half_extent(node.bbox.size, front)
    return (cx + front[0] * half_depth, cy + front[1] * half_depth, cz), math.atan2(front[1], front[0])


def facing_side(node: SceneNode, base_xy: Sequence[float]) -> Front | None:
    """The side of the container's box the base at ``base_xy`` [m] stands beyond (the one it
    tries to open), or None without a box."""
    box = node.bbox
    return side_towards(box.center, box.size, base_xy) if box is not None else None


class RefusedFronts:
    """The sides each container (by node id) would not open from: an open refused where the base
    stood rules that side out of the next approach."""

    def __init__(self) -> None:
        self._by_node: dict[str, tuple[Front, ...]] = {}

    def of(self, node_id: str) -> tuple[Front, ...]:
        """The sides ``node_id`` was refused from, first refusal first."""
        return self._by_node.get(node_id, ())

    def refuse(self, node: SceneNode, base_xy: Sequence[float]) -> bool:
        """Record that ``node`` did not open from the side the base at ``base_xy`` [m] stands
        beyond; True if a side is left to try."""
        side = facing_side(node, base_xy)
        if side is None:
            return False
        if side not in self.of(node.id):
            self._by_node[node.id] = (*self.of(node.id), side)
        return len(self.of(node.id)) < len(AXES)
