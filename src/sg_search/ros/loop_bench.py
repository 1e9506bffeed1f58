"""``sg-search bench ros-loop``: the closed loop over DDS beside the in-process one, episode by
episode, so that what the robot runs is measured, not only the benchmark's world.

The episodes are the closed-loop benchmark's draw (same split, seed and order: the first
``--episodes`` of ``sg-search bench closed-loop``'s). Each runs twice:

- in process (:func:`sg_search.bench.closed_loop.run_episode`: the discrete base, ``--max-actions``
  or the config's budget);
- over DDS: ``sg-search demo --episode`` in a child process: every node of the robot's stack
  composed over loopback DDS, the simulator bridge's continuous base under ``cmd_vel``, perception
  on rendered frames, with :data:`SEARCH_BUDGET_S` of simulated time.

Both count ObjectNav's success (a verified find, the target in view within 1 m) and SPL. The
in-process run is also read at the DDS run's budget in simulated seconds (its clock advances by
each action's time at the same top speeds), so the two are compared on one clock. One episode
at a time: a node set takes both cores of this machine, and two would share a DDS domain.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.closed_loop import run_episode
from sg_search.bench.compare import wilson
from sg_search.bench.embodied_world import StackConfig
from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes
from sg_search.search import SearchError
from sg_search.sim.episodes import Episode, make_episodes
from sg_search.sim.mujoco.scene import solvable

SEARCH_BUDGET_S = 300.0  # [s] simulated time of one search over DDS
START_S = 240.0  # [s] wall time for the node set to come up and write its report, beyond the search
WALL_PER_SIM_S = 3.0  # the child is stopped after START_S + this x the budget in wall seconds
TAIL_CHARS = 600  # of a failed child's output kept in its row
INPROC_KEYS = ("success", "SPL", "path_m", "steps", "sim_s", "cause", "wall_s")  # of the in-process row


def run(options: BenchOptions) -> BenchReport:
    """``options.episodes`` episodes of ``options.split`` (test for "all"), one reasoner
    (``options.agents``, "" = the reasoner node's default), in process and over DDS."""
    if options.workers != 1 or options.backend != "local":
        raise ValueError("ros-loop runs one node set at a time: --workers 1 --backend local")
    config = StackConfig.load()
    reasoner = options.agents.strip() or config.reasoner.default_reasoner
    if "," in reasoner:
        raise ValueError("ros-loop compares the two wirings for one reasoner: --reasoner NAME")
    split = "test" if options.split == "all" else options.split
    episodes, _ = make_episodes(split, options.episodes, seed=options.seed, keep=solvable)
    budget = options.max_actions or config.embodied.max_actions
    out = options.out_dir() / f"ros-loop-{time.strftime('%Y%m%d-%H%M%S')}"
    work = partial(_pair, tuple(episodes), reasoner, budget, out, options.seed)
    rows = map_episodes(work, options, "ros-loop", len(episodes))
    report = BenchReport("ros-loop", options, summarise(rows))
    report.text = "\n".join(_lines(rows, report.summary, split, options.seed, budget))
    return report


def _pair(
    episodes: tuple[Episode, ...], reasoner: str, budget: int, out: Path, first: int, seed: int
) -> dict[str, Any]:
    """Episode ``seed - first``: in process, then over DDS; one row of both."""
    episode = episodes[seed - first]
    inproc = run_episode(episode, reasoner, max_actions=budget)
    dds = over_dds(episode, reasoner, out / f"episode-{seed - first:03d}")
    return {
        "scene": episode.scene,
        "query": episode.query,
        "relation": episode.relation,
        "reasoner": reasoner,
        **{f"dds/{k}": v for k, v in dds.items()},
        **{f"inproc/{k}": inproc[k] for k in INPROC_KEYS},
    }


def over_dds(episode: Episode, reasoner: str, folder: Path) -> dict[str, Any]:
    """``sg-search demo --episode`` in a child process, writing its run folder under
    ``folder``: success (a verified find that is ObjectNav's success), SPL, metres driven, the
    search's result code, wall seconds; ``end`` "ERROR ..." with the child's last output when it
    wrote no result (it failed, or ran past its wall-time limit)."""
    folder.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable, "-m", "sg_search.cli", "demo", "--episode", json.dumps(episode.to_json()),
        "--timeout", str(SEARCH_BUDGET_S), "--out", str(folder), "--reasoner", reasoner,
    ]  # fmt: skip
    started = time.monotonic()
    try:
        child = subprocess.run(
            command, capture_output=True, text=True, timeout=START_S + WALL_PER_SIM_S * SEARCH_BUDGET_S
        )
        output, code = child.stdout + child.stderr, child.returncode
    except subprocess.TimeoutExpired as exc:
        output, code = _text(exc.stdout) + _text(exc.stderr), None
    wall = time.monotonic() - started
    (folder / "demo.log").write_text(output)
    results = sorted(folder.glob("*/result.json"))
    if not results:
        why = "ran past its wall-time limit" if code is None else f"exited {code} without a result"
        return {"success": 0.0, "SPL": 0.0, "path_m": 0.0, "wall_s": wall,
                "end": f"ERROR the demo {why}: {output[-TAIL_CHARS:]}"}  # fmt: skip
    result = json.loads(results[-1].read_text())
    end = str(result["result"])  # "NONE" or the search's error code
    found = end == "NONE" and result["success"] > 0
    return {"success": float(found), "SPL": float(result["SPL"]) if found else 0.0,
            "path_m": float(result["path_m"]), "wall_s": wall,
            "end": SearchError(int(end)).name if end.isdigit() else end}  # fmt: skip


def _text(data: str | bytes | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def found_within(row: dict[str, Any], budget_s: float) -> bool:
    """The in-process run found the target within ``budget_s`` simulated seconds."""
    return bool(row["inproc/success"]) and float(row["inproc/sim_s"]) <= budget_s


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """SR and SPL of both wirings, the in-process SR within the DDS budget, the pairs."""
    dds = [bool(r["dds/success"]) for r in rows]
    inproc = [found_within(r, SEARCH_BUDGET_S) for r in rows]
    return {
        "episodes": float(len(rows)),
        "dds/SR": float(np.mean(dds)),
        "dds/SPL": float(np.mean([r["dds/SPL"] for r in rows])),
        "dds/errors": float(sum(str(r["dds/end"]).startswith("ERROR") for r in rows)),
        "inproc/SR": float(np.mean([bool(r["inproc/success"]) for r in rows])),
        "inproc/SPL": float(np.mean([r["inproc/SPL"] for r in rows])),
        "inproc/SR_within_budget_s": float(np.mean(inproc)),
        "pairs/both": float(sum(a and b for a, b in zip(dds, inproc, strict=True))),
        "pairs/dds_only": float(sum(a and not b for a, b in zip(dds, inproc, strict=True))),
        "pairs/inproc_only": float(sum(b and not a for a, b in zip(dds, inproc, strict=True))),
    }


def _lines(rows: list[dict[str, Any]], s: dict[str, float], split: str, seed: int, budget: int) -> list[str]:
    n = len(rows)
    dds_low, dds_high = wilson(round(s["dds/SR"] * n), n)
    lines = [
        f"ros-loop: {split} split, {n} episodes (seed {seed}); over DDS {SEARCH_BUDGET_S:.0f} simulated s "
        f"per search, in process {budget} actions",
        f"  over DDS:   SR {s['dds/SR']:.2f} [{dds_low:.2f}, {dds_high:.2f}], SPL {s['dds/SPL']:.3f}"
        + (f", {s['dds/errors']:.0f} runs without a result" if s["dds/errors"] else ""),
        f"  in process: SR {s['inproc/SR']:.2f}, SPL {s['inproc/SPL']:.3f}; "
        f"within {SEARCH_BUDGET_S:.0f} simulated s: SR {s['inproc/SR_within_budget_s']:.2f}",
        f"  pairs (in process within the same simulated s): both found {s['pairs/both']:.0f}, over DDS only "
        f"{s['pairs/dds_only']:.0f}, in process only {s['pairs/inproc_only']:.0f}",
        f"  {'#':>3} {'scene':<22} {'object':<18} {'over DDS':<40} in process",
    ]
    for i, r in enumerate(rows):
        dds = "found" if r["dds/success"] else str(r["dds/end"])[:20]
        dds += f", {r['dds/path_m']:.1f} m, {r['dds/wall_s']:.0f} s wall"
        inproc = (
            f"found at {r['inproc/steps']:.0f} actions" if r["inproc/success"] else str(r["inproc/cause"])
        ) + f", {r['inproc/path_m']:.1f} m, {r['inproc/sim_s']:.0f} simulated s"
        lines.append(f"  {i:>3} {r['scene'][:22]:<22} {r['query'][:18]:<18} {dds:<40} {inproc}")
    return lines
