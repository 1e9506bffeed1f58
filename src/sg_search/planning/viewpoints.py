"""Visibility-based viewpoint selection (MSGNav's VVD) for the final approach to an object.

Candidates lie on circles of ``radii`` metres around the target points' centroid,
``per_circle`` on each, kept if their cell is traversable (and reachable, given a distance
field). For a candidate v and each target point p, the segment v-p shortened by ``margin``
(tau) at both ends is *visible* when every point on it stays at least tau away from every
scene point (the target's own points excluded). Score = fraction of visible target
points. Distances between segment samples and the scene come from one KD-tree query.
Frame ``map``, metres; the viewpoint's height is the camera height.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from sg_search.geometry.box import Box3D
from sg_search.mapping.grid import GridSpec

if TYPE_CHECKING:
    from sg_search.planning.geodesic import DistanceField

FAILED_SPACING_M = 0.3  # a goal this close to one the base failed to reach is not tried again
AXES = ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))
Coords = Sequence[float] | NDArray[np.float64]  # a point or a size [m]


@dataclass(frozen=True)
class ViewpointParams:
    """Circle radii [m], candidates per circle, clearance margin tau [m], camera height [m], and
    ``path_cost`` [1/m]: how much visibility (a fraction) a metre of path to a viewpoint costs."""

    radii: tuple[float, ...] = (0.8, 1.2, 1.6)
    per_circle: int = 16
    margin: float = 0.1
    camera_height: float = 0.9
    max_target_points: int = 200
    path_cost: float = 0.0


@dataclass(frozen=True)
class Face:
    """The faces of a container's box (``centre``, full ``size`` [m], ``map``) it may open
    towards, likeliest first: ``directions``, unit vectors (x, y). ``room``: its room's box, if
    known: goals outside its footprint come last (a kitchen cabinet against a wall is not opened
    from the room behind that wall). ``refused``: sides it would not open from; no goal is taken
    from which the base would face one of them."""

    directions: tuple[tuple[float, float], ...]
    centre: Coords
    size: Coords
    room: Box3D | None = None
    refused: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class Viewpoint:
    """A scored viewpoint: position [m], yaw facing the target [rad], score in [0, 1], path [m]."""

    xy: tuple[float, float]
    yaw: float
    score: float
    distance: float


def visibility_score(
    viewpoint: NDArray[np.float64], target: NDArray[np.float64], scene: cKDTree | None, margin: float
) -> float:
    """Fraction of ``target`` points (N, 3) visible from ``viewpoint`` (3,) past ``scene``."""
    if len(target) == 0:
        return 0.0
    if scene is None or scene.n == 0:
        return 1.0
    offsets = target - viewpoint
    lengths = np.linalg.norm(offsets, axis=1)
    usable = lengths > 2 * margin
    steps = max(2, int(np.ceil(lengths.max() / (margin / 2.0))) + 1)
    t = np.linspace(0.0, 1.0, steps)
    # points along each shortened segment: from v + tau*u to p - tau*u
    unit = offsets / np.maximum(lengths, 1e-9)[:, None]
    start = viewpoint + margin * unit
    span = np.maximum(lengths - 2 * margin, 0.0)
    samples = start[:, None, :] + unit[:, None, :] * (span[:, None] * t[None, :])[:, :, None]
    distances, _ = scene.query(samples.reshape(-1, 3), k=1, distance_upper_bound=margin)
    clear = np.isinf(distances).reshape(len(target), steps).all(axis=1)
    return float((clear & usable).mean())


def select_viewpoints(
    target_points: NDArray[np.float64],
    scene_points: NDArray[np.float64],
    free: NDArray[np.bool_],
    spec: GridSpec,
    params: ViewpointParams,
    distance: NDArray[np.float64] | None = None,
    seen_free: NDArray[np.bool_] | None = None,
) -> list[Viewpoint]:
    """Candidate viewpoints: those on cells seen to be free (``seen_free``) before those in
    unmapped space, which the planner treats as free but may be wall or furniture; then best
    score less ``params.path_cost`` per metre of path first (to 0.1), then shortest path."""
    target = np.asarray(target_points, dtype=float).reshape(-1, 3)
    if len(target) == 0:
        raise ValueError("select_viewpoints needs at least one target point")
    if len(target) > params.max_target_points:
        target = target[np.linspace(0, len(target) - 1, params.max_target_points).astype(int)]
    scene = np.asarray(scene_points, dtype=float).reshape(-1, 3)
    tree = cKDTree(scene) if len(scene) else None
    centre = target.mean(axis=0)
    angles = np.linspace(0.0, 2 * np.pi, params.per_circle, endpoint=False)
    out: list[Viewpoint] = []
    unseen: list[bool] = []
    for radius in params.radii:
        xy = centre[:2] + radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
        cells = spec.to_cells(xy)
        for (x, y), (r, c) in zip(xy, cells, strict=True):
            if not spec.inside(np.array([[r, c]]))[0] or not free[r, c]:
                continue
            path = float(distance[r, c]) if distance is not None else 0.0
            if not np.isfinite(path):
                continue
            v = np.array([x, y, params.camera_height])
            score = visibility_score(v, target, tree, params.margin)
            yaw = float(np.arctan2(centre[1] - y, centre[0] - x))
            out.append(Viewpoint((float(x), float(y)), yaw, score, path))
            unseen.append(seen_free is not None and not seen_free[r, c])
    worth = [v.score - params.path_cost * v.distance for v in out]
    order = sorted(range(len(out)), key=lambda i: (unseen[i], -round(worth[i], 1), out[i].distance))
    return [out[i] for i in order]


def box_viewpoints(
    centre: NDArray[np.float64],
    size: NDArray[np.float64],
    states: NDArray[np.int8],
    free: NDArray[np.bool_],
    spec: GridSpec,
    params: ViewpointParams,
    distance: NDArray[np.float64] | None = None,
    obstacle_heights: tuple[float, float] = (0.1, 1.5),
) -> list[Viewpoint]:
    """Viewpoints of a scene-graph node's box (centre and full size [m], ``map``): its 27
    corner/edge/centre points are the targets; the scene is the map's occupied cells within
    3 m, extruded over ``obstacle_heights`` [m], minus the box itself."""
    from sg_search.mapping.occupancy import FREE, OCCUPIED

    half = np.asarray(size, dtype=float) / 2.0
    grid = np.stack(np.meshgrid(*([np.linspace(-1.0, 1.0, 3)] * 3)), axis=-1).reshape(-1, 3)
    target = np.asarray(centre, dtype=float) + grid * half
    xy = spec.to_metres(np.argwhere(states == OCCUPIED))
    near = xy[np.linalg.norm(xy - np.asarray(centre)[:2], axis=1) < 3.0]
    heights = np.arange(obstacle_heights[0], obstacle_heights[1], spec.resolution * 4)
    scene = np.array([[x, y, z] for x, y in near for z in heights]).reshape(-1, 3)
    inside = np.all(np.abs(scene - centre) <= half + spec.resolution, axis=1)
    return select_viewpoints(target, scene[~inside], free, spec, params, distance, states == FREE)


def reach_points(
    centre_xy: tuple[float, float],
    free: NDArray[np.bool_],
    spec: GridSpec,
    distance: NDArray[np.float64],
    reach_m: float,
    limit: int = 8,
) -> list[tuple[float, float]]:
    """Reachable traversable cell centres [m] within ``reach_m`` (horizontal) of ``centre_xy``,
    nearest to it first (then shortest path), at most ``limit``: where the base can stand to be
    within reach of an object that no viewpoint circle reaches (in the middle of a bed)."""
    span = int(np.ceil(reach_m / spec.resolution)) + 1
    ((row, col),) = spec.to_cells(np.array([centre_xy]))
    rows = np.arange(max(0, row - span), min(spec.height, row + span + 1))
    cols = np.arange(max(0, col - span), min(spec.width, col + span + 1))
    if not len(rows) or not len(cols):
        return []
    rr, cc = np.meshgrid(rows, cols, indexing="ij")
    xy = spec.to_metres(np.stack([rr.ravel(), cc.ravel()], axis=1))
    gap = np.hypot(xy[:, 0] - centre_xy[0], xy[:, 1] - centre_xy[1])
    path = distance[rr.ravel(), cc.ravel()]
    ok = (gap <= reach_m) & free[rr.ravel(), cc.ravel()] & np.isfinite(path)
    order = np.lexsort((path[ok], gap[ok]))[:limit]
    return [(float(x), float(y)) for x, y in xy[ok][order]]


def opening_sides(
    centre: Coords,
    size: Coords,
    room_min: Coords,
    room_max: Coords,
    refused: Sequence[tuple[float, float]] = (),
) -> tuple[tuple[float, float], ...]:
    """Unit vectors (x, y) of the sides a container may open towards, likeliest first, from its
    box (centre, full size [m], ``map``) and its room's extent (lower and upper corner [m]):
    away from the room's nearest edge first, as furniture stands with its back to a wall (a box
    past the room's extent on a side, a kitchen run the free space ends at, has its back
    there), then away from the next nearest edge. Sides in ``refused`` (it would not open from
    there) are left out."""
    gaps = {
        AXES[0]: centre[0] - size[0] / 2 - room_min[0],
        AXES[1]: room_max[0] - (centre[0] + size[0] / 2),
        AXES[2]: centre[1] - size[1] / 2 - room_min[1],
        AXES[3]: room_max[1] - (centre[1] + size[1] / 2),
    }
    return tuple(sorted((axis for axis in AXES if axis not in refused), key=lambda axis: gaps[axis]))


def half_extent(size: Coords, axis: Coords) -> float:
    """Half the box's extent [m] along the unit vector ``axis`` (x, y), from its full size."""
    return float(abs(axis[0]) * size[0] / 2 + abs(axis[1]) * size[1] / 2)


def beyond_face(point: Coords, centre: Coords, size: Coords, axis: Coords) -> float:
    """How far [m] ``point`` (x, y) lies past the box's face towards ``axis``."""
    return (point[0] - centre[0]) * axis[0] + (point[1] - centre[1]) * axis[1] - half_extent(size, axis)


def side_towards(centre: Coords, size: Coords, point: Coords) -> tuple[float, float]:
    """The face of the box (centre, full size [m], ``map``) that ``point`` (x, y) [m] lies
    farthest beyond, as a unit vector (x, y): the side a base standing there sees it from."""
    return max(AXES, key=lambda axis: beyond_face(point, centre, size, axis))


def in_front(goal: Coords, centre: Coords, size: Coords, front: Coords) -> bool:
    """True if ``goal`` (x, y) [m] lies ahead of the box's face towards the unit vector
    ``front`` (the half-plane beyond that face)."""
    return beyond_face(goal, centre, size, front) > 0


def facing_square(goal: Coords, centre: Coords, size: Coords, front: Coords) -> bool:
    """True if ``goal`` (x, y) [m] lies in front of the box's face towards ``front`` and
    within the face's width: an opened hinged door does not stand between it and the inside,
    as it does for a goal off to the side of the face."""
    lateral = abs((goal[0] - centre[0]) * front[1] - (goal[1] - centre[1]) * front[0])
    return in_front(goal, centre, size, front) and lateral <= half_extent(size, (front[1], front[0]))


def approach_goal(
    centre: NDArray[np.float64],
    size: NDArray[np.float64],
    states: NDArray[np.int8],
    fields: Iterable[tuple[NDArray[np.bool_], DistanceField]],
    spec: GridSpec,
    params: ViewpointParams,
    obstacle_heights: tuple[float, float],
    reach_m: float | None = None,
    failed: Sequence[tuple[float, float]] = (),
    face: Face | None = None,
) -> tuple[float, float] | None:
    """Where the base should go to see a node's box (centre, size [m], ``map``), or to be
    within ``reach_m`` [m] of its centre to manipulate it: the best viewpoint (``params``'
    circles) at the safest clearance of ``fields`` (traversable cells and distance field from
    the base, safest first) that has one; within reach, also the reachable cells nearest the
    centre, for an object no circle reaches. Goals within ``FAILED_SPACING_M`` of ``failed``
    ones are left out. With ``face`` (of the container itself, or of the open one the object
    lies in), goals in front of one of its faces and within that face's width come first, the
    likeliest face first, at any clearance (a side blocked by a wall or a neighbouring cabinet
    has none: so the front is read from free space, the estimate only ordering the faces);
    then those in front of the likeliest face off to a side (an opened hinged door can stand
    between them and the shelves); then the others; goals outside the face's room last, and
    none before a side it was refused from. The safest clearance first within each. None when
    there is none. The in-process world and the frontier planner
    node both choose with this."""
    face = face if face is not None and face.directions else None
    best: tuple[tuple[int, int], tuple[float, float]] | None = None  # (rank, goal), the lowest rank first
    for free, field in fields:
        views = box_viewpoints(centre, size, states, free, spec, params, field.distance, obstacle_heights)
        goals = [v.xy for v in views]
        if reach_m is not None:
            goals += reach_points((float(centre[0]), float(centre[1])), free, spec, field.distance, reach_m)
        goals = [g for g in goals if all(math.dist(g, f) > FAILED_SPACING_M for f in failed)]
        if face is None:
            if goals:
                return goals[0]
            continue
        for goal in goals:
            rank = _face_rank(face, goal)
            if rank is not None and (best is None or rank < best[0]):
                best = (rank, goal)
        if best is not None and best[0] == (0, 0):  # in the room, square before the likeliest face: the best
            return best[1]
    return best[1] if best is not None else None


def _face_rank(face: Face, goal: tuple[float, float]) -> tuple[int, int] | None:
    """:func:`approach_goal`'s order of a goal for ``face``: (0 in its room or 1 beyond it,
    then the index of the face it stands square before, or after those, ahead of the likeliest
    face, or anywhere else); None before a refused side."""
    if side_towards(face.centre, face.size, goal) in face.refused:
        return None
    directions = face.directions
    place = next(
        (i for i, d in enumerate(directions) if facing_square(goal, face.centre, face.size, d)),
        len(directions) if in_front(goal, face.centre, face.size, directions[0]) else len(directions) + 1,
    )
    in_room = face.room is None or face.room.contains_xy((goal[0], goal[1], 0.0))
    return (0 if in_room else 1, place)
