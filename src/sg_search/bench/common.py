"""Shared benchmark options, report type and registry."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BenchOptions:
    """Options every benchmark accepts.

    Attributes:
        split: data split ("val", "test", ...); benchmarks without splits accept only "all".
        episodes: episodes (or repetitions) to run.
        seed: base random seed; episode i uses seed + i.
        workers: parallel worker processes.
        agents: comma-separated agents/reasoners, for benchmarks that compare them ("" = default set).
    """

    split: str = "all"
    episodes: int = 10
    seed: int = 0
    workers: int = 1
    agents: str = ""


@dataclass
class BenchReport:
    """Rows of results plus a summary. Rates are in [0, 1]; times in milliseconds."""

    name: str
    options: BenchOptions
    summary: dict[str, float] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)

    def table(self) -> str:
        """A readable table of the summary."""
        width = max((len(k) for k in self.summary), default=0)
        lines = [
            f"benchmark {self.name}  (split={self.options.split}, episodes={self.options.episodes}, "
            f"seed={self.options.seed}, workers={self.options.workers})"
        ]
        lines += [f"  {key:<{width}}  {value:12.4f}" for key, value in self.summary.items()]
        return "\n".join(lines)

    def write_json(self, path: Path) -> None:
        """Machine-readable results."""
        path.write_text(
            json.dumps(
                {
                    "name": self.name,
                    "options": asdict(self.options),
                    "summary": self.summary,
                    "rows": self.rows,
                },
                indent=2,
            )
        )


Benchmark = Callable[[BenchOptions], BenchReport]
_BENCHMARKS: dict[str, tuple[str, str]] = {
    # name: (module, one-line description)
    "graph": (
        "sg_search.bench.graph",
        "scene-graph update latency at 100/1k/10k objects, snapshots, LLM calls",
    ),
    "symbolic": (
        "sg_search.bench.symbolic",
        "SymSearch on bddl houses: agents on the same episodes, both tiers",
    ),
    "planner": (
        "sg_search.bench.planner",
        "map/frontier/distance-field timing (800x800), geodesic accuracy, VVD",
    ),
    "dds-images": ("sg_search.bench.dds_images", "640x480 RGB-D at 30 Hz across processes (needs ROS)"),
}


def map_episodes(episode: Callable[[int], dict[str, float]], options: BenchOptions) -> list[dict[str, Any]]:
    """Run ``episode(seed + i)`` for every episode, over ``options.workers`` processes."""
    seeds = [options.seed + i for i in range(options.episodes)]
    if options.workers <= 1:
        results = [episode(s) for s in seeds]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=options.workers) as pool:
            results = list(pool.map(episode, seeds))
    return [{"episode": i, "seed": s, **r} for i, (s, r) in enumerate(zip(seeds, results, strict=True))]


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean of every numeric column except the episode bookkeeping."""
    keys = [k for k in (rows[0] if rows else {}) if k not in ("episode", "seed")]
    return {k: sum(float(r[k]) for r in rows) / len(rows) for k in keys}


def available_benchmarks() -> dict[str, str]:
    """Benchmark names and what they measure."""
    return {name: description for name, (_, description) in _BENCHMARKS.items()}


def run_benchmark(name: str, options: BenchOptions) -> BenchReport:
    """Run one benchmark by name; KeyError listing the known names otherwise."""
    import importlib

    if name not in _BENCHMARKS:
        raise KeyError(f"unknown benchmark {name!r}; available: {', '.join(sorted(_BENCHMARKS))}")
    module = importlib.import_module(_BENCHMARKS[name][0])
    report: BenchReport = module.run(options)
    return report
