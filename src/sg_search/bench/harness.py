"""Shared benchmark options, report type and registry."""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sg_search.bench.fanout import BACKENDS, check_local_ray_allowed


@dataclass(frozen=True)
class BenchOptions:
    """Options every benchmark accepts.

    Attributes:
        split: data split ("val", "test", ...); benchmarks without splits accept only "all".
        episodes: episodes (or repetitions) to run.
        seed: base random seed; episode i uses seed + i.
        workers: episodes run at once: local processes, or Ray tasks in flight (with Ray, 0 =
            every CPU of the cluster).
        agents: comma-separated agents/reasoners, for benchmarks that compare them ("" = default set).
        episodes_file: JSON-lines episodes to run instead of drawn ones (benchmarks that take them).
        reasoner_params: ``KEY=VALUE`` parameters for every reasoner made (the LLM endpoint,
            cache, budget: ``llm_base_url=...``, ``llm_cache_dir=...``, ``fallback=scout``).
        out: folder for figures and other files a benchmark writes (never the working directory).
        max_actions: actions per closed-loop episode (0: the config's ``embodied.max_actions``).
        noise: closed loop with the ground-truth detector's noise model (the perception
            benchmark's ``NOISE``).
        backend: where episodes run: "local" (this process or a process pool) or "ray".
        ray_address: with Ray, "" starts a local Ray (only inside a private network or with
            ``SG_SEARCH_MULTI_MACHINE=1``); "auto" or "ray://host:port" joins a cluster.
        results: the JSON-lines results file ("" = ``<out>/results/<benchmark>-<time>-<random>.jsonl``).
        resume: continue ``results``, skipping the episodes already in it.
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
    backend: str = "local"
    ray_address: str = ""
    results: str = ""
    resume: bool = False

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"--backend {self.backend!r} is not one of {', '.join(BACKENDS)}")
        if self.episodes < 1 or self.workers < 0 or (self.workers == 0 and self.backend != "ray"):
            raise ValueError("--episodes must be >= 1 and --workers >= 1 (0 = every CPU, with --backend ray)")
        if self.resume and not self.results:
            raise ValueError("resume needs the results file to continue")

    def work(self) -> dict[str, Any]:
        """The options that decide which episodes run and how (a results file's identity)."""
        placement = ("workers", "backend", "ray_address", "out", "results", "resume")
        return {k: v for k, v in asdict(self).items() if k not in placement}

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
    "fanout": (
        "sg_search.bench.fanout_bench",
        "what fanning out costs: empty episodes through --backend local|ray, ms per episode, Ray start-up",
    ),
    "llm-decoding": (
        "sg_search.bench.llm_decoding",
        "local models, unconstrained vs constrained to a schema: ms per token, mask cost, valid answers",
    ),
    "live-view": (
        "sg_search.bench.live_view",
        "the live view's cost: ms per logged pose, graph, camera frame and map (640x480, 800x800), rrd size",
    ),
    "soak": (
        "sg_search.ros.soak_bench",
        "N searches against the node set, 200 N frames into a graph server: RSS, threads, fds (needs ROS)",
    ),
    "dds-images": ("sg_search.ros.dds_images_bench", "640x480 RGB-D at 30 Hz across processes (needs ROS)"),
    "ros-loop": (
        "sg_search.ros.loop_bench",
        "the closed loop over DDS (the robot's node set) beside the in-process one, per episode (needs ROS)",
    ),
}


class EpisodesFailed(RuntimeError):
    """Episodes of a benchmark without its own failure rows raised or lost their worker twice;
    the message names them and the results file that holds the others."""


def map_episodes(
    episode: Callable[[int], dict[str, Any]],
    options: BenchOptions,
    label: str,
    jobs: int = 0,
    failed: Callable[[int, str], dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run ``episode(options.seed + i)`` for ``i < jobs`` (0: ``options.episodes``) on
    ``options.backend`` and return their rows in order of ``i``, as read back from the results
    file (the header: ``label``, ``options.work()`` and ``jobs``).

    Each finished episode is appended to the results file at once (``{"episode": i, "seed":
    seed, **result, "code_version", "node"}``); with ``options.resume`` the episodes already
    there are not run again. An episode that raised or whose worker died twice becomes
    ``failed(seed, error)`` (the benchmark's own failure row) when given; otherwise it is left
    out of the file (a resume runs it again) and :class:`EpisodesFailed` is raised at the end.
    """
    from sg_search.bench import fanout
    from sg_search.bench.results_file import ResultsFile, code_version, default_path

    seeds = [options.seed + i for i in range(jobs or options.episodes)]
    path = Path(options.results) if options.results else default_path(options.out_dir(), label)
    header = {"benchmark": label, "work": options.work(), "jobs": len(seeds)}
    results = ResultsFile(path, header, resume=options.resume)
    index = {s: i for i, s in enumerate(seeds)}
    todo = [s for s in seeds if index[s] not in results.rows]
    _warn_other_code(results.rows.values(), path)
    print(f"[{label}] results: {path} ({len(seeds) - len(todo)} of {len(seeds)} already there; "
          f"continue an interrupted run with --resume {path})", file=sys.stderr)  # fmt: skip
    progress = Progress(label, len(seeds), done=len(seeds) - len(todo))
    errors: list[str] = []

    def deliver(seed: int, result: dict[str, Any] | None, error: str | None, node: str) -> None:
        if result is None:
            progress.fail()
            if failed is None:
                errors.append(f"episode {index[seed]} (seed {seed}): {error}")
                progress.advance(node)
                return
            result = {**failed(seed, str(error)), "code_version": code_version()}
        results.append({"episode": index[seed], "seed": seed, **result, "node": node})
        progress.advance(node)

    job = partial(_versioned, episode)
    if options.backend == "ray":
        fanout.run_ray(job, todo, options.workers, options.ray_address, deliver)
    elif options.workers <= 1:
        fanout.run_serial(job, todo, deliver)
    else:
        fanout.run_pool(job, todo, options.workers, deliver)
    progress.close()
    if errors:
        raise EpisodesFailed(
            f"{len(errors)} episodes failed ({'; '.join(errors[:3])}); the others are in {path}: "
            f"--resume {path} runs the failed ones again"
        )
    return [results.rows[i] for i in range(len(seeds))]


def _versioned(episode: Callable[[int], dict[str, Any]], seed: int) -> dict[str, Any]:
    """In the worker: the episode's result with the code version that computed it."""
    from sg_search.bench.results_file import code_version

    return {**episode(seed), "code_version": code_version()}


def _warn_other_code(rows: Iterable[dict[str, Any]], path: Path) -> None:
    from sg_search.bench.results_file import code_version

    others = Counter(str(r.get("code_version")) for r in rows if r.get("code_version") != code_version())
    if others:
        print(f"[results] {path}: {sum(others.values())} rows were computed by other code "
              f"({', '.join(others)}; this is {code_version()}); each row names its code_version",
              file=sys.stderr)  # fmt: skip


class Progress:
    """One progress line for the whole run on stderr: episodes done, rate, ETA, failures and,
    with more than one node, episodes per node. Redrawn on a terminal; in a log, a line per
    10 %."""

    def __init__(self, label: str, total: int, done: int = 0) -> None:
        self.label, self.total, self.done, self.failures = label, total, done, 0
        self._start_done, self._start = done, time.monotonic()
        self._shown = -1
        self.nodes: Counter[str] = Counter()
        self._tty = sys.stderr.isatty()

    def fail(self) -> None:
        """An episode failed (it still counts as done)."""
        self.failures += 1

    def advance(self, node: str = "") -> None:
        """One more episode done (on ``node``)."""
        self.done += 1
        self.nodes[node] += 1
        percent = 100 * self.done // max(self.total, 1)
        step = percent if self._tty else percent // 10 * 10
        if step != self._shown:
            self._shown = step
            sys.stderr.write(f"\r{self.line()}" if self._tty else f"{self.line()}\n")
            sys.stderr.flush()

    def line(self) -> str:
        """The progress text."""
        percent = 100 * self.done // max(self.total, 1)
        minutes = (time.monotonic() - self._start) / 60.0
        rate = (self.done - self._start_done) / minutes if minutes > 0 else 0.0
        eta = f"{(self.total - self.done) / rate:.1f} min" if rate > 0 else "?"
        text = (f"[{self.label}] {'#' * (percent // 5):<20s} {self.done}/{self.total} {percent:3d}% "
                f"{rate:.1f}/min ETA {eta} failures {self.failures}")  # fmt: skip
        if len(self.nodes) > 1:
            text += " | " + " ".join(f"{n or '?'}:{c}" for n, c in sorted(self.nodes.items()))
        return text

    def close(self) -> None:
        """End the bar's line."""
        if self._tty:
            sys.stderr.write("\n")


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean of every numeric column except the episode bookkeeping."""
    first = rows[0] if rows else {}
    keys = [k for k, v in first.items() if k not in ("episode", "seed") and isinstance(v, int | float)]
    return {k: sum(float(r[k]) for r in rows) / len(rows) for k in keys}


def available_benchmarks() -> dict[str, str]:
    """Benchmark names and what they measure."""
    return {name: description for name, (_, description) in _BENCHMARKS.items()}


def run_benchmark(name: str, options: BenchOptions) -> BenchReport:
    """Run one benchmark by name; KeyError listing the known names otherwise."""
    import importlib

    if name not in _BENCHMARKS:
        raise KeyError(f"unknown benchmark {name!r}; available: {', '.join(sorted(_BENCHMARKS))}")
    if options.backend == "ray" and not options.ray_address:
        check_local_ray_allowed()  # before any work, and before a results file is made
    module = importlib.import_module(_BENCHMARKS[name][0])
    report: BenchReport = module.run(options)
    return report
