"""Frontier segments: free cells next to unknown ones, grouped and filtered.

A frontier cell is FREE with at least one UNKNOWN 4-neighbour. Segments are 8-connected
groups of at least ``min_cells`` cells. Each segment gets a centroid, its length in metres
and a goal: the reachable free cell closest to its centroid (reachability from a geodesic
distance field, when given). Ids persist across updates when a segment's centroid stays
within ``match_distance`` metres of a previous one.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, UNKNOWN


@dataclass(frozen=True)
class FrontierSegment:
    """One frontier: centroid and goal in metres (``map``), size in cells, length [m]."""

    frontier_id: str
    centroid: tuple[float, float]
    goal: tuple[float, float]
    size: int
    length: float


def seen_beyond(goal: tuple[float, float], frontiers: Iterable[FrontierSegment], within_m: float) -> bool:
    """True when no frontier's goal lies within ``within_m`` [m] of a frontier's old ``goal``
    [m, ``map``]: the map has seen what lay beyond it (a drive there shows nothing new)."""
    return not any(math.dist(f.goal, goal) <= within_m for f in frontiers)


class FrontierExtractor:
    """Extracts frontiers and keeps their ids stable between calls."""

    def __init__(self, min_cells: int = 8, match_distance: float = 0.5) -> None:
        self.min_cells = min_cells
        self.match_distance = match_distance
        self._previous: list[FrontierSegment] = []
        self._ids = itertools.count()

    def extract(
        self, states: NDArray[np.int8], spec: GridSpec, distance: NDArray[np.float64] | None = None
    ) -> list[FrontierSegment]:
        """Frontier segments of ``states`` (OccupancyGrid values); unreachable ones dropped when
        ``distance`` (geodesic field from the robot, inf = unreachable) is given."""
        free = states == FREE
        unknown = states == UNKNOWN
        near_unknown = ndimage.binary_dilation(unknown, structure=ndimage.generate_binary_structure(2, 1))
        frontier = free & near_unknown
        labels, _ = ndimage.label(frontier, structure=np.ones((3, 3), dtype=bool))
        segments = []
        for index, cells in enumerate(ndimage.find_objects(labels), start=1):
            if cells is None:
                continue
            rows, cols = np.nonzero(labels[cells] == index)
            if len(rows) < self.min_cells:
                continue
            rows, cols = rows + cells[0].start, cols + cells[1].start
            member_cells = np.stack([rows, cols], axis=1)
            if distance is not None:
                reachable = np.isfinite(distance[rows, cols])
                if not reachable.any():
                    continue
                goal_candidates = member_cells[reachable]
            else:
                goal_candidates = member_cells
            centroid = spec.to_metres(member_cells).mean(axis=0)
            goal_xy = spec.to_metres(goal_candidates)
            goal = goal_xy[np.argmin(np.linalg.norm(goal_xy - centroid, axis=1))]
            extent = spec.to_metres(member_cells)
            length = float(np.linalg.norm(extent.max(axis=0) - extent.min(axis=0))) + spec.resolution
            segments.append((tuple(centroid), tuple(goal), len(rows), length))
        used: set[str] = set()
        result = []
        for c, g, n, length in sorted(segments, key=lambda s: -s[2]):  # big segments claim ids first
            frontier_id = self._match_id(c, used)
            used.add(frontier_id)
            centroid, goal = (float(c[0]), float(c[1])), (float(g[0]), float(g[1]))
            result.append(FrontierSegment(frontier_id, centroid, goal, n, length))
        self._previous = result
        return result

    def _match_id(self, centroid: tuple[float, ...], used: set[str]) -> str:
        best, best_distance = None, self.match_distance
        for old in self._previous:
            if old.frontier_id in used:
                continue
            d = float(np.hypot(old.centroid[0] - centroid[0], old.centroid[1] - centroid[1]))
            if d <= best_distance:
                best, best_distance = old, d
        return best.frontier_id if best is not None else f"frontier_{next(self._ids)}"
