"""Perception against ground truth in the MuJoCo houses (``sg-search bench perception``).

Per test-split house (one episode each, its target placed): the frontier explorer of
``bench exploration`` drives through the house rendering 320x240 frames; every frame goes
through the ``ground_truth`` detector and the fusion, once clean and once with injected
noise (10 % missed objects, 10 % label swaps, 2 px dilation = background bleed), each into
its own instance map, built as the stack's perception pipeline builds it (the YAML's
back-projection and fusion parameters; masks eroded by the detector's known bleed as well).
Truth: an object counts as visible when one frame showed at least ``VISIBLE_POINTS``
valid-depth pixels of it. A fused instance stands for the simulator
object most of its detections came from; it is correct when that object is visible and its
category matches. Precision = correct / instances; recall = visible objects with a correct
instance / visible objects; duplicates = visible objects with more than one instance /
objects found. Centroid error: instance centroid against the centroid of every voxel of the
object any frame showed (what could be seen, not the hidden back of a sofa).
Rooms: the explorer's map, free cells segmented (:mod:`sg_search.perception.room_segmentation`) and
named from the clean instances, against the layout's rooms (type accuracy over all regions,
and over the regions that got a name, i.e. held objects or looked like a corridor).
A top-down figure per house, ``perception_<scene>.png`` in the working directory.
Latency: per-frame stage times from the run; and frames at 320x240 and 640x480 from each
room's centre towards its furniture, fused into maps pre-filled with 50/200/500 instances.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.embodied_world import StackConfig
from sg_search.bench.exploration import TILT, explore, explorer_for
from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes
from sg_search.bench.perception_plot import plot_house
from sg_search.bench.sim_robot import SimRobot
from sg_search.mapping.occupancy import FREE
from sg_search.perception.backproject import BackprojectionParams
from sg_search.perception.categories import normalise_category
from sg_search.perception.cloud import key_centres, voxel_keys
from sg_search.perception.detection import RgbdImage
from sg_search.perception.fusion import InstanceMap
from sg_search.perception.ground_truth import GroundTruthDetector, NoiseParams
from sg_search.perception.pipeline import PerceptionPipeline
from sg_search.perception.room_segmentation import (
    RoomSegmentation,
    room_match_fraction,
)
from sg_search.sim.episodes import Episode, make_episodes
from sg_search.sim.mujoco.scene import episode_world, nearest_free
from sg_search.sim.mujoco.world import CameraConfig, Frame, SimWorld

VISIBLE_POINTS = 50
STEP_BUDGET = 700  # actions per house (exploration reaches most rooms by then)
NOISE = NoiseParams(drop_rate=0.1, label_swap_rate=0.1, dilate_px=2)
FILL_SIZES = (50, 200, 500)


class Truth:
    """What the frames showed of each simulator object: most pixels in one frame, all voxels."""

    def __init__(self, params: BackprojectionParams) -> None:
        self.params = params
        self.max_pixels: dict[str, int] = defaultdict(int)
        self.keys: dict[str, set[int]] = defaultdict(set)
        self.category: dict[str, str] = {}

    def add(self, frame: Frame) -> None:
        """Count one frame's valid pixels and voxels per object."""
        p = self.params
        valid = np.isfinite(frame.depth) & (frame.depth >= p.min_depth) & (frame.depth <= p.max_depth)
        ids, counts = np.unique(frame.instance[valid], return_counts=True)
        fx, fy, cx, cy = frame.intrinsics
        for instance, count in zip(ids.tolist(), counts.tolist(), strict=True):
            source, category = frame.instances.get(instance, ("", ""))
            if not category or category in ("structure", "robot"):
                continue
            self.category[source] = normalise_category(category)
            self.max_pixels[source] = max(self.max_pixels[source], count)
            rows, cols = np.nonzero((frame.instance == instance) & valid)
            z = frame.depth[rows, cols].astype(np.float64)
            camera = np.stack([(cols - cx) / fx * z, (rows - cy) / fy * z, z], axis=1)
            points = camera @ frame.T_map_camera[:3, :3].T + frame.T_map_camera[:3, 3]
            self.keys[source].update(voxel_keys(points, p.voxel).tolist())

    def visible(self) -> set[str]:
        """Objects one frame showed at least VISIBLE_POINTS pixels of."""
        return {s for s, n in self.max_pixels.items() if n >= VISIBLE_POINTS}

    def centroid(self, source: str) -> np.ndarray:
        """Centroid [m] of every voxel of ``source`` seen."""
        centres = key_centres(np.fromiter(self.keys[source], dtype=np.int64), self.params.voxel)
        return np.asarray(centres.mean(axis=0))


def score_instances(instances: InstanceMap, truth: Truth) -> dict[str, float]:
    """Precision, recall, duplicate rate and median centroid error [m] (module docstring)."""
    visible = truth.visible()
    found: dict[str, list[Any]] = defaultdict(list)
    correct = 0
    confirmed = instances.confirmed()
    for instance in confirmed:
        source = instance.main_source
        if not source:
            continue
        if source in visible and instance.category == truth.category[source]:
            correct += 1
            found[source].append(instance)
    errors = [
        float(np.linalg.norm(max(group, key=lambda i: len(i.keys)).centroid - truth.centroid(source)))
        for source, group in found.items()
    ]
    total = len(confirmed)
    return {
        "precision": correct / total if total else math.nan,
        "recall": len(found) / len(visible) if visible else math.nan,
        "duplicates": sum(len(g) > 1 for g in found.values()) / len(found) if found else math.nan,
        "centroid_err_m": float(np.median(errors)) if errors else math.nan,
        "instances": float(total),
        "visible": float(len(visible)),
    }


def score_rooms(
    explorer: SimRobot, world: SimWorld, instances: InstanceMap
) -> tuple[dict[str, float], RoomSegmentation, dict[int, str]]:
    """Room segmentation agreement and room-type accuracy over the explored free cells; the
    segmentation and the names it was scored on."""
    from sg_search.reasoning.knowledge.names import knowledge_text
    from sg_search.reasoning.knowledge.room_naming import knowledge_map_rooms

    spec = explorer.spec
    free = explorer.map.states() == FREE
    centres = spec.to_metres(np.argwhere(np.ones(spec.shape, dtype=bool)))
    truth = np.zeros(len(centres), dtype=np.int32)
    for index, room in enumerate(world.layout.rooms, start=1):
        inside = (centres[:, 0] > room.x0) & (centres[:, 0] < room.x1)
        inside &= (centres[:, 1] > room.y0) & (centres[:, 1] < room.y1)
        truth[inside] = index
    truth = truth.reshape(spec.shape)
    objects = [(i.category, (float(i.centroid[0]), float(i.centroid[1]))) for i in instances.confirmed()]
    segmentation, names = knowledge_map_rooms().segment(objects, free, spec)  # as the stack does it
    agreement, mapping = room_match_fraction(segmentation, truth, free)
    typed = [
        names[region] == knowledge_text(world.layout.rooms[room - 1].room_type)
        for region, room in mapping.items()
    ]
    with_objects = [ok for (region, _), ok in zip(mapping.items(), typed, strict=True) if names[region]]
    seen_rooms = {room for room in mapping.values()}
    metrics = {
        "room_cells_match": agreement,
        "room_type_accuracy": float(np.mean(typed)) if typed else math.nan,
        "room_type_accuracy_named": float(np.mean(with_objects)) if with_objects else math.nan,
        "regions": float(segmentation.count),
        "rooms_seen": float(len(seen_rooms)),
    }
    return metrics, segmentation, names


def evaluate_house(episode: Episode, out: Path) -> dict[str, Any]:
    """Explore one episode's house with perception running clean and noisy; its figure under ``out``."""
    detectors = {"clean": GroundTruthDetector(), "noisy": GroundTruthDetector(NOISE, seed=1)}
    maps = {name: stack_instances(detector) for name, detector in detectors.items()}
    truth = Truth(maps["clean"].backprojection)  # its depth range and voxel
    stage_ms: dict[str, list[float]] = defaultdict(list)

    def on_frame(frame: Frame) -> None:
        truth.add(frame)
        for name, detector in detectors.items():
            start = time.perf_counter()
            image = RgbdImage(frame.rgb, frame.depth, frame.instance, frame.instances)
            detections = detector.detect(image)
            detected = time.perf_counter()
            result = maps[name].integrate(
                detections, frame.depth, frame.intrinsics, frame.T_map_camera, maps[name].frames + 1
            )
            if name == "clean":
                stage_ms["detect"].append((detected - start) * 1e3)
                for stage, ms in result.timings_ms.items():
                    stage_ms[stage].append(ms)
                stage_ms["total"].append((time.perf_counter() - start) * 1e3)

    with episode_world(episode, CameraConfig(320, 240)) as world:
        x, y, _ = world.pose
        world.set_pose(x, y, 0.0, tilt=TILT)
        explorer = explorer_for(world, on_frame, STEP_BUDGET)
        explore(explorer)
        rooms, segmentation, names = score_rooms(explorer, world, maps["clean"])
        seen = {s: truth.centroid(s) for s in truth.visible()}
        figure = plot_house(
            out / f"perception_{episode.scene}.png", world.layout, explorer.map.states() == FREE,
            segmentation, names, maps["clean"].confirmed(), seen,
        )  # fmt: skip
    row: dict[str, Any] = {"scene": episode.scene, "frames": float(len(stage_ms["total"]))}
    for name, instance_map in maps.items():
        row.update({f"{name}/{k}": v for k, v in score_instances(instance_map, truth).items()})
    row.update(rooms)
    row["figure"] = str(figure)
    row["stage_ms"] = {k: v for k, v in stage_ms.items()}
    return row


def stack_instances(detector: GroundTruthDetector) -> InstanceMap:
    """An empty instance map as the stack's perception pipeline makes it for ``detector`` (the
    shipped YAML's parameters; erosion plus the detector's known bleed)."""
    return PerceptionPipeline(StackConfig.load().perception, detector).instances


def _filled_map(world: SimWorld, n: int, seed: int) -> InstanceMap:
    """An instance map of the stack's parameters holding ``n`` synthetic 20 cm boxes (each its
    own category, so that they never merge) spread over the house's free space."""
    instance_map = stack_instances(GroundTruthDetector())
    rng = np.random.default_rng(seed)
    rows, cols = np.nonzero(world.free)
    centres = world.grid.to_metres(np.stack([rows, cols], axis=1))
    grid = np.stack(np.meshgrid(*[np.arange(-0.1, 0.1, 0.03)] * 3), axis=-1).reshape(-1, 3)
    for k in range(n):
        x, y = centres[rng.integers(len(centres))]
        keys = voxel_keys(grid + np.array([x, y, rng.uniform(0.1, 1.5)]), instance_map.backprojection.voxel)
        instance = instance_map._create(keys)
        instance.votes[f"filler {k}"] = 1.0
        instance.refresh_geometry()
    return instance_map


def latency_table(episode: Episode, seed: int) -> dict[str, float]:
    """Median and p95 ms per frame (detection and fusion) at 320x240 and 640x480 into maps
    holding 50/200/500 instances; frames from each room's centre towards each furniture item."""
    out: dict[str, float] = {}
    for width, height in ((320, 240), (640, 480)):
        with episode_world(episode, CameraConfig(width, height)) as world:
            frames = []
            for item in world.layout.furniture[:40]:
                x, y = nearest_free(world, *world.layout.room(item.room_id).center)
                world.set_pose(x, y, math.atan2(item.center[1] - y, item.center[0] - x), tilt=TILT)
                frames.append(world.render())
            for n in FILL_SIZES:
                instance_map = _filled_map(world, n, seed)
                detector = GroundTruthDetector()
                times = []
                for index, frame in enumerate(frames):
                    start = time.perf_counter()
                    detections = detector.detect(
                        RgbdImage(frame.rgb, frame.depth, frame.instance, frame.instances)
                    )
                    instance_map.integrate(
                        detections, frame.depth, frame.intrinsics, frame.T_map_camera, index
                    )
                    times.append((time.perf_counter() - start) * 1e3)
                key = f"{width}x{height}/{n}"
                out[f"latency_ms_median/{key}"] = float(np.median(times))
                out[f"latency_ms_p95/{key}"] = float(np.percentile(times, 95))
    return out


def _evaluate_nth(episodes: tuple[Episode, ...], first_seed: int, out: Path, seed: int) -> dict[str, Any]:
    return evaluate_house(episodes[seed - first_seed], out)


def run(options: BenchOptions) -> BenchReport:
    """One episode per test-split house, at most ``options.episodes`` houses."""
    if options.split not in ("test", "val", "train"):
        raise ValueError(f"bench perception needs --split test, val or train, got {options.split!r}")
    candidates, _ = make_episodes(options.split, 200, seed=options.seed)
    episodes: dict[str, Episode] = {}
    for episode in candidates:
        episodes.setdefault(episode.scene, episode)
    chosen = list(episodes.values())[: options.episodes]
    rows = map_episodes(
        partial(_evaluate_nth, tuple(chosen), options.seed, options.out_dir()),
        options,
        "perception",
        jobs=len(chosen),
    )
    stages: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        for stage, values in row.pop("stage_ms").items():
            stages[stage].extend(values)
    summary: dict[str, float] = {"houses": float(len(rows))}
    for key in rows[0]:
        if key not in ("episode", "seed", "scene") and isinstance(rows[0][key], float):
            summary[key] = float(np.nanmean([r[key] for r in rows]))
    for stage, values in stages.items():
        summary[f"stage_ms_median/{stage}"] = float(np.median(values))
        summary[f"stage_ms_p95/{stage}"] = float(np.percentile(values, 95))
    summary.update(latency_table(chosen[0], options.seed))
    return BenchReport("perception", options, summary, rows)
