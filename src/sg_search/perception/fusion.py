"""Persistent 3D object instances fused from per-frame detections (``map`` frame, metres).

Each detection's voxels (:mod:`~sg_search.perception.backproject`) are matched against the
instances whose boxes they touch. Geometric overlap is the share of the detection's voxels
with an instance voxel in their 3x3x3 neighbourhood (robust to the one-voxel jitter of a new
viewpoint). A detection joins the best-overlapping instance if the categories agree
(the detection's category is the instance's, or embeddings closer than
``embedding_min_cosine``) with overlap >= ``min_overlap_same``, or whatever the categories
with overlap >= ``min_overlap_any`` (a label flip on the same geometry); otherwise it starts
a new instance. Other instances of its category that it overlaps as much are merged into that
one (a large object first seen in two pieces, bridged by a view of both). Every
``merge_every`` frames, instance pairs of one category are merged too when
``merge_overlap`` of the smaller one's voxels, or at least ``merge_contact`` voxels, touch
the other (two faces of a cabinet seen from two sides meet only along an edge). Neither
merge joins two instances that one frame showed as two detections (a detector's two masks in
one image are two objects: two fridges side by side touch along an edge too); the frames
compared are the last ``max_frame_ids`` of each. Evidence
per instance: observation count, mean and max confidence, category votes (summed
confidence), the frames that saw it. Instances seen
in fewer than ``min_observations`` frames are kept but not :meth:`InstanceMap.confirmed`
(one-frame false detections stay out of the scene graph).
"""

from __future__ import annotations

import itertools
import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry.box import Box3D
from sg_search.perception.backproject import BackprojectionParams, mask_voxels
from sg_search.perception.cloud import key_centres, neighbourhood_hits
from sg_search.perception.detection import Detection
from sg_search.perception.observation import ObjectInstance


@dataclass(frozen=True)
class FusionParams:
    """Matching and merging thresholds (defaults justified in config/sg_search.yaml).

    Attributes:
        min_overlap_same: overlap that joins a detection to an instance of an agreeing category.
        min_overlap_any: overlap that joins it whatever the categories.
        embedding_min_cosine: embeddings this similar count as agreeing categories.
        merge_every: frames between duplicate-merging passes (0 = never).
        merge_overlap: overlap (of the smaller instance) above which agreeing instances merge.
        merge_contact: touching voxels above which agreeing instances merge.
        max_frame_ids: most recent frame ids kept per instance as evidence.
        max_voxels: an instance keeps at most this many voxels (a random subset beyond).
        min_observations: frames an instance needs before it is confirmed (published).
    """

    min_overlap_same: float = 0.25
    min_overlap_any: float = 0.5
    embedding_min_cosine: float = 0.8
    merge_every: int = 10
    merge_overlap: float = 0.3
    merge_contact: int = 20
    max_frame_ids: int = 64
    max_voxels: int = 20000
    min_observations: int = 2

    def __post_init__(self) -> None:
        for name in ("min_overlap_same", "min_overlap_any", "merge_overlap", "embedding_min_cosine"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"fusion parameter {name} must lie in [0, 1], got {value}")
        if self.merge_every < 0 or min(self.max_frame_ids, self.max_voxels, self.min_observations) < 1:
            raise ValueError("merge_every must be >= 0; max_frame_ids, max_voxels, min_observations >= 1")


@dataclass
class Instance:
    """One fused object; ``keys`` are sorted voxel keys (see :mod:`~sg_search.perception.cloud`)."""

    instance_id: str
    keys: NDArray[np.int64]
    voxel: float
    votes: dict[str, float] = field(default_factory=dict)
    observations: int = 0
    confidence_sum: float = 0.0
    confidence_max: float = 0.0
    frames: deque[int] = field(default_factory=deque)
    embedding: NDArray[np.float32] | None = None
    sources: dict[str, int] = field(default_factory=dict)  # evaluation: simulator ids merged in
    lower: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    upper: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    centroid: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))

    @property
    def main_source(self) -> str:
        """Evaluation: the simulator id most of its detections came from ("" if none)."""
        return max(self.sources.items(), key=lambda kv: kv[1])[0] if self.sources else ""

    def refresh_geometry(self) -> None:
        """Recompute box and centroid [m] from the voxels."""
        centres = key_centres(self.keys, self.voxel)
        half = self.voxel / 2
        self.lower, self.upper = centres.min(axis=0) - half, centres.max(axis=0) + half
        self.centroid = centres.mean(axis=0)

    @property
    def category(self) -> str:
        """The category with the most accumulated confidence."""
        return max(self.votes.items(), key=lambda kv: (kv[1], kv[0]))[0]

    @property
    def confidence_mean(self) -> float:
        """Mean detector confidence over the observations."""
        return self.confidence_sum / max(self.observations, 1)

    def as_object_instance(self) -> ObjectInstance:
        """What the scene graph takes: category, mean confidence, centroid and box [m]."""
        centre = (self.lower + self.upper) / 2
        return ObjectInstance(
            self.instance_id,
            self.category,
            float(self.confidence_mean),
            (float(self.centroid[0]), float(self.centroid[1]), float(self.centroid[2])),
            Box3D(tuple(centre.tolist()), tuple((self.upper - self.lower).tolist())),  # type: ignore[arg-type]
            max(1, self.observations),
        )

    def ranked_votes(self) -> list[tuple[str, float]]:
        """(category, accumulated confidence), best first."""
        return sorted(self.votes.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass
class FrameResult:
    """What one frame changed: instance ids updated or created, removed by merging, and for
    each detection the instance it went to ("" if it was discarded)."""

    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    assigned: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)  # backproject, match, merge


class InstanceMap:
    """The fused instances; :meth:`integrate` once per frame."""

    def __init__(
        self,
        fusion: FusionParams | None = None,
        backprojection: BackprojectionParams | None = None,
        id_prefix: str = "obj_",
    ) -> None:
        self.params = fusion or FusionParams()
        self.backprojection = backprojection or BackprojectionParams()
        self.instances: dict[str, Instance] = {}
        self.frames = 0
        self._ids = itertools.count(1)
        self._prefix = id_prefix
        self._rng = np.random.default_rng(0)
        # cache for candidates(): the instances, their box corners, each one's row
        self._boxes: (
            tuple[list[Instance], NDArray[np.float64], NDArray[np.float64], dict[str, int]] | None
        ) = None

    # ------------------------------------------------------------------ per frame
    def integrate(
        self,
        detections: Sequence[Detection],
        depth: NDArray[np.float32],
        intrinsics: tuple[float, float, float, float],
        t_map_camera: NDArray[np.float64],
        frame_index: int,
    ) -> FrameResult:
        """Back-project, match and fuse one frame's detections (module docstring)."""
        result = FrameResult()
        touched: set[str] = set()
        clock = time.perf_counter
        spent = {"backproject": 0.0, "match": 0.0, "merge": 0.0}
        for detection in detections:
            start = clock()
            keys = mask_voxels(depth, intrinsics, t_map_camera, detection.mask, self.backprojection)
            matched = clock()
            spent["backproject"] += matched - start
            if not len(keys):
                result.assigned.append("")
                continue
            matches = self._matches(keys, detection, exclude=touched)
            if not matches:
                target = self._create(keys)
            else:
                target = matches[0]
                target.keys = self._capped(np.union1d(target.keys, keys))
                for other in matches[1:]:
                    self._absorb(target, other)
                    result.removed.append(other.instance_id)
            self._observe(target, detection, frame_index)
            target.refresh_geometry()
            self._update_box(target)
            touched.add(target.instance_id)
            result.assigned.append(target.instance_id)
            spent["match"] += clock() - matched
        self.frames += 1
        if self.params.merge_every and self.frames % self.params.merge_every == 0:
            start = clock()
            result.removed += self.merge_duplicates()
            spent["merge"] = clock() - start
        result.timings_ms = {k: v * 1e3 for k, v in spent.items()}
        result.updated = [i for i in dict.fromkeys(result.assigned) if i and i in self.instances]
        result.removed = [i for i in result.removed if i not in self.instances]
        return result

    def _capped(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        if len(keys) <= self.params.max_voxels:
            return keys
        return np.sort(self._rng.choice(keys, self.params.max_voxels, replace=False))

    def _create(self, keys: NDArray[np.int64]) -> Instance:
        instance = Instance(f"{self._prefix}{next(self._ids)}", keys, self.backprojection.voxel)
        self.instances[instance.instance_id] = instance
        self._boxes = None
        return instance

    def _observe(self, instance: Instance, detection: Detection, frame_index: int) -> None:
        instance.votes[detection.category] = (
            instance.votes.get(detection.category, 0.0) + detection.confidence
        )
        instance.observations += 1
        instance.confidence_sum += detection.confidence
        instance.confidence_max = max(instance.confidence_max, detection.confidence)
        if not instance.frames or instance.frames[-1] != frame_index:
            instance.frames.append(frame_index)
            while len(instance.frames) > self.params.max_frame_ids:
                instance.frames.popleft()
        if detection.embedding is not None:
            e = (
                detection.embedding
                if instance.embedding is None
                else instance.embedding + detection.embedding
            )
            instance.embedding = (e / max(float(np.linalg.norm(e)), 1e-9)).astype(np.float32)
        if detection.source:
            instance.sources[detection.source] = instance.sources.get(detection.source, 0) + 1

    def confirmed(self) -> list[Instance]:
        """Instances seen in at least ``min_observations`` frames."""
        return [i for i in self.instances.values() if len(i.frames) >= self.params.min_observations]

    # ------------------------------------------------------------------ matching
    def candidates(self, lower: NDArray[np.float64], upper: NDArray[np.float64]) -> list[Instance]:
        """Instances whose box, grown by one voxel, intersects [lower, upper]."""
        if not self.instances:
            return []
        margin = self.backprojection.voxel
        if self._boxes is None:
            listed = list(self.instances.values())
            rows = {i.instance_id: k for k, i in enumerate(listed)}
            self._boxes = (
                listed,
                np.array([i.lower for i in listed]),
                np.array([i.upper for i in listed]),
                rows,
            )
        instances, lowers, uppers, _ = self._boxes
        hit = np.all(lowers - margin <= upper, axis=1) & np.all(lower <= uppers + margin, axis=1)
        return [instances[k] for k in np.flatnonzero(hit)]

    def _update_box(self, instance: Instance) -> None:
        """Keep the candidates() cache in step with one instance's new box."""
        if self._boxes is None:
            return
        _, lowers, uppers, rows = self._boxes
        row = rows.get(instance.instance_id)
        if row is None:
            self._boxes = None
        else:
            lowers[row], uppers[row] = instance.lower, instance.upper

    def _agrees(self, instance: Instance, detection: Detection) -> bool:
        if detection.category == instance.category:
            return True
        if detection.embedding is not None and instance.embedding is not None:
            return float(instance.embedding @ detection.embedding) >= self.params.embedding_min_cosine
        return False

    def _matches(self, keys: NDArray[np.int64], detection: Detection, exclude: set[str]) -> list[Instance]:
        """The instance the detection joins, then agreeing ones it bridges (module docstring)."""
        centres = key_centres(keys, self.backprojection.voxel)
        half = self.backprojection.voxel / 2
        scored: list[tuple[float, bool, Instance]] = []
        for instance in self.candidates(centres.min(axis=0) - half, centres.max(axis=0) + half):
            if instance.instance_id in exclude:  # one detection per instance and frame
                continue
            overlap = float(neighbourhood_hits(keys, instance.keys).mean())
            agrees = self._agrees(instance, detection)
            if overlap >= (self.params.min_overlap_same if agrees else self.params.min_overlap_any):
                scored.append((overlap, agrees, instance))
        scored.sort(key=lambda s: -s[0])
        if not scored:
            return []
        first = scored[0][2]
        return [first] + [
            i
            for _, agrees, i in scored[1:]
            if agrees and self._agrees(first, detection) and not seen_apart(first, i)
        ]

    # ------------------------------------------------------------------ merging
    def merge_duplicates(self) -> list[str]:
        """Merge agreeing instances that overlap; returns the ids merged away."""
        removed: list[str] = []
        for instance in sorted(self.instances.values(), key=lambda i: len(i.keys)):
            if instance.instance_id in removed:
                continue
            for other in self.candidates(instance.lower, instance.upper):
                if other is instance or other.instance_id in removed or len(other.keys) < len(instance.keys):
                    continue
                if instance.category != other.category or seen_apart(instance, other):
                    continue
                touching = neighbourhood_hits(instance.keys, other.keys)
                if (
                    touching.mean() >= self.params.merge_overlap
                    or touching.sum() >= self.params.merge_contact
                ):
                    self._absorb(other, instance)
                    removed.append(instance.instance_id)
                    break
        return removed

    def _absorb(self, keeper: Instance, gone: Instance) -> None:
        keeper.keys = self._capped(np.union1d(keeper.keys, gone.keys))
        for category, score in gone.votes.items():
            keeper.votes[category] = keeper.votes.get(category, 0.0) + score
        for source, count in gone.sources.items():
            keeper.sources[source] = keeper.sources.get(source, 0) + count
        keeper.observations += gone.observations
        keeper.confidence_sum += gone.confidence_sum
        keeper.confidence_max = max(keeper.confidence_max, gone.confidence_max)
        keeper.frames = deque(sorted(set(keeper.frames) | set(gone.frames))[-self.params.max_frame_ids :])
        keeper.refresh_geometry()
        del self.instances[gone.instance_id]
        self._boxes = None


def seen_apart(a: Instance, b: Instance) -> bool:
    """Whether one frame (of the last ``max_frame_ids`` of each) showed both as two detections."""
    return not set(a.frames).isdisjoint(b.frames)


class ReportedInstances:
    """What perception reports after each frame: the confirmed instances (seen in at least
    ``min_observations`` frames) the frame changed, and the reported ids merged away since."""

    def __init__(self, instances: InstanceMap) -> None:
        self.instances = instances
        self.reported: set[str] = set()

    def after(self, result: FrameResult) -> tuple[list[Instance], list[str]]:
        """(instances to report, reported ids now gone) for one :meth:`InstanceMap.integrate`."""
        changed = [self.instances.instances[i] for i in result.updated]
        confirmed = [i for i in changed if len(i.frames) >= self.instances.params.min_observations]
        removed = [i for i in result.removed if i in self.reported]
        self.reported.difference_update(removed)
        self.reported.update(i.instance_id for i in confirmed)
        return confirmed, removed
