"""Scene-graph server costs: per-frame update latency at 100 / 1,000 / 10,000 object nodes,
incremental update size, snapshot round trip, and LLM calls for long edges (batched vs naive).

Each size builds a synthetic house (rooms of 5 m x 4 m with 6 closed cabinets, about 50
objects per room) and streams ``FRAMES`` perception frames; each frame re-observes 12
objects near the robot (centroids jittered by 1 cm, below the builder's ``min_move``) and
adds 2 new ones, as fused RGB-D perception does. The per-frame update latency is
``SceneGraphBuilder.integrate``; building the batched long-edge prompt is reported apart
(it runs off the perception path). The long-edge hook is counted with a proposer that
answers nothing (no LLM is reachable here; the count of calls is what matters).
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes, summarise
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.builder import BuilderParams, SceneGraphBuilder
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.observations import IntegrationParams, ObjectInstance
from sg_search.scene_graph.prior import add_prior
from sg_search.scene_graph.serialization import dumps, load_snapshot, save_snapshot

SIZES = (100, 1_000, 10_000)
OBJECTS_PER_ROOM = 50
FRAMES = 200
PER_FRAME = 12
NEW_PER_FRAME = 2
CATEGORIES = (
    "mug",
    "book",
    "plate",
    "remote",
    "pillow",
    "shoe",
    "bottle",
    "passport",
    "key",
    "phone",
    "table",
    "chair",
    "lamp",
    "bed",
    "nightstand",
    "sofa",
    "coffee table",
)


class CountingProposer:
    """Proposes nothing (stands in for an LLM endpoint); the builder's stats count the calls."""

    def propose(
        self, prompt: str, pairs: Sequence[tuple[SceneNode, SceneNode]]
    ) -> list[tuple[str, str, str]]:
        return []


def _house(rooms: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"rooms": [], "furniture": [], "doors": []}
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


def _instance(rng: random.Random, index: int, x: float) -> ObjectInstance:
    return ObjectInstance(
        f"obj_{index}",
        rng.choice(CATEGORIES),
        rng.uniform(0.4, 1.0),
        (x, rng.uniform(0.2, 3.8), rng.uniform(0.0, 1.2)),
    )


def _run_size(size: int, seed: int, frames: int = FRAMES) -> dict[str, float]:
    rng = random.Random(seed)
    rooms = max(1, size // OBJECTS_PER_ROOM)
    graph = SceneGraph()
    add_prior(_house(rooms), graph)
    builder = SceneGraphBuilder(
        graph,
        BuilderParams(IntegrationParams(openable_categories=("cabinet",))),
        load_related_pairs(),
        CountingProposer(),
    )
    known = [_instance(rng, i, rng.uniform(0.1, 5.0 * rooms - 0.1)) for i in range(size)]
    builder.integrate(0, known)
    builder.propose_pending()
    builder.long_edge_stats.calls = builder.long_edge_stats.pairs = 0
    latencies, shares, proposal_ms = [], [], []
    for frame in range(1, frames + 1):
        robot_x = (frame / frames) * 5.0 * rooms
        near = [i for i in known if abs(i.centroid[0] - robot_x) < 3.0]
        seen = rng.sample(near, min(PER_FRAME, len(near)))
        for _ in range(NEW_PER_FRAME):
            known.append(_instance(rng, len(known), robot_x + rng.uniform(-2.0, 2.0)))
            seen.append(known[-1])
        frame_instances = [
            ObjectInstance(
                i.instance_id,
                i.category,
                i.confidence,
                (i.centroid[0] + rng.gauss(0, 0.01), i.centroid[1] + rng.gauss(0, 0.01), i.centroid[2]),
            )
            for i in seen
        ]
        before = graph.sequence
        t0 = time.perf_counter()
        builder.integrate(frame, frame_instances)
        t1 = time.perf_counter()
        builder.propose_pending()
        latencies.append((t1 - t0) * 1e3)
        proposal_ms.append((time.perf_counter() - t1) * 1e3)
        shares.append(len(graph.updates_since(before).nodes) / len(graph))
    stats = builder.long_edge_stats
    naive_calls = NEW_PER_FRAME * (len(graph) - NEW_PER_FRAME) * frames  # one call per pair
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graph.json"
        t0 = time.perf_counter()
        save_snapshot(graph, path)
        restored = load_snapshot(path)
        snapshot_ms = (time.perf_counter() - t0) * 1e3
        identical = float(dumps(restored) == path.read_text())
    return {
        f"n{size}_update_ms_median": float(np.median(latencies)),
        f"n{size}_update_ms_p95": float(np.percentile(latencies, 95)),
        f"n{size}_incremental_share": float(np.mean(shares)),
        f"n{size}_long_edge_prompt_ms_median": float(np.median(proposal_ms)),
        f"n{size}_llm_calls_per_frame": stats.calls / frames,
        f"n{size}_llm_pairs_per_call": stats.pairs / max(1, stats.calls),
        f"n{size}_naive_calls_per_frame": naive_calls / frames,
        f"n{size}_snapshot_roundtrip_ms": snapshot_ms,
        f"n{size}_snapshot_identical_rate": identical,
    }


def _episode(seed: int) -> dict[str, float]:
    row: dict[str, float] = {}
    for size in SIZES:
        row.update(_run_size(size, seed))
    return row


def run(options: BenchOptions) -> BenchReport:
    """Run ``options.episodes`` seeds of every size; summary = mean over episodes."""
    if options.split != "all":
        raise ValueError(f"graph has no splits; use --split all (got {options.split!r})")
    rows = map_episodes(_episode, options, "graph")
    return BenchReport("graph", options, summarise(rows), rows)
