"""Closed-loop object search in the MuJoCo houses (``sg-search bench closed-loop``).

Per episode (test split by default, typical placements) the whole pipeline of
:mod:`sg_search.bench.embodied_world` runs: render, detect (ground truth, SCOUT's setting),
fuse, map, segment and name rooms, reason, navigate/open/inspect, verify. Each reasoner
named by ``--reasoner`` (comma-separated) runs the same episodes. Success is ObjectNav's:
the search stopped with a verified find and the target is in view within 1 m of the base
at that moment; SPL and SoftSPL against the start's geodesic distance to the success region
(:mod:`sg_search.sim.metrics`). An episode ends when the search ends or after
``embodied.max_actions`` actions (out of budget counts as not found).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.compare import BUDGETS, DEFAULT_REASONERS, found_by, split_job, wilson
from sg_search.bench.embodied_world import EmbodiedEpisode, StackConfig
from sg_search.bench.failures import EndCause, classify
from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes
from sg_search.bench.perception import NOISE
from sg_search.bench.sim_robot import FAILED_DRIVE_ENDS
from sg_search.perception.ground_truth import NoiseParams
from sg_search.reasoning import Reasoner, create_reasoner
from sg_search.search import SearchOutcome, SearchStep, Verifier, run_search
from sg_search.sim.episodes import Episode, make_episodes
from sg_search.sim.metrics import EpisodeRun
from sg_search.sim.mujoco.scene import solvable

MAX_DECISIONS = 5000  # the action budget ends episodes first (also at 1,500 actions)
METRICS = ("success", "SPL", "SoftSPL", "steps", "decisions", "opened", "false_positives_rejected", "wall_s")


def search_episode(
    env: EmbodiedEpisode,
    reasoner: Reasoner | str,
    params: Mapping[str, Any] | None = None,
    trace: list[dict[str, Any]] | None = None,
) -> SearchOutcome:
    """The first frame, then the search loop in the in-process world (its first action: a full
    turn in place), with the one verification; ``reasoner`` by name is made with the stack's
    reasoner parameters and ``params``. ``trace``, if given, receives the search's steps as
    :func:`traced` writes them."""
    config = env.config.reasoner
    if isinstance(reasoner, str):
        reasoner = create_reasoner(reasoner, {**env.config.reasoner_params(reasoner), **(params or {})})
    reasoner.warm_up()
    verifier = (
        Verifier(env, config.credibility(), reasoner.verification_context() or env.cooccurrence, reasoner)
        if config.verify
        else None
    )
    env.robot.observe()
    return run_search(
        env.episode.query,
        reasoner,
        env,
        params=replace(config.search_params(MAX_DECISIONS, math.inf), settle_s=0.0),  # frames are synchronous
        verifier=verifier,
        on_step=lambda step: _on_step(env, step, trace),
        should_stop=lambda: env.robot.out_of_actions,
    )


# What the robot's actions are spent on, from the search's phases (PHASES: the table's order).
PHASES = ("look-around", "exploration", "navigation to objects", "opening", "verification")
_PHASE_OF_STEP = {"look-around": "look-around", "navigate": "exploration", "sweep": "exploration",
                  "inspect": "navigation to objects", "open": "opening", "close": "opening",
                  "verify": "verification"}  # fmt: skip


# The steps a row's trace keeps: each decision with its runners-up, each failed action, each
# sweep, verification and find (the step that carries a decision out repeats the decision).
TRACED_PHASES = frozenset({"look-around", "reason", "recover", "sweep", "verify", "found"})
WHY_CHARS = 160  # a step's explanation is cut to this many characters in the trace


def _on_step(env: EmbodiedEpisode, step: SearchStep, trace: list[dict[str, Any]] | None) -> None:
    env.robot.phase = _PHASE_OF_STEP.get(step.phase, env.robot.phase)
    if trace is not None and step.phase in TRACED_PHASES:
        trace.append(traced(env, step))


def traced(env: EmbodiedEpisode, step: SearchStep) -> dict[str, Any]:
    """One step of a row's trace: the actions spent before it (``action``), its phase, its node
    (id, and ``what``: the node's category or kind as the graph has it then), its utility (or
    credibility), the explanation cut to ``WHY_CHARS``, and for a decision its best candidates
    (``top``: [id, affordance, utility], best first)."""
    node = env.scene_graph.get(step.target_node_id) if step.target_node_id else None
    entry: dict[str, Any] = {
        "action": env.robot.steps,
        "phase": step.phase,
        "node": step.target_node_id,
        "what": (node.category or node.kind) if node is not None else "",
        "utility": round(float(step.utility), 4),
        "why": step.explanation[:WHY_CHARS],
    }
    if step.top:
        entry["top"] = [[node_id, affordance, round(float(u), 4)] for node_id, affordance, u, _ in step.top]
    return entry


def run_episode(
    episode: Episode,
    reasoner_name: str,
    params: Mapping[str, Any] | None = None,
    max_actions: int = 0,
    noise: NoiseParams | None = None,
) -> dict[str, Any]:
    """One episode with one reasoner: ObjectNav metrics, search and LLM counters;
    ``max_actions`` > 0 replaces the config's budget; ``noise`` degrades the detections."""
    config = StackConfig.load()
    if max_actions > 0:
        config = replace(config, embodied=replace(config.embodied, max_actions=max_actions))
    with EmbodiedEpisode(episode, config, noise) as env:
        run = EpisodeRun(env.world, "target")
        reasoner = create_reasoner(
            reasoner_name, {**env.config.reasoner_params(reasoner_name), **(params or {})}
        )
        trace: list[dict[str, Any]] = []
        outcome = search_episode(env, reasoner, trace=trace)
        metrics = run.result()
        stopped = outcome.success
        success = bool(stopped and metrics["success"] > 0)
        cause = classify(env.facts(outcome, success, env.robot.out_of_actions))
        row: dict[str, Any] = {
            "scene": episode.scene,
            "query": episode.query,
            "relation": episode.relation,
            "reasoner": reasoner_name,
            "end": "BUDGET" if env.robot.out_of_actions and not stopped else outcome.error.name,
            **metrics,
            "success": float(success),
            "cause": cause.value,
            **{f"actions/{phase}": float(env.robot.actions_by_phase[phase]) for phase in PHASES},
            "turns": float(env.robot.turns),
            "failed_drive_actions": float(env.robot.failed_drive_actions),
            **{
                f"failed_drive_actions/{end}": float(env.robot.failed_drive_ends[end])
                for end in FAILED_DRIVE_ENDS
            },
            "sim_s": env.robot.base.now(),
            "render_s": env.world.render_s,
            "decisions": float(outcome.steps),
            "false_positives_rejected": float(len(outcome.rejected_candidates)),
            "rooms_swept": float(sum(step.phase == "sweep" for step in outcome.trace)),
            "pocket_escapes": float(env.robot.navigator.escapes),
            "frames": float(env.frames),
            **reasoner.stats(),
            "trace": trace,
        }
        row["SPL"] = row["SPL"] if row["success"] else 0.0
        return row


def _nth(
    episodes: tuple[Episode, ...],
    reasoners: tuple[str, ...],
    params: dict[str, Any],
    max_actions: int,
    noise: NoiseParams | None,
    first: int,
    seed: int,
) -> dict[str, Any]:
    """The episode of job ``seed``. What it raises the harness books through :func:`_failed`
    (a failure on the progress line, the error in its row)."""
    episode, reasoner = _job(episodes, reasoners, seed - first)
    return run_episode(episode, reasoner, params, max_actions, noise)


def _job(episodes: tuple[Episode, ...], reasoners: tuple[str, ...], index: int) -> tuple[Episode, str]:
    episode, reasoner = split_job(index, len(reasoners))
    return episodes[episode], reasoners[reasoner]


def _failed(
    episodes: tuple[Episode, ...], reasoners: tuple[str, ...], first: int, seed: int, error: str
) -> dict[str, Any]:
    """The row of an episode that raised, or whose worker died twice: zero metrics, the error."""
    episode, reasoner = _job(episodes, reasoners, seed - first)
    sys.stderr.write(f"[closed-loop] {episode.scene} {episode.query!r} ({reasoner}): ERROR {error}\n")
    zeros = dict.fromkeys(METRICS, 0.0)
    return {"scene": episode.scene, "query": episode.query, "relation": episode.relation,
            "reasoner": reasoner, "end": f"ERROR {error}", **zeros}  # fmt: skip


def run(options: BenchOptions) -> BenchReport:
    """``options.episodes`` test episodes per reasoner in ``options.agents``."""
    split = "test" if options.split == "all" else options.split
    reasoners = tuple(a.strip() for a in (options.agents or DEFAULT_REASONERS).split(",") if a.strip())
    params = options.params()
    for name in reasoners:
        create_reasoner(name, params)  # an unknown name fails before any episode runs
    episodes, _ = make_episodes(split, options.episodes, seed=options.seed, keep=solvable)
    budget = options.max_actions or StackConfig.load().embodied.max_actions
    noise = NOISE if options.noise else None
    work = partial(_nth, tuple(episodes), reasoners, params, budget, noise, options.seed)
    failed = partial(_failed, tuple(episodes), reasoners, options.seed)
    rows = map_episodes(work, options, "closed-loop", len(episodes) * len(reasoners), failed)
    summary: dict[str, float] = {"episodes": float(len(episodes))}
    lines = [
        f"closed-loop search, {split} split, {len(episodes)} episodes per reasoner (seed {options.seed})"
        + (f" - noisy detections: {noise.describe()}" if noise else ""),
        f"{'reasoner':<12} {'SR':>6} {'SPL':>6} {'SoftSPL':>8} {'actions':>8} {'decisions':>9} "
        f"{'opened':>7} {'FP rej.':>8} {'wall s':>7}",
    ]
    for name in reasoners:
        mine = [r for r in rows if r["reasoner"] == name]
        means = {k: float(np.mean([r[k] for r in mine])) for k in METRICS}
        summary[f"{name}/errors"] = float(sum(r["end"].startswith("ERROR") for r in mine))
        summary.update({f"{name}/{k}": v for k, v in means.items()})
        lines.append(
            f"{name:<12} {means['success']:6.3f} {means['SPL']:6.3f} {means['SoftSPL']:8.3f} "
            f"{means['steps']:8.1f} {means['decisions']:9.1f} {means['opened']:7.2f} "
            f"{means['false_positives_rejected']:8.2f} {means['wall_s']:7.1f}"
            + (f"  ({summary[f'{name}/errors']:.0f} episodes raised)" if summary[f"{name}/errors"] else "")
        )
        llm = {k: float(np.mean([r.get(k, 0.0) for r in mine])) for k in mine[0] if k.startswith("llm_")}
        summary.update({f"{name}/{k}": v for k, v in llm.items()})
        if llm:
            lines.append(
                f"{'':<12} LLM per episode: {llm['llm_requests']:.1f} requests "
                f"({llm['llm_calls']:.1f} calls, "
                f"{llm['llm_cache_hits']:.1f} cached), "
                f"{llm['llm_prompt_tokens'] + llm['llm_completion_tokens']:.0f} tokens, "
                f"{llm['llm_latency_s']:.1f} s waiting, {llm['llm_fallbacks']:.1f} fallback decisions"
            )
    lines += _breakdowns(rows, reasoners, summary)
    lines += _budget_curve(rows, reasoners, budget, summary, options)
    lines += _wall_time(rows, reasoners, summary)
    report = BenchReport("closed-loop", options, summary, rows)
    report.text = "\n".join(lines)
    return report


def _breakdowns(
    rows: list[dict[str, Any]], reasoners: tuple[str, ...], summary: dict[str, float]
) -> list[str]:
    """SR per placement tier, the failure taxonomy and the actions per phase, per reasoner
    (also into ``summary``)."""
    lines = ["", "SR by placement (episodes):"]
    for name in reasoners:
        mine = [r for r in rows if r["reasoner"] == name and "cause" in r]
        tiers = sorted({r["relation"] for r in mine})
        parts = []
        for tier in tiers:
            of_tier = [r["success"] for r in mine if r["relation"] == tier]
            summary[f"{name}/SR/{tier}"] = float(np.mean(of_tier))
            parts.append(f"{tier} {np.mean(of_tier):.2f} ({len(of_tier)})")
        lines.append(f"  {name:<12} " + ", ".join(parts))
    lines += [
        "",
        "How episodes ended (episodes per cause):",
        f"  {'cause':<46}" + "".join(f"{n:>10}" for n in reasoners),
    ]
    for cause in EndCause:
        counts = [sum(r.get("cause") == cause.value for r in rows if r["reasoner"] == n) for n in reasoners]
        for name, count in zip(reasoners, counts, strict=True):
            summary[f"{name}/cause/{cause.name.lower()}"] = float(count)
        lines.append(f"  {cause.value:<46}" + "".join(f"{c:>10}" for c in counts))
    lines += [
        "",
        "Where the actions go (mean actions per episode):",
        f"  {'phase':<46}" + "".join(f"{n:>10}" for n in reasoners),
    ]
    totals = {
        "turns": "of which turns in place (all phases)",
        "failed_drive_actions": "of which in drives that failed (all phases)",
        **{f"failed_drive_actions/{end}": f"  ... that ended: {end}" for end in FAILED_DRIVE_ENDS},
    }
    for key, label in ({f"actions/{phase}": phase for phase in PHASES} | totals).items():
        means = [float(np.mean([r.get(key, 0.0) for r in rows if r["reasoner"] == n])) for n in reasoners]
        for name, mean in zip(reasoners, means, strict=True):
            summary[f"{name}/{key}"] = mean
        lines.append(f"  {label:<46}" + "".join(f"{m:>10.1f}" for m in means))
    return lines


def _wall_time(
    rows: list[dict[str, Any]], reasoners: tuple[str, ...], summary: dict[str, float]
) -> list[str]:
    """Median wall time per episode and per action on this machine, and the share of it spent
    rendering (what no faster reasoning can save)."""
    lines = ["", "Wall time on this machine (median per episode, per action; share spent rendering):"]
    for name in reasoners:
        mine = [r for r in rows if r["reasoner"] == name and "render_s" in r]
        if not mine:
            continue
        episode = float(np.median([r["wall_s"] for r in mine]))
        action = float(np.median([r["wall_s"] / max(r["steps"], 1.0) for r in mine]))
        rendering = float(sum(r["render_s"] for r in mine) / max(sum(r["wall_s"] for r in mine), 1e-9))
        summary.update({f"{name}/wall_s_median": episode, f"{name}/wall_s_per_action": action,
                        f"{name}/render_share": rendering})  # fmt: skip
        lines.append(f"  {name:<12} {episode:.1f} s per episode, {1000 * action:.0f} ms per action, "
                     f"{100 * rendering:.0f} % rendering")  # fmt: skip
    return lines


def _budget_curve(
    rows: list[dict[str, Any]],
    reasoners: tuple[str, ...],
    budget: int,
    summary: dict[str, float],
    options: BenchOptions,
) -> list[str]:
    """SR with its Wilson 95 % interval (and SPL in the JSON) at each budget up to the one run:
    an episode that succeeded within B actions counts at B (the search does not depend on its
    budget until it runs out), with metres driven and simulated seconds; the curve as a PNG
    under ``--out``."""
    budgets = [b for b in BUDGETS if b <= budget] or [budget]
    lines = ["", "Success against budget (SR at B actions; metres driven, simulated s per episode):"]
    curves: dict[str, list[float]] = {}
    for name in reasoners:
        mine = [r for r in rows if r["reasoner"] == name and "cause" in r]
        found = [[found_by(r, b) for r in mine] for b in budgets]
        curve = [float(np.mean(f)) for f in found]
        curves[name] = curve
        summary.update({f"{name}/SR@{b}": v for b, v in zip(budgets, curve, strict=True)})
        summary.update(
            {f"{name}/SPL@{b}": float(np.mean([r["SPL"] * (r["steps"] <= b) for r in mine])) for b in budgets}
        )
        metres, seconds = np.mean([r["path_m"] for r in mine]), np.mean([r["sim_s"] for r in mine])
        summary[f"{name}/path_m"], summary[f"{name}/sim_s"] = float(metres), float(seconds)
        points = ", ".join(f"{b}: {v:.2f}" for b, v in zip(budgets, curve, strict=True))
        lines.append(f"  {name:<12} {points}; {metres:.1f} m, {seconds:.0f} s")
        intervals = [wilson(sum(f), len(f)) for f in found]
        for b, (low, high) in zip(budgets, intervals, strict=True):
            summary[f"{name}/SR@{b}/low"], summary[f"{name}/SR@{b}/high"] = low, high
        lines.append(
            f"  {'':<12} 95 % (Wilson): " + ", ".join(f"[{lo:.2f}, {hi:.2f}]" for lo, hi in intervals)
        )
    figure = _plot_budget(budgets, curves, options.out_dir() / "closed_loop_budget.png")
    lines.append(f"  curve: {figure}")
    return lines


def _plot_budget(budgets: list[int], curves: dict[str, list[float]], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name, curve in curves.items():
        ax.plot(budgets, curve, marker="o", label=name)
    ax.set_xlabel("action budget (forward 0.25 m / turn 30°)")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
