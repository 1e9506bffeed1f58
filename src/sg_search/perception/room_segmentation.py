"""Rooms from geometry: segment explored free space at door-width narrowings, then name
each room from the objects in it.

Segmentation (a morphological watershed on the clearance map): cells whose distance to the
nearest non-free cell exceeds half a door plus a margin are room cores (a doorway, at most
``door_width`` wide, has none, so it separates them); cores smaller than
``min_core_area`` are dropped; every other free cell takes the label of the nearest core
through free space (grown one cell ring at a time); two regions whose common boundary is
longer than ``merge_boundary`` are one room joined by an opening wider than a door.
Grid: (row, column) = (y, x) cells of a :class:`~sg_search.mapping.grid.GridSpec` in ``map``.

Naming: a region's type maximises sum over its objects of log(p(type contains object) +
``floor``) from the knowledge model, with a long narrow region (its mean width, area over
length) with few objects called a corridor; a region without objects stays unnamed ("").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from sg_search.config import require_positive
from sg_search.mapping.grid import GridSpec


@dataclass(frozen=True)
class RoomSegmentationParams:
    """Geometry of rooms and doors [m, m^2], and naming; ``scene_graph_server: rooms:`` in
    config/sg_search.yaml (both the server and the in-process world read it).

    Attributes:
        door_width: widest doorway expected; narrower passages separate rooms.
        core_margin: room cores need clearance > door_width / 2 + core_margin.
        min_core_area: smaller cores (gaps between furniture) are not rooms of their own.
            With 0.1 m and 0.5 m^2 a room narrower than 1.8 m (a closet, a bathroom, a
            corridor whose far wall the map has not seen yet) had no core: its neighbour's
            label grew through the door into it, and a neighbour beyond it could then meet
            that region along a boundary long enough to merge all three.
        merge_boundary: regions sharing a boundary longer than this are merged (measured in
            cell edges: the boundary two regions grow in a 0.9 m doorway is jagged and counts
            up to ~3 m, so only openings several metres wide join rooms).
        corridor_max_width: a region at most this wide (its box's short side or its mean width) ...
        corridor_min_aspect: ... and at least this elongated, with at most
            ``corridor_max_objects`` objects, is a corridor.
        corridor_max_objects: see above.
        score_floor: added to every knowledge probability before the log.
    """

    door_width: float = 0.9
    core_margin: float = 0.05
    min_core_area: float = 0.3
    merge_boundary: float = 3.0
    corridor_max_width: float = 2.0
    corridor_min_aspect: float = 2.5
    corridor_max_objects: int = 2
    score_floor: float = 0.05

    def __post_init__(self) -> None:
        """ValueError naming a field out of range (a door width or merge boundary of 0 would
        merge every region, a floor of 0 take log(0))."""
        require_positive(self, ("door_width", "merge_boundary", "score_floor"), "room segmentation")
        least = {"core_margin": 0, "min_core_area": 0, "corridor_max_width": 0, "corridor_max_objects": 0,
                 "corridor_min_aspect": 1}  # fmt: skip
        for name, low in least.items():
            value = getattr(self, name)
            if not value >= low:  # NaN too
                raise ValueError(f"room segmentation parameter {name} must be >= {low}, got {value}")


@dataclass
class RoomSegmentation:
    """Region labels over a grid: 0 = not free (or unreachable from any core), 1..n = rooms.

    ``reach`` is how far [m] beyond free space :meth:`room_at` still answers (objects stand
    on furniture footprints, which the map holds as occupied)."""

    labels: NDArray[np.int32]
    spec: GridSpec
    reach: float = 1.0

    def __post_init__(self) -> None:
        self._filled = _grow(
            self.labels, np.ones(self.labels.shape, dtype=bool), int(self.reach / self.spec.resolution)
        )

    @property
    def count(self) -> int:
        """Number of rooms."""
        return int(self.labels.max(initial=0))

    def room_at(self, xy: NDArray[np.float64]) -> NDArray[np.int32]:
        """Room label of each (x, y) point [m] (0 outside every room)."""
        cells = self.spec.to_cells(np.atleast_2d(xy))
        inside = self.spec.inside(cells)
        out = np.zeros(len(cells), dtype=np.int32)
        out[inside] = self._filled[cells[inside, 0], cells[inside, 1]]
        return out

    def extent(self, label: int) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) [m] bounding the room's cells."""
        cells = np.argwhere(self.labels == label)
        lo, hi = (
            self.spec.to_metres(cells.min(axis=0)[None])[0],
            self.spec.to_metres(cells.max(axis=0)[None])[0],
        )
        half = self.spec.resolution / 2
        return float(lo[0] - half), float(lo[1] - half), float(hi[0] + half), float(hi[1] + half)


def segment_rooms(
    free: NDArray[np.bool_], spec: GridSpec, params: RoomSegmentationParams | None = None
) -> RoomSegmentation:
    """Rooms of the free cells ``free`` (module docstring)."""
    p = params or RoomSegmentationParams()
    if free.shape != spec.shape:
        raise ValueError(f"free-space mask is {free.shape} but the grid is {spec.shape}")
    labels = np.zeros(free.shape, dtype=np.int32)
    box = _bounding_box(free, 1)  # the explored part: the grid beyond it is all walls to every step
    if box is not None:
        labels[box] = _segment(free[box], spec.resolution, p)
    return RoomSegmentation(labels, spec)


def _segment(free: NDArray[np.bool_], res: float, p: RoomSegmentationParams) -> NDArray[np.int32]:
    clearance = ndimage.distance_transform_edt(free) * res
    cores, count = ndimage.label(clearance > p.door_width / 2 + p.core_margin, structure=np.ones((3, 3)))
    areas = ndimage.sum_labels(np.ones_like(cores), cores, index=np.arange(1, count + 1)) * res * res
    keep = np.concatenate([[0], np.cumsum(areas >= p.min_core_area) * (areas >= p.min_core_area)])
    labels = _grow(keep[cores].astype(np.int32), free)
    return _merge_wide_openings(labels, res, p.merge_boundary)


def _bounding_box(mask: NDArray[np.bool_], margin: int) -> tuple[slice, slice] | None:
    """The cells' bounding box widened by ``margin`` cells (within the grid); None if none."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if rows.size == 0:
        return None
    return (
        slice(max(int(rows[0]) - margin, 0), min(int(rows[-1]) + margin + 1, mask.shape[0])),
        slice(max(int(cols[0]) - margin, 0), min(int(cols[-1]) + margin + 1, mask.shape[1])),
    )


def _grow(
    labels: NDArray[np.int32], allowed: NDArray[np.bool_], passes: int | None = None
) -> NDArray[np.int32]:
    """Give unlabelled ``allowed`` cells the label of an 8-neighbour, one ring per pass; only
    within the box of the cells a pass can reach (the labels and allowed cells, and no farther
    than ``passes`` rings from a label), which is the same on a mostly unexplored grid."""
    seeds = labels > 0
    box = _bounding_box(seeds | allowed, 1)
    if box is None or not seeds.any():
        return labels.copy()
    if passes is not None:
        near = _bounding_box(seeds, passes + 1)
        assert near is not None
        rows, cols = (
            slice(max(a.start, b.start), min(a.stop, b.stop)) for a, b in zip(box, near, strict=True)
        )
        box = (rows, cols)
    out = labels.copy()
    out[box] = _grow_all(labels[box], allowed[box], passes)
    return out


def _grow_all(labels: NDArray[np.int32], allowed: NDArray[np.bool_], passes: int | None) -> NDArray[np.int32]:
    labels = labels.copy()
    done = 0
    while passes is None or done < passes:
        grown = ndimage.grey_dilation(labels, size=(3, 3))
        todo = allowed & (labels == 0) & (grown > 0)
        if not todo.any():
            break
        labels[todo] = grown[todo]
        done += 1
    return labels


def _merge_wide_openings(
    labels: NDArray[np.int32], resolution: float, min_boundary: float
) -> NDArray[np.int32]:
    """Merge regions whose 4-neighbour boundary is longer than ``min_boundary`` [m]; relabel 1..n."""
    n = int(labels.max(initial=0))
    parent = list(range(n + 1))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    pairs: list[NDArray[np.int32]] = []
    for a, b in ((labels[1:, :], labels[:-1, :]), (labels[:, 1:], labels[:, :-1])):
        touching = (a > 0) & (b > 0) & (a != b)
        pairs.append(np.sort(np.stack([a[touching], b[touching]], axis=1), axis=1))
    if n and any(len(x) for x in pairs):
        unique, counts = np.unique(np.concatenate(pairs), axis=0, return_counts=True)
        for (a, b), cells in zip(unique.tolist(), counts.tolist(), strict=True):
            if cells * resolution > min_boundary:
                parent[root(a)] = root(b)
    roots = np.array([root(k) for k in range(n + 1)])
    _, compact = np.unique(roots, return_inverse=True)
    return compact.astype(np.int32)[labels]  # label 0 maps to 0: root(0) = 0 is the smallest


def name_rooms(
    segmentation: RoomSegmentation,
    objects: Sequence[tuple[str, tuple[float, float]]],
    room_types: Sequence[str],
    containment: Callable[[Sequence[str], Sequence[str]], NDArray[np.float64]],
    params: RoomSegmentationParams | None = None,
) -> dict[int, str]:
    """Room type per label from the (category, (x, y) [m]) objects in it (module docstring).

    ``containment(rooms, objects)`` scores pairs elementwise in [0, 1] (the knowledge model's
    :meth:`~sg_search.reasoning.knowledge.model.KnowledgeModel.containment`).
    """
    p = params or RoomSegmentationParams()
    labels = (
        segmentation.room_at(np.array([xy for _, xy in objects], dtype=np.float64))
        if objects
        else np.zeros(0, dtype=np.int32)
    )
    categories = sorted({c for c, _ in objects})
    types = [t for t in room_types if t != "corridor"]
    table: dict[str, NDArray[np.float64]] = {}
    if categories and types:
        scores = containment([t for t in types for _ in categories], categories * len(types))
        matrix = np.log(
            np.asarray(scores, dtype=np.float64).reshape(len(types), len(categories)) + p.score_floor
        )
        table = {c: matrix[:, k] for k, c in enumerate(categories)}
    cells = np.bincount(segmentation.labels.ravel(), minlength=segmentation.count + 1)
    areas = cells * segmentation.spec.resolution**2  # [m^2] per label
    names: dict[int, str] = {}
    for label in range(1, segmentation.count + 1):
        inside = [c for (c, _), room in zip(objects, labels, strict=True) if room == label]
        x0, y0, x1, y1 = segmentation.extent(label)
        narrow, long = sorted((x1 - x0, y1 - y0))
        # the mean width (area over length): a strip of a half-seen room beyond one of a
        # corridor's doors (no core of its own yet) widens its box, not this
        narrow = min(narrow, areas[label] / long)
        if (
            "corridor" in room_types
            and narrow <= p.corridor_max_width
            and long >= p.corridor_min_aspect * narrow
            and len(inside) <= p.corridor_max_objects
        ):
            names[label] = "corridor"
        elif inside and table:
            total = np.sum([table[c] for c in inside], axis=0)
            names[label] = types[int(np.argmax(total))]
        else:
            names[label] = ""
    return names


def room_match_fraction(
    segmentation: RoomSegmentation, truth: NDArray[np.int32], free: NDArray[np.bool_]
) -> tuple[float, dict[int, int]]:
    """Share of ``free`` cells in a true room (``truth`` > 0, 1-based room index) whose region
    maps to that room, each region mapped to the true room it overlaps most (unsegmented
    cells count as wrong); and that mapping."""
    counted = free & (truth > 0)
    both = counted & (segmentation.labels > 0)
    if not both.any():
        return math.nan, {}
    pairs, counts = np.unique(
        np.stack([segmentation.labels[both], truth[both]], axis=1), axis=0, return_counts=True
    )
    mapping: dict[int, int] = {}
    best: dict[int, int] = {}
    for (region, room), n in zip(pairs.tolist(), counts.tolist(), strict=True):
        if n > best.get(region, 0):
            best[region], mapping[region] = n, room
    mapped = np.vectorize(lambda r: mapping.get(int(r), -1), otypes=[np.int64])(segmentation.labels[both])
    return float(np.sum(mapped == truth[both]) / np.sum(counted)), mapping
