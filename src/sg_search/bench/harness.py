"""Shared benchmark options, report type and registry."""

from __future__ import annotations

import json
import sys
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
        episodes_file: JSON-lines episodes to run instead of drawn ones (benchmarks that take them).
        reasoner_params: ``KEY=VALUE`` parameters for every reasoner made (the LLM endpoint,
            cache, budget: ``llm_base_url=...``, ``llm_cache_dir=...``, ``fallback=scout``).
        out: folder for figures and other files a benchmark writes (never the working directory).
        max_actions: actions per closed-loop episode (0: the config's ``embodied.max_actions``).
        noise: closed loop with the ground-truth detector's noise model (the perception
            benchmark's ``NOISE``).
    """

    split: str = "all"
    episodes: int = 10
    seed: int = 0
    workers: int = 1
    agents: str = ""
    episodes_file: str = ""
    reasoner_params: tuple[str, ...] = ()
    out: str = "runs"
    max_actions: int = 0
    noise: bool = False

    def out_dir(self) -> Path:
        """``out``, created if missing."""
        folder = Path(self.out)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def params(self) -> dict[str, Any]:
        """``reasoner_params`` as a mapping (ValueError naming an entry that is not KEY=VALUE)."""
        from sg_search.llm.params import params_from

        return params_from("", "", "", self.reasoner_params)


@dataclass
class BenchReport:
    """Rows of results plus a summary. Rates are in [0, 1]; times in milliseconds."""

    name: str
    options: BenchOptions
    summary: dict[str, float] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""  # a benchmark's own table (replaces the summary listing on stdout)
    extra: dict[str, Any] = field(default_factory=dict)  # more top-level keys for --json

    def table(self) -> str:
        """A readable table of the summary."""
        if self.text:
            return self.text
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
                    **self.extra,
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
    "knowledge": (
        "sg_search.bench.knowledge",
        "distilled knowledge vs bddl goal placements (test half): top-1/3 container and room",
    ),
    "sim": (
        "sg_search.bench.sim",
        "MuJoCo world: back-projection error, closed/open containers, determinism, frame time",
    ),
    "exploration": (
        "sg_search.bench.exploration",
        "frontier-only exploration in the MuJoCo test houses: coverage curve, geodesic accuracy",
    ),
    "perception": (
        "sg_search.bench.perception",
        "ground-truth detections fused while exploring test houses: instance P/R, duplicates, rooms, latency",
    ),
    "planner": (
        "sg_search.bench.planner",
        "map/frontier/distance-field timing (800x800), geodesic accuracy, VVD",
    ),
    "closed-loop": (
        "sg_search.bench.closed_loop",
        "the whole stack per MuJoCo episode (perceive, map, reason, open, verify): SR, SPL, SoftSPL",
    ),
    "dds-images": ("sg_search.ros.dds_images_bench", "640x480 RGB-D at 30 Hz across processes (needs ROS)"),
}


def map_episodes(
    episode: Callable[[int], dict[str, Any]], options: BenchOptions, label: str = ""
) -> list[dict[str, Any]]:
    """Run ``episode(seed + i)`` for every episode, over ``options.workers`` processes; with a
    ``label``, a progress line on stderr."""
    seeds = [options.seed + i for i in range(options.episodes)]
    progress = Progress(label, len(seeds)) if label else None
    results: list[dict[str, Any]] = []
    if options.workers <= 1:
        for s in seeds:
            results.append(episode(s))
            if progress:
                progress.advance()
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=options.workers) as pool:
            for result in pool.map(episode, seeds, chunksize=max(1, len(seeds) // (20 * options.workers))):
                results.append(result)
                if progress:
                    progress.advance()
    if progress:
        progress.close()
    return [{"episode": i, "seed": s, **r} for i, (s, r) in enumerate(zip(seeds, results, strict=True))]


class Progress:
    """Progress on stderr: a redrawn bar on a terminal, a line per 10 % otherwise (logs)."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total, self.done, self._shown = label, total, 0, -1
        self._tty = sys.stderr.isatty()

    def advance(self) -> None:
        """One more item done."""
        self.done += 1
        percent = 100 * self.done // max(self.total, 1)
        step = percent if self._tty else percent // 10 * 10
        if step != self._shown:
            self._shown = step
            line = f"[{self.label}] {'#' * (percent // 5):<20s} {self.done}/{self.total} {percent:3d}%"
            sys.stderr.write(f"\r{line}" if self._tty else f"{line}\n")
            sys.stderr.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self._tty:
            sys.stderr.write("\n")


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
