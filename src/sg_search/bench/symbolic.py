"""SymSearch-style benchmark: every agent on the same episodes of bddl houses, both tiers.

Episodes come from :func:`sg_search.sim.episodes.make_episodes` for the chosen split
(``typical`` = goal placements, ``misplaced`` = init placements, reported apart); episodes
whose target the layout cannot reach are set aside and counted. Each
agent runs the stack's own search loop (:func:`run_search`) against :class:`SymSearchEnv`
with a budget of ``STEP_BUDGET`` high-level actions. Metrics per agent and tier: SR, SPL
(success x shortest / max(shortest, travelled), geodesic), mean steps, mean path length,
decision time per reasoner call (median, p95, ms).

Agents: the registered reasoners (``random``, ``nearest``, ``exhaustive``; the learned and
LLM reasoners join when they exist) and ``oracle``, which knows the target's container
(the lower bound on steps and path length). Choose with ``--agents a,b,...``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import networkx as nx
import numpy as np

from sg_search.bench.common import BenchOptions, BenchReport, map_episodes
from sg_search.reasoning import Decision, Reasoner, ReasonerInput, actionable_candidates, create_reasoner
from sg_search.scene_graph import EdgeKind, SceneGraph
from sg_search.search import SearchParams, run_search
from sg_search.sim.bddl_scenes import load_house
from sg_search.sim.episodes import Episode, make_episodes
from sg_search.sim.layout import layout_house
from sg_search.sim.symsearch import SymSearchEnv

STEP_BUDGET = 10
DEFAULT_AGENTS = ("random", "nearest", "exhaustive", "oracle")
TIERS = ("typical", "misplaced")


class OracleReasoner(Reasoner):
    """Knows the house and where the target is: the rooms on the door path to the target's
    room, then its container; nothing else."""

    name = "oracle"

    def __init__(self, episode: Episode, truth: SceneGraph) -> None:
        self.episode = episode
        doors = nx.Graph((e.source, e.target) for e in truth.edges(EdgeKind.ADJACENCY))
        doors.add_node(episode.room_id)
        try:
            self.route = set(nx.shortest_path(doors, episode.start_room_id, episode.room_id))
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            self.route = {episode.room_id}

    def decide(self, observation: ReasonerInput) -> Decision:
        """Target container or room first, then rooms on the route to it."""
        e = self.episode
        ranked = []
        for c in actionable_candidates(observation.graph, observation.rejected):
            d = observation.distances.get(c.node_id, 1e9)
            utility = (
                1.0 if c.node_id in (e.room_id, e.container_id) else 0.5 if c.node_id in self.route else 0.0
            )
            ranked.append(replace(c, utility=utility, distance=d, reason="oracle"))
        ranked.sort(key=lambda c: (-c.utility, c.distance))
        return Decision(tuple(ranked), "oracle")


class TimedReasoner(Reasoner):
    """Wraps a reasoner and records the wall time of every decision [ms]."""

    def __init__(self, inner: Reasoner) -> None:
        self.inner = inner
        self.name = inner.name
        self.times_ms: list[float] = []

    def reset(self, query: str) -> None:
        self.inner.reset(query)

    def decide(self, observation: ReasonerInput) -> Decision:
        start = time.perf_counter()
        decision = self.inner.decide(observation)
        self.times_ms.append((time.perf_counter() - start) * 1e3)
        return decision


def run_episode(episode: Episode, agent: str, seed: int) -> dict[str, Any]:
    """One agent on one episode."""
    env = _env(episode)
    inner = (
        OracleReasoner(episode, env.truth) if agent == "oracle" else create_reasoner(agent, {"seed": seed})
    )
    reasoner = TimedReasoner(inner)
    outcome = run_search(
        episode.query,
        reasoner,
        lambda: env.graph,
        params=SearchParams(max_steps=STEP_BUDGET, timeout_s=1e9, step_period_s=0.0, min_confidence=0.0),
        execute=env.execute,
        distances=env.distances,
        sleep=lambda _: None,
    )
    success = float(outcome.success and outcome.found is not None and outcome.found.id == "target")
    actions = len(reasoner.times_ms)
    spl = (
        success * env.shortest / max(env.shortest, env.path_length, 1e-9)
        if np.isfinite(env.shortest)
        else 0.0
    )
    return {
        "SR": success,
        "SPL": spl,
        "steps": float(actions),
        "path_length": env.path_length,
        "decision_ms": reasoner.times_ms,
    }


def _episodes(options: BenchOptions) -> tuple[dict[str, list[Episode]], dict[str, int]]:
    """Episodes per tier whose target is reachable from the start, and how many were set aside
    (not placeable in the drawn house, or placed where the layout cannot reach)."""
    kept: dict[str, list[Episode]] = {}
    dropped: dict[str, int] = {}
    for tier in TIERS:
        made, skipped = make_episodes(options.split, options.episodes, tier, options.seed)
        reachable = [e for e in made if np.isfinite(_env(e).shortest)]
        kept[tier], dropped[tier] = reachable, skipped + len(made) - len(reachable)
    return kept, dropped


def _env(episode: Episode) -> SymSearchEnv:
    return SymSearchEnv(layout_house(load_house(episode.scene), episode.layout_seed), episode)


def run(options: BenchOptions) -> BenchReport:
    """All agents on ``options.episodes`` episodes of each tier of ``options.split``."""
    if options.split not in ("train", "val", "test"):
        raise ValueError(f"symbolic needs --split train, val or test (got {options.split!r})")
    agents = [a for a in (options.agents.split(",") if options.agents else DEFAULT_AGENTS) if a]
    for agent in agents:
        if agent != "oracle":
            create_reasoner(agent)  # KeyError listing the names for a typo, before any work
    episodes, dropped = _episodes(options)
    jobs = [(tier, i, agent) for tier in TIERS for i in range(len(episodes[tier])) for agent in agents]
    _JOBS[:] = [
        (episodes[tier][i], agent, options.seed + i) for tier, i, agent in jobs
    ]  # workers fork with it
    results = map_episodes(_job, replace(options, episodes=len(jobs), seed=0))
    rows: list[dict[str, Any]] = []
    summary: dict[str, float] = {f"episodes/{tier}": float(len(episodes[tier])) for tier in TIERS}
    summary.update({f"set_aside/{tier}": float(dropped[tier]) for tier in TIERS})
    for (tier, i, agent), result in zip(jobs, results, strict=True):
        rows.append(
            {
                "agent": agent,
                "tier": tier,
                "episode": i,
                **{k: v for k, v in result.items() if k not in ("episode", "seed")},
            }
        )
    for agent in agents:
        for tier in TIERS:
            mine = [r for r in rows if r["agent"] == agent and r["tier"] == tier]
            times = [t for r in mine for t in r["decision_ms"]] or [0.0]
            prefix = f"{agent}/{tier}"
            summary[f"{prefix}/SR"] = float(np.mean([r["SR"] for r in mine]))
            summary[f"{prefix}/SPL"] = float(np.mean([r["SPL"] for r in mine]))
            summary[f"{prefix}/steps"] = float(np.mean([r["steps"] for r in mine]))
            summary[f"{prefix}/path_m"] = float(np.mean([r["path_length"] for r in mine]))
            summary[f"{prefix}/decision_ms_median"] = float(np.median(times))
            summary[f"{prefix}/decision_ms_p95"] = float(np.percentile(times, 95))
    for row in rows:
        row["decision_ms"] = float(np.median(row["decision_ms"])) if row["decision_ms"] else 0.0
    return BenchReport("symbolic", options, summary, rows)


_JOBS: list[tuple[Episode, str, int]] = []


def _job(k: int) -> dict[str, Any]:
    episode, agent, seed = _JOBS[k]
    return run_episode(episode, agent, seed)


def agents_table(report: BenchReport, agents: Sequence[str]) -> str:
    """SR / SPL / steps / path per agent and tier, as a table."""
    lines = [f"{'agent':12s} {'tier':10s} {'SR':>6s} {'SPL':>6s} {'steps':>6s} {'path m':>7s} {'dec ms':>7s}"]
    for agent in agents:
        for tier in TIERS:
            p = f"{agent}/{tier}"
            s = report.summary
            lines.append(
                f"{agent:12s} {tier:10s} {s[p + '/SR']:6.2f} {s[p + '/SPL']:6.2f} {s[p + '/steps']:6.1f} "
                f"{s[p + '/path_m']:7.1f} {s[p + '/decision_ms_median']:7.2f}"
            )
    return "\n".join(lines)
