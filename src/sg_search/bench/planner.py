"""Mapping and planning costs on an 800 x 800 grid, geodesic accuracy against exact shortest
paths, and MSGNav VVD scores on constructed cases.

- Timing (median ms): one 640x480 depth frame into the map (default stride 4), the
  traversability mask, frontier extraction, one FMM distance field and one 8-connected
  Dijkstra field over the explored region (a robot turning in place in an open space,
  5 frames), and one FMM field over the whole 800 x 800 grid (the worst case).
- Accuracy: random rooms (20 m x 20 m, 12 box obstacles inflated by the robot radius);
  the exact shortest path is computed on a visibility graph of the inflated obstacles
  (corners on the rounded Minkowski boundary, slightly outside); grid distances are
  compared with it per random start/goal pair: median and p95 relative error.
- VVD: a 20 cm target behind a 2 m wall vs in the open (scores in [0, 1]).

Exploration coverage in the simulator's houses: ``sg-search bench exploration``.
"""

from __future__ import annotations

import itertools
import math
import random
import time

import networkx as nx
import numpy as np
from scipy.spatial import cKDTree

from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes, summarise
from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_matrix, quat_from_yaw, quat_multiply
from sg_search.mapping.frontier_extraction import FrontierExtractor
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, OCCUPIED, CameraIntrinsics, OccupancyMap
from sg_search.planning.geodesic import DistanceField, PlannerParams, dijkstra_field, traversable
from sg_search.planning.viewpoints import visibility_score

BIG = GridSpec(0.05, 800, 800, -20.0, -20.0)
ROOM = GridSpec(0.05, 400, 400, 0.0, 0.0)
PARAMS = PlannerParams(robot_radius=0.25)
OBSTACLES = 12
PAIRS = 20
ARC_POINTS = 6


def _timing(rng: random.Random, repeats: int = 5) -> dict[str, float]:
    """Median of ``repeats`` runs of each stage, after one warm-up frame."""
    grid = OccupancyMap(BIG)
    forward = np.array([1.0, 0.0, 0.0])
    rotation = np.stack([np.array([0.0, -1.0, 0.0]), np.array([0.0, 0.0, -1.0]), forward], axis=1)
    intrinsics = CameraIntrinsics(525.0, 525.0, 319.5, 239.5)
    times: dict[str, list[float]] = {}

    def clock(name: str, start: float) -> float:
        now = time.perf_counter()
        times.setdefault(name, []).append((now - start) * 1e3)
        return now

    for k in range(repeats + 1):
        yaw = 2 * math.pi * k / repeats
        pose = Transform(np.array([0.0, 0.0, 0.9]), quat_from_yaw(yaw) if k else quat_from_matrix(rotation))
        if k:
            pose = Transform(pose.translation, quat_multiply(quat_from_yaw(yaw), quat_from_matrix(rotation)))
        depth = np.full((480, 640), 4.0 + rng.random(), dtype=np.float32)
        t = time.perf_counter()
        grid.integrate_depth(depth, intrinsics, pose)
        t = clock("map_update_ms", t)
        states = grid.states()
        free = traversable(states, BIG, PARAMS)
        t = clock("traversable_ms", t)
        field = DistanceField(free, BIG, (0.0, 0.0), PARAMS)
        t = clock("fmm_field_explored_ms", t)
        FrontierExtractor().extract(states, BIG, field.distance)
        t = clock("frontiers_ms", t)
        dijkstra_field(free, BIG, field.start)
        t = clock("dijkstra_field_explored_ms", t)
        everything = np.ones(BIG.shape, dtype=bool)
        DistanceField(everything, BIG, (0.0, 0.0), PARAMS)
        clock("fmm_field_full_grid_ms", t)
    return {name: float(np.median(values[1:])) for name, values in times.items()}


def _rooms_with_boxes(rng: random.Random) -> list[tuple[float, float, float, float]]:
    boxes: list[tuple[float, float, float, float]] = []
    while len(boxes) < OBSTACLES:
        w, h = rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0)
        x, y = rng.uniform(1.5, 18.5 - w), rng.uniform(1.5, 18.5 - h)
        boxes.append((x, y, x + w, y + h))
    return boxes


def _inflated_outline(box: tuple[float, float, float, float], r: float) -> list[tuple[float, float]]:
    """Vertices slightly outside the rounded Minkowski sum of a box and a disk of radius r."""
    x0, y0, x1, y1 = box
    out = []
    reach = r / math.cos(math.pi / (4 * (ARC_POINTS - 1))) + 0.02  # circumscribe the arcs
    for (cx, cy), start in (((x1, y0), -90), ((x1, y1), 0), ((x0, y1), 90), ((x0, y0), 180)):
        for k in range(ARC_POINTS):
            a = math.radians(start + 90 * k / (ARC_POINTS - 1))
            out.append((cx + reach * math.cos(a), cy + reach * math.sin(a)))
    return out


def _segment_clear(
    a: np.ndarray, b: np.ndarray, boxes: list[tuple[float, float, float, float]], r: float
) -> bool:
    n = max(2, int(np.linalg.norm(b - a) / 0.02))
    pts = a + (b - a) * np.linspace(0.0, 1.0, n)[:, None]
    for x0, y0, x1, y1 in boxes:
        dx = np.maximum(np.maximum(x0 - pts[:, 0], 0.0), pts[:, 0] - x1)
        dy = np.maximum(np.maximum(y0 - pts[:, 1], 0.0), pts[:, 1] - y1)
        if (np.hypot(dx, dy) < r).any():
            return False
    return True


def _accuracy(rng: random.Random) -> dict[str, float]:
    boxes = _rooms_with_boxes(rng)
    r = PARAMS.robot_radius
    states = np.full(ROOM.shape, FREE, dtype=np.int8)
    states[[0, -1], :] = OCCUPIED
    states[:, [0, -1]] = OCCUPIED
    for x0, y0, x1, y1 in boxes:
        states[int(y0 / 0.05) : math.ceil(y1 / 0.05), int(x0 / 0.05) : math.ceil(x1 / 0.05)] = OCCUPIED
    free = traversable(states, ROOM, PARAMS)
    corners = [np.array(p) for box in boxes for p in _inflated_outline(box, r)]
    corners = [c for c in corners if 0.4 < c[0] < 19.6 and 0.4 < c[1] < 19.6]
    corner_graph = nx.Graph()  # visibility among obstacle corners, built once per room
    for i, j in itertools.combinations(range(len(corners)), 2):
        if _segment_clear(corners[i], corners[j], boxes, r):
            corner_graph.add_edge(i, j, weight=float(np.linalg.norm(corners[i] - corners[j])))
    errors: list[float] = []
    while len(errors) < PAIRS:
        a = np.array([rng.uniform(1, 19), rng.uniform(1, 19)])
        b = np.array([rng.uniform(1, 19), rng.uniform(1, 19)])
        if not (_segment_clear(a, a, boxes, r + 0.1) and _segment_clear(b, b, boxes, r + 0.1)):
            continue
        graph = corner_graph.copy()
        for name, point in (("a", a), ("b", b)):
            for i, corner in enumerate(corners):
                if _segment_clear(point, corner, boxes, r):
                    graph.add_edge(name, i, weight=float(np.linalg.norm(point - corner)))
        if _segment_clear(a, b, boxes, r):
            graph.add_edge("a", "b", weight=float(np.linalg.norm(a - b)))
        try:
            exact = nx.shortest_path_length(graph, "a", "b", weight="weight")
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            continue
        field = DistanceField(free, ROOM, (float(a[0]), float(a[1])), PARAMS)
        measured = field.distance_to((float(b[0]), float(b[1])))
        if math.isfinite(measured) and exact > 1.0:
            errors.append(abs(measured - exact) / exact)
    return {
        "geodesic_rel_error_median": float(np.median(errors)),
        "geodesic_rel_error_p95": float(np.percentile(errors, 95)),
    }


def _vvd() -> dict[str, float]:
    g = np.linspace(-0.1, 0.1, 5)
    xs, ys, zs = np.meshgrid(g, g, g + 0.4)
    target = np.stack([xs.ravel() + 5.0, ys.ravel() + 5.0, zs.ravel()], axis=1)
    wy, wz = np.meshgrid(np.arange(4.0, 6.0, 0.05), np.arange(0.0, 2.0, 0.05))
    wall = cKDTree(np.stack([np.full(wy.size, 4.3), wy.ravel(), wz.ravel()], axis=1))
    return {
        "vvd_occluded_score": visibility_score(np.array([3.6, 5.0, 0.9]), target, wall, 0.1),
        "vvd_open_score": visibility_score(np.array([5.0, 6.2, 0.9]), target, wall, 0.1),
    }


def _episode(seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    return {**_timing(rng), **_accuracy(rng), **_vvd()}


def run(options: BenchOptions) -> BenchReport:
    """``options.episodes`` random seeds; summary = mean over episodes of per-episode values."""
    if options.split != "all":
        raise ValueError(f"planner has no splits; use --split all (got {options.split!r})")
    rows = map_episodes(_episode, options, "planner")
    return BenchReport("planner", options, summarise(rows), rows)
