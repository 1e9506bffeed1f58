"""Room nodes from a geometric room segmentation, with ids that survive re-segmentation.

The map grows while the robot explores, so rooms are segmented again and again; a room
must keep its id (and what the search learnt about it) when its region grows. A new region
takes the id of the old room whose cells it overlaps most, when that overlap is at least
``min_overlap`` of the smaller of the two; otherwise it gets a fresh id. Old rooms no
region claims are removed. Objects and frontiers are then re-assigned to the room under
them (:meth:`RoomSegmentation.room_at`, which reaches into furniture footprints); an
object's parent stays its container if it has one. Frame ``map``, metres.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from sg_search.mapping.grid import GridSpec
from sg_search.perception.room_segmentation import (
    RoomSegmentation,
    RoomSegmentationParams,
    name_rooms,
    segment_rooms,
)
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import Affordance, Box3D, Layer, NodeState, SceneNode
from sg_search.scene_graph.prior import BUILDING_ID, ROOT_ID

ROOM_HEIGHT_M = 2.5


class RoomTracker:
    """Keeps the graph's room nodes in step with successive segmentations of one grid."""

    def __init__(self, min_overlap: float = 0.3, id_prefix: str = "room_") -> None:
        self.min_overlap = min_overlap
        self.id_prefix = id_prefix
        self._ids: NDArray[np.int32] | None = None  # per cell: index into _names (-1: none)
        self._names: list[str] = []
        self._next = 1
        self.segmentation: RoomSegmentation | None = None

    def update(
        self, graph: SceneGraph, segmentation: RoomSegmentation, categories: Mapping[int, str]
    ) -> dict[int, str]:
        """Apply a segmentation and its room names (label -> category, "" unnamed) to
        ``graph`` in one transaction; returns label -> room id."""
        ids = self._match(segmentation)
        with graph.transaction():
            _ensure_building(graph)
            for label, room_id in ids.items():
                x0, y0, x1, y1 = segmentation.extent(label)
                old = graph.get(room_id)
                graph.upsert_node(
                    SceneNode(
                        room_id,
                        Layer.ROOM,
                        "room",
                        categories.get(label, ""),
                        ((x0 + x1) / 2, (y0 + y1) / 2, 0.0),
                        Box3D(
                            ((x0 + x1) / 2, (y0 + y1) / 2, ROOM_HEIGHT_M / 2),
                            (x1 - x0, y1 - y0, ROOM_HEIGHT_M),
                        ),
                        parent_id=BUILDING_ID,
                        affordances=Affordance.NAVIGABLE,
                        state=old.state if old is not None else NodeState.EXPLORED,
                        observation_count=(old.observation_count if old else 0) + 1,
                    )
                )
            self._reassign(graph, segmentation, ids)
            keep = set(ids.values())  # stale rooms go last: removing a node removes its children
            for node in graph.rooms():
                if node.id.startswith(self.id_prefix) and node.id not in keep:
                    graph.remove_node(node.id)
        self.segmentation = segmentation
        return ids

    def _match(self, segmentation: RoomSegmentation) -> dict[int, str]:
        labels = segmentation.labels
        pairs: list[tuple[int, int, int]] = []  # (overlap, label, old index)
        if self._ids is not None and self._ids.shape == labels.shape:
            both = (labels > 0) & (self._ids >= 0)
            if both.any():
                keys, counts = np.unique(
                    labels[both].astype(np.int64) * (len(self._names) + 1) + self._ids[both],
                    return_counts=True,
                )
                new_area = np.bincount(labels.ravel(), minlength=segmentation.count + 1)
                old_area = np.bincount(self._ids[self._ids >= 0], minlength=len(self._names))
                for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
                    label, old = divmod(key, len(self._names) + 1)
                    if count >= self.min_overlap * min(new_area[label], old_area[old]):
                        pairs.append((count, label, old))
        ids: dict[int, str] = {}
        taken: set[int] = set()
        for _, label, old in sorted(pairs, reverse=True):
            if label not in ids and old not in taken:
                ids[label] = self._names[old]
                taken.add(old)
        for label in range(1, segmentation.count + 1):
            if label not in ids:
                ids[label] = f"{self.id_prefix}{self._next}"
                self._next += 1
        self._names = [ids[label] for label in range(1, segmentation.count + 1)]
        self._ids = labels.astype(np.int32) - 1
        return ids

    @staticmethod
    def _reassign(graph: SceneGraph, segmentation: RoomSegmentation, ids: Mapping[int, str]) -> None:
        movable = [n for n in graph.nodes() if n.layer in (Layer.OBJECT, Layer.REGION)]
        if not movable:
            return
        labels = segmentation.room_at(np.array([n.position[:2] for n in movable]))
        for node, label in zip(movable, labels.tolist(), strict=True):
            room = ids.get(label, "")
            holder = graph.get(node.parent_id) if node.parent_id else None
            held = holder is not None and holder.layer == Layer.OBJECT
            parent = node.parent_id if held else (room or (BUILDING_ID if node.kind == "frontier" else ""))
            if room != node.room_id or parent != node.parent_id:
                graph.upsert_node(replace(node, room_id=room, parent_id=parent))


def _ensure_building(graph: SceneGraph) -> None:
    if ROOT_ID not in graph:
        graph.upsert_node(SceneNode(ROOT_ID, Layer.ROOT, "root"))
    if BUILDING_ID not in graph:
        graph.upsert_node(SceneNode(BUILDING_ID, Layer.BUILDING, "building", parent_id=ROOT_ID))


Containment = Callable[[Sequence[str], Sequence[str]], Sequence[float]]
"""p(object in room) for each (room type, object category) pair; NaN where the score is not
known yet (a model still loading): it counts 0 and is asked again next time."""


class MapRooms:
    """Rooms of an occupancy map into a graph: segment the free cells, name each region from
    the objects in it with ``containment`` (memoised per pair: rooms are re-named every few
    seconds) over ``room_types``, and track ids with :class:`RoomTracker`. The host passes
    the commonsense knowledge in (the graph does not depend on the reasoners)."""

    def __init__(
        self,
        room_types: Sequence[str],
        containment: Containment,
        params: RoomSegmentationParams | None = None,
    ) -> None:
        self.params = params or RoomSegmentationParams()
        self.tracker = RoomTracker()
        self.room_types = list(room_types)
        self._containment = containment
        self._memo: dict[tuple[str, str], float] = {}

    def containment(self, rooms: Sequence[str], objects: Sequence[str]) -> NDArray[np.float64]:
        """p(object in room) for each pair (memoised; a score not known yet counts 0 and is
        not memoised)."""
        pairs = list(zip(rooms, objects, strict=True))
        missing = sorted(set(pairs) - self._memo.keys())
        if missing:
            scores = self._containment([r for r, _ in missing], [o for _, o in missing])
            scored = zip(missing, map(float, scores), strict=True)
            self._memo.update((pair, score) for pair, score in scored if not math.isnan(score))
        return np.array([self._memo.get(p, 0.0) for p in pairs], dtype=np.float64)

    def segment(
        self, objects: Sequence[tuple[str, tuple[float, float]]], free: NDArray[np.bool_], spec: GridSpec
    ) -> tuple[RoomSegmentation, dict[int, str]]:
        """Segment ``free`` (cells of ``spec``) and name the regions from ``objects``
        ((category, (x, y)) pairs); reads no graph, so it can run outside the graph's lock."""
        segmentation = segment_rooms(free, spec, self.params)
        return segmentation, name_rooms(segmentation, objects, self.room_types, self.containment, self.params)

    def update(self, graph: SceneGraph, free: NDArray[np.bool_], spec: GridSpec) -> dict[int, str]:
        """Segment, name and apply to ``graph``; label -> room id."""
        segmentation, names = self.segment(graph_objects(graph), free, spec)
        return self.tracker.update(graph, segmentation, names)


def graph_objects(graph: SceneGraph) -> list[tuple[str, tuple[float, float]]]:
    """(category, (x, y)) of the graph's objects and containers: what names a room."""
    return [
        (n.category, (n.position[0], n.position[1]))
        for n in graph.nodes(Layer.OBJECT)
        if n.kind in ("object", "container")
    ]
