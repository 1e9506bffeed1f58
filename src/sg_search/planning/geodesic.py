"""Geodesic distance fields on the occupancy grid, and paths along them (``map``, metres).

Traversable cells are FREE (and UNKNOWN if ``unknown_is_free``) and at least
``robot_radius`` away from every OCCUPIED cell. One distance field from the robot answers
the distance to every candidate target at once (what SCOUT's selection needs). The field
is computed with the Fast Marching Method (scikit-fmm; Euclidean-consistent, no 8-neighbour
metrication error); :func:`dijkstra_field` is the graph-search alternative the benchmark
compares it with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import skfmm
from numpy.typing import NDArray
from scipy import ndimage, sparse
from scipy.sparse import csgraph

from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, OCCUPIED, UNKNOWN

Cell = tuple[int, int]


class PlanningError(RuntimeError):
    """No path: the message says why; ``outside_map`` tells an invalid goal from a blocked one."""

    def __init__(self, message: str, outside_map: bool = False) -> None:
        super().__init__(message)
        self.outside_map = outside_map


@dataclass(frozen=True)
class PlannerParams:
    """Robot radius and search options [m]."""

    robot_radius: float = 0.25
    unknown_is_free: bool = False
    snap_radius: float = 0.5


def traversable(states: NDArray[np.int8], spec: GridSpec, params: PlannerParams) -> NDArray[np.bool_]:
    """Cells the robot's centre may occupy."""
    allowed = states == FREE
    if params.unknown_is_free:
        allowed |= states == UNKNOWN
    occupied = states == OCCUPIED
    if not occupied.any() or not allowed.any():
        return np.asarray(allowed, dtype=bool)
    # the clearance only matters near allowed cells: work in their bounding box (+ radius)
    margin = int(np.ceil(params.robot_radius / spec.resolution)) + 1
    rows, cols = np.nonzero(allowed.any(axis=1))[0], np.nonzero(allowed.any(axis=0))[0]
    box = (
        slice(max(0, rows[0] - margin), rows[-1] + margin + 1),
        slice(max(0, cols[0] - margin), cols[-1] + margin + 1),
    )
    clearance = ndimage.distance_transform_edt(~occupied[box]) * spec.resolution
    allowed[box] &= clearance > params.robot_radius
    return np.asarray(allowed, dtype=bool)


class DistanceField:
    """Geodesic distance [m] from one start point to every traversable cell (inf elsewhere)."""

    def __init__(
        self, free: NDArray[np.bool_], spec: GridSpec, start_xy: tuple[float, float], params: PlannerParams
    ) -> None:
        self.spec = spec
        self.free = free
        self.params = params
        self.start = snap_to_free(free, spec, start_xy, params.snap_radius, "start")
        # March only over the bounding box of the start's connected free region (exact: the
        # rest is unreachable); on a mostly unknown map that is a small part of the grid.
        region = connected_region(free, self.start)
        rows, cols = np.nonzero(np.any(region, axis=1))[0], np.nonzero(np.any(region, axis=0))[0]
        box = (slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1))
        phi = np.ones(region[box].shape)
        phi[self.start[0] - rows[0], self.start[1] - cols[0]] = -1.0
        distance = np.full(free.shape, np.inf)
        try:
            field = skfmm.distance(np.ma.MaskedArray(phi, mask=~region[box]), dx=spec.resolution)
            distance[box] = np.asarray(np.ma.filled(field, np.inf), dtype=float)
        except ValueError:  # no 4-connected neighbour of the start: FMM has no front; Dijkstra does
            distance = dijkstra_field(region, spec, self.start)
        distance[~region] = np.inf
        # skfmm measures from the zero level set, half a cell from the start cell's centre
        distance[np.isfinite(distance)] += spec.resolution / 2.0
        distance[self.start] = 0.0
        self.distance = distance

    def distance_to(self, xy: tuple[float, float]) -> float:
        """Geodesic distance to ``xy`` [m]; a target inside an obstacle is measured to the nearest
        traversable cell within ``snap_radius``; inf if unreachable or off the map."""
        try:
            cell = snap_to_free(self.free, self.spec, xy, self.params.snap_radius, "target")
        except PlanningError:
            return float("inf")
        return float(self.distance[cell])

    def distances_to(self, points: NDArray[np.float64]) -> NDArray[np.float64]:
        """:meth:`distance_to` for (N, 2) points."""
        return np.array(
            [self.distance_to((float(x), float(y))) for x, y in np.asarray(points).reshape(-1, 2)]
        )

    def path_to(self, goal_xy: tuple[float, float]) -> NDArray[np.float64]:
        """Waypoints (N, 2) from the start to ``goal_xy`` by steepest descent; PlanningError if none."""
        goal = snap_to_free(self.free, self.spec, goal_xy, self.params.snap_radius, "goal")
        if not np.isfinite(self.distance[goal]):
            raise PlanningError(f"goal {goal_xy} is not reachable from the start")
        cells = [goal]
        rows, cols = self.free.shape
        current = goal
        for _ in range(rows * cols):
            if current == self.start:
                break
            r, c = current
            best, best_value = current, self.distance[current]
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    nr, nc = r + dr, c + dc
                    if 0 <= nr < rows and 0 <= nc < cols and self.distance[nr, nc] < best_value:
                        best, best_value = (nr, nc), self.distance[nr, nc]
            if best == current:
                raise PlanningError(f"descent stalled at cell {current}")
            current = best
            cells.append(current)
        path = self.spec.to_metres(np.array(cells[::-1]))
        return smooth_path(path, self.free, self.spec)


def connected_region(free: NDArray[np.bool_], cell: Cell) -> NDArray[np.bool_]:
    """The traversable cells 8-connected to ``cell`` (itself traversable), as a mask."""
    labels, _ = ndimage.label(free, structure=np.ones((3, 3), dtype=bool))
    return np.asarray(labels == labels[cell], dtype=bool)


def snap_to_free(
    free: NDArray[np.bool_], spec: GridSpec, xy: tuple[float, float], radius: float, what: str
) -> Cell:
    """The traversable cell at ``xy`` or, if blocked, the nearest one within ``radius`` metres."""
    cell = spec.to_cells(np.array([xy]))[0]
    if not spec.inside(cell[None])[0]:
        raise PlanningError(f"{what} {xy} is outside the map", outside_map=True)
    r, c = int(cell[0]), int(cell[1])
    if free[r, c]:
        return (r, c)
    reach = int(np.ceil(radius / spec.resolution))
    r0, r1 = max(0, r - reach), min(free.shape[0], r + reach + 1)
    c0, c1 = max(0, c - reach), min(free.shape[1], c + reach + 1)
    rr, cc = np.nonzero(free[r0:r1, c0:c1])
    if len(rr) == 0:
        raise PlanningError(
            f"{what} {xy} is in an obstacle or unknown space (nothing free within {radius} m)"
        )
    d = (rr + r0 - r) ** 2 + (cc + c0 - c) ** 2
    i = int(np.argmin(d))
    return (int(rr[i] + r0), int(cc[i] + c0))


def line_is_free(
    free: NDArray[np.bool_], spec: GridSpec, a: NDArray[np.float64], b: NDArray[np.float64]
) -> bool:
    """True if every cell along the straight segment a-b is traversable."""
    n = max(2, int(np.ceil(np.linalg.norm(b - a) / (spec.resolution * 0.5))) + 1)
    samples = a + (b - a) * np.linspace(0.0, 1.0, n)[:, None]
    cells = spec.to_cells(samples)
    if not spec.inside(cells).all():
        return False
    return bool(free[cells[:, 0], cells[:, 1]].all())


def smooth_path(path: NDArray[np.float64], free: NDArray[np.bool_], spec: GridSpec) -> NDArray[np.float64]:
    """Greedy line-of-sight shortcutting: keep a waypoint only where the straight line breaks."""
    if len(path) <= 2:
        return path
    kept = [path[0]]
    i = 0
    while i < len(path) - 1:
        j = len(path) - 1
        while j > i + 1 and not line_is_free(free, spec, path[i], path[j]):
            j -= 1
        kept.append(path[j])
        i = j
    return np.array(kept)


def path_length(path: NDArray[np.float64]) -> float:
    """Length of a polyline [m]."""
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0


def dijkstra_field(free: NDArray[np.bool_], spec: GridSpec, start: Cell) -> NDArray[np.float64]:
    """8-connected Dijkstra distances [m] over traversable cells (for comparison with FMM)."""
    rows, cols = free.shape
    index = np.arange(rows * cols).reshape(rows, cols)
    sources, targets, weights = [], [], []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        a = free[max(0, -dr) : rows - max(0, dr), max(0, -dc) : cols - max(0, dc)]
        b = free[max(0, dr) : rows + min(0, dr) or None, max(0, dc) : cols + min(0, dc) or None]
        ok = a & b
        ia = index[max(0, -dr) : rows - max(0, dr), max(0, -dc) : cols - max(0, dc)][ok]
        ib = index[max(0, dr) : rows + min(0, dr) or None, max(0, dc) : cols + min(0, dc) or None][ok]
        sources.append(ia)
        targets.append(ib)
        weights.append(np.full(len(ia), spec.resolution * np.hypot(dr, dc)))
    graph = sparse.coo_matrix(
        (np.concatenate(weights), (np.concatenate(sources), np.concatenate(targets))),
        shape=(rows * cols,) * 2,
    ).tocsr()
    dist = csgraph.dijkstra(graph, directed=False, indices=index[start])
    out = np.asarray(dist, dtype=float).reshape(rows, cols)
    out[~free] = np.inf
    return out
