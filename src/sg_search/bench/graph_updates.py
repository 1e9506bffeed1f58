"""How fast the scene graph takes one perception frame and answers incremental updates.

A synthetic house (``rooms`` rooms of 5 m x 4 m, 6 containers each) is observed by a
stream of frames; each frame re-observes ``per_frame`` instances near the robot and
adds a few new ones, as fused RGB-D perception does. Measured per frame: integration
time, ``updates_since(previous)`` time, and the incremental update's share of the graph.
"""

from __future__ import annotations

import random
import time

import numpy as np

from sg_search.bench.common import BenchOptions, BenchReport, map_episodes, summarise
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.observations import IntegrationParams, ObjectInstance, integrate_instances
from sg_search.scene_graph.prior import add_prior

ROOMS = 8
FRAMES = 300
PER_FRAME = 12
NEW_PER_FRAME = 2
CATEGORIES = ("mug", "book", "plate", "remote", "pillow", "shoe", "bottle", "passport", "key", "phone")


def _house(rooms: int) -> dict:  # type: ignore[type-arg]
    doc: dict = {"rooms": [], "furniture": [], "doors": []}  # type: ignore[type-arg]
    for r in range(rooms):
        cx = 5.0 * r + 2.5
        doc["rooms"].append(
            {"id": f"room_{r}", "category": "room", "center": [cx, 2.0, 1.25], "size": [5.0, 4.0, 2.5]}
        )
        if r:
            doc["doors"].append([f"room_{r - 1}", f"room_{r}"])
        for c in range(6):
            doc["furniture"].append(
                {
                    "id": f"cab_{r}_{c}",
                    "category": "cabinet",
                    "room": f"room_{r}",
                    "center": [cx - 2.0 + 0.8 * c, 0.4, 0.45],
                    "size": [0.6, 0.5, 0.9],
                    "affordances": ["openable", "receptacle"],
                    "state": "closed",
                }
            )
    return doc


def _episode(seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    graph = SceneGraph()
    add_prior(_house(ROOMS), graph)
    params = IntegrationParams(openable_categories=("cabinet",))
    known: list[ObjectInstance] = []
    integrate_ms, update_ms, shares = [], [], []
    for frame in range(1, FRAMES + 1):
        robot_x = (frame / FRAMES) * 5.0 * ROOMS
        near = [i for i in known if abs(i.centroid[0] - robot_x) < 3.0]
        seen = rng.sample(near, min(PER_FRAME, len(near)))
        for _ in range(NEW_PER_FRAME):
            x = robot_x + rng.uniform(-2.0, 2.0)
            seen.append(
                ObjectInstance(
                    f"obj_{len(known)}",
                    rng.choice(CATEGORIES),
                    rng.uniform(0.4, 1.0),
                    (x, rng.uniform(0.2, 3.8), rng.uniform(0.0, 1.2)),
                )
            )
            known.append(seen[-1])
        jittered = [
            ObjectInstance(
                i.instance_id,
                i.category,
                i.confidence,
                tuple(c + rng.gauss(0.0, 0.01) for c in i.centroid),  # type: ignore[arg-type]
                observation_count=frame,
            )
            for i in seen
        ]
        before = graph.sequence
        t0 = time.perf_counter()
        integrate_instances(graph, frame, jittered, params=params)
        t1 = time.perf_counter()
        update = graph.updates_since(before)
        t2 = time.perf_counter()
        integrate_ms.append((t1 - t0) * 1e3)
        update_ms.append((t2 - t1) * 1e3)
        shares.append(len(update.nodes) / max(1, len(graph)))
    return {
        "integrate_ms_mean": float(np.mean(integrate_ms)),
        "integrate_ms_p95": float(np.percentile(integrate_ms, 95)),
        "update_ms_mean": float(np.mean(update_ms)),
        "update_ms_p95": float(np.percentile(update_ms, 95)),
        "incremental_share": float(np.mean(shares)),
        "final_nodes": float(len(graph)),
    }


def run(options: BenchOptions) -> BenchReport:
    """Run ``options.episodes`` streams; summary = mean over episodes."""
    if options.split != "all":
        raise ValueError(f"graph-updates has no splits; use --split all (got {options.split!r})")
    rows = map_episodes(_episode, options)
    return BenchReport("graph-updates", options, summarise(rows), rows)
