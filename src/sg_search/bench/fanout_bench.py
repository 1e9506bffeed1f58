"""What fanning out costs: ``options.episodes`` empty episodes through ``options.backend``,
with the results file written as for a real benchmark.

``ms_per_episode`` is the wall time per empty episode (dispatch, result transfer, the fsynced
row, and the worker processes' start spread over the run): the overhead a real episode pays on
top of its own work. ``startup_s`` is the time to start (or join) Ray, 0 for the local pool.
"""

from __future__ import annotations

import time
from typing import Any

from sg_search.bench.fanout import start_ray
from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes


def _empty(seed: int) -> dict[str, Any]:
    return {"value": float(seed)}


def run(options: BenchOptions) -> BenchReport:
    """Time ``options.episodes`` empty episodes."""
    started = 0.0
    if options.backend == "ray":
        start = time.perf_counter()
        start_ray(options.ray_address, options.workers)
        started = time.perf_counter() - start
    try:
        start = time.perf_counter()
        rows = map_episodes(_empty, options, "fanout")
        wall = time.perf_counter() - start
    finally:
        if options.backend == "ray":
            import ray

            ray.shutdown()
    summary = {
        "episodes": float(len(rows)),
        "workers": float(options.workers),
        "startup_s": started,
        "ms_per_episode": 1e3 * wall / len(rows),
        "episodes_per_s": len(rows) / wall,
    }
    return BenchReport("fanout", options, summary, rows)
