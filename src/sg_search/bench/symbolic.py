"""SymSearch-style benchmark: every agent on the same episodes of bddl houses, both tiers.

Episodes come from :func:`sg_search.sim.episodes.make_episodes` for the chosen split
(``typical`` = goal placements, ``misplaced`` = init placements, reported apart), or from
``--episodes-file`` (tier "file" unless a line names one). Episodes that cannot be placed, or
whose target the layout cannot reach, are set aside and counted. Each agent runs the stack's
own search loop (:func:`run_search`) against :class:`SymSearchEnv` with a budget of
``STEP_BUDGET`` high-level actions. Metrics per agent and tier: SR, SPL (success x shortest /
max(shortest, travelled), geodesic), mean steps, mean path length [m], decision time per
reasoner call (median, p95) [ms]. For the learned reasoners, the decision time on a synthetic
graph of 1,000 actionable nodes (embedding cache warm) is measured as well.

Agents: the registered reasoners and ``oracle``, which knows the target's container (the
lower bound on steps and path length). Choose with ``--agents a,b,...``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes
from sg_search.geometry import Pose2D
from sg_search.reasoning import (
    Candidate,
    Decision,
    Reasoner,
    ReasonerInput,
    actionable_candidates,
    create_reasoner,
)
from sg_search.scene_graph import Affordance, EdgeKind, Layer, NodeState, SceneGraph, SceneNode
from sg_search.search import ExecutionReport, SearchParams, run_search
from sg_search.sim.bddl_scenes import load_house
from sg_search.sim.episodes import Episode, episodes_from_file, make_episodes
from sg_search.sim.layout import layout_house
from sg_search.sim.metrics import spl
from sg_search.sim.symsearch import SymSearchEnv

STEP_BUDGET = 10
DEFAULT_AGENTS = (
    "random",
    "nearest",
    "sbert",
    "exhaustive",
    "scout",
    "scout-noroom",
    "scout-greedy",
    "oracle",
)
TIERS = ("typical", "misplaced")
LATENCY_NODES = 1000
LARGE_HOUSE_ROOMS = 12  # SR is also reported for houses up to / above this many rooms
METRICS = ("SR", "SPL", "steps", "path_m", "decision_ms_median", "decision_ms_p95")


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


class SymbolicWorld:
    """SymSearch as the search's world (:class:`~sg_search.search.world.ActingWorld`): the
    graph is the whole house, actions move the agent along geodesics, nothing is rendered."""

    def __init__(self, env: SymSearchEnv) -> None:
        self.env = env

    def graph(self) -> SceneGraph:
        """The environment's graph (what the agent has revealed)."""
        return self.env.graph

    def pose(self) -> Pose2D:
        """The agent's position (no heading in SymSearch)."""
        return (self.env.position[0], self.env.position[1], 0.0)

    def recent_images(self) -> dict[int, Any]:
        """No images."""
        return {}

    def distances(self) -> Mapping[str, float]:
        """Geodesic metres from the agent."""
        return self.env.distances()

    def execute(self, candidate: Candidate) -> ExecutionReport:
        """The symbolic action."""
        return self.env.execute(candidate)

    def stop(self) -> None:
        """Nothing moves between actions."""


def run_episode(
    episode: Episode, agent: str, seed: int, params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """One agent on one episode; ``params`` go to the reasoner (with ``seed``)."""
    env = _env(episode)
    inner = (
        OracleReasoner(episode, env.truth)
        if agent == "oracle"
        else create_reasoner(agent, {**(params or {}), "seed": seed})
    )
    reasoner = TimedReasoner(inner)
    outcome = run_search(
        episode.query,
        reasoner,
        SymbolicWorld(env),
        params=SearchParams(max_steps=STEP_BUDGET, timeout_s=1e9, step_period_s=0.0, min_confidence=0.0),
        sleep=lambda _: None,
    )
    success = float(outcome.success and outcome.found is not None and outcome.found.id == "target")
    return {
        "SR": success,
        "SPL": spl(bool(success), env.shortest, env.path_length),
        "steps": float(len(reasoner.times_ms)),
        "path_m": env.path_length,
        "decision_ms": reasoner.times_ms,
        "house_rooms": float(len(env.layout.rooms)),
        "explanation": outcome.explanation,
        **inner.stats(),
    }


def _episodes(options: BenchOptions) -> tuple[dict[str, list[Episode]], dict[str, int], list[str]]:
    """Episodes per tier whose target is reachable from the start; how many were set aside per
    tier (not placeable, or unreachable); and why, for episode-file lines."""
    if options.episodes_file:
        placed, problems = episodes_from_file(Path(options.episodes_file), options.seed)
        drawn = {t: [e for e in placed if e.tier == t] for t in sorted({e.tier for e in placed}) or ["file"]}
        skipped = {t: 0 for t in drawn}
        skipped[next(iter(drawn))] += len(problems)
    else:
        if options.split not in ("train", "val", "test"):
            raise ValueError(f"symbolic needs --split train, val or test (got {options.split!r})")
        problems = []
        drawn, skipped = {}, {}
        for tier in TIERS:
            drawn[tier], skipped[tier] = make_episodes(options.split, options.episodes, tier, options.seed)
    kept: dict[str, list[Episode]] = {}
    dropped: dict[str, int] = {}
    for tier, made in drawn.items():
        reachable = [e for e in made if np.isfinite(_env(e).shortest)]
        problems += [
            f"{e.scene}: {e.query} {e.relation} {e.container_id or e.room_id} is unreachable"
            for e in made
            if e not in reachable
        ]
        kept[tier], dropped[tier] = reachable, skipped[tier] + len(made) - len(reachable)
    return kept, dropped, problems


def _env(episode: Episode) -> SymSearchEnv:
    return SymSearchEnv(layout_house(load_house(episode.scene), episode.layout_seed), episode)


def run(options: BenchOptions) -> BenchReport:
    """All agents on ``options.episodes`` episodes of each tier of ``options.split`` (or on the
    episodes of ``options.episodes_file``)."""
    agents = [a for a in (options.agents.split(",") if options.agents else DEFAULT_AGENTS) if a]
    params = options.params()
    llm_agents = []
    for agent in agents:
        # KeyError for a typo, before any work; LLM reasoners are those that count something
        if agent != "oracle" and create_reasoner(agent, params).stats():
            llm_agents.append(agent)
    episodes, dropped, problems = _episodes(options)
    for problem in problems:
        print(f"[symbolic] set aside: {problem}", file=sys.stderr)
    tiers = list(episodes)
    jobs = [(tier, i, agent) for tier in tiers for i in range(len(episodes[tier])) for agent in agents]
    work = tuple((episodes[tier][i], agent, options.seed + i, params) for tier, i, agent in jobs)
    results = map_episodes(partial(_job, work, options.seed), options, "symbolic", jobs=len(jobs))
    rows = [
        {
            "agent": agent,
            "tier": tier,
            "episode": i,
            **{k: v for k, v in r.items() if k not in ("episode", "seed")},
        }
        for (tier, i, agent), r in zip(jobs, results, strict=True)
    ]
    summary: dict[str, float] = {f"episodes/{tier}": float(len(episodes[tier])) for tier in tiers}
    summary.update({f"set_aside/{tier}": float(dropped[tier]) for tier in tiers})
    by_agent: dict[str, dict[str, Any]] = {}
    for agent in agents:
        by_agent[agent] = {"tiers": {}}
        for tier in [*tiers, "all"]:
            mine = [r for r in rows if r["agent"] == agent and (tier == "all" or r["tier"] == tier)]
            metrics = _metrics(mine)
            if tier == "all":
                by_agent[agent].update(metrics)
                by_agent[agent]["SR_by_house_size"] = {
                    label: float(np.mean([r["SR"] for r in group])) if group else float("nan")
                    for label, group in (
                        (
                            f"<={LARGE_HOUSE_ROOMS} rooms",
                            [r for r in mine if r["house_rooms"] <= LARGE_HOUSE_ROOMS],
                        ),
                        (
                            f">{LARGE_HOUSE_ROOMS} rooms",
                            [r for r in mine if r["house_rooms"] > LARGE_HOUSE_ROOMS],
                        ),
                    )
                }
            else:
                by_agent[agent]["tiers"][tier] = metrics
                summary.update({f"{agent}/{tier}/{k}": v for k, v in metrics.items()})
        if agent in llm_agents:
            mine = [r for r in rows if r["agent"] == agent]
            keys = sorted({k for r in mine for k in r if k.startswith(("llm_", "sgnav_"))})
            by_agent[agent]["llm"] = {k: float(np.mean([r.get(k, 0.0) for r in mine])) for k in keys}
            summary.update({f"{agent}/{k}": v for k, v in by_agent[agent]["llm"].items()})
        elif agent not in ("oracle", "random", "nearest"):
            latency = decision_latency(agent)
            by_agent[agent]["decision_ms_1000_nodes"] = latency
            summary[f"{agent}/decision_ms_{LATENCY_NODES}_nodes_median"] = latency["median"]
            summary[f"{agent}/decision_ms_{LATENCY_NODES}_nodes_p95"] = latency["p95"]
    for row in rows:
        row["decision_ms"] = float(np.median(row["decision_ms"])) if row["decision_ms"] else 0.0
    report = BenchReport("symbolic", options, summary, rows)
    report.extra = {
        "agents": by_agent,
        "episodes": {"per_tier": {t: len(episodes[t]) for t in tiers}, "set_aside": dropped},
    }
    report.text = agents_table(report, agents, tiers) + llm_table(report, llm_agents)
    return report


def _metrics(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    if not rows:
        return {k: float("nan") for k in METRICS}
    times = [t for r in rows for t in r["decision_ms"]] or [0.0]
    return {
        "SR": float(np.mean([r["SR"] for r in rows])),
        "SPL": float(np.mean([r["SPL"] for r in rows])),
        "steps": float(np.mean([r["steps"] for r in rows])),
        "path_m": float(np.mean([r["path_m"] for r in rows])),
        "decision_ms_median": float(np.median(times)),
        "decision_ms_p95": float(np.percentile(times, 95)),
    }


def synthetic_graph(nodes: int = LATENCY_NODES, rooms: int = 20) -> SceneGraph:
    """A house of ``rooms`` explored rooms holding ``nodes`` closed openable containers of varied
    categories, for timing decisions."""
    categories = (
        "bottom cabinet",
        "top cabinet",
        "fridge",
        "wardrobe",
        "drawer",
        "dishwasher",
        "oven",
        "shelf",
    )
    room_types = ("kitchen", "bedroom", "bathroom", "living room", "garage", "private office", "closet")
    graph = SceneGraph()
    with graph.transaction():
        for r in range(rooms):
            graph.upsert_node(
                SceneNode(
                    f"room_{r}",
                    Layer.ROOM,
                    "room",
                    room_types[r % len(room_types)],
                    (4.0 * r, 0.0, 0.0),
                    state=NodeState.EXPLORED,
                )
            )
        for i in range(nodes):
            r = i % rooms
            graph.upsert_node(
                SceneNode(
                    f"room_{r}/container_{i}",
                    Layer.OBJECT,
                    "container",
                    f"{categories[i % len(categories)]} {i % 50}",
                    (4.0 * r + (i % 7) * 0.3, 1.0, 0.5),
                    parent_id=f"room_{r}",
                    room_id=f"room_{r}",
                    affordances=Affordance.OPENABLE | Affordance.RECEPTACLE,
                    state=NodeState.CLOSED,
                )
            )
    return graph


def decision_latency(agent: str, nodes: int = LATENCY_NODES, repeats: int = 30) -> dict[str, float]:
    """Median and p95 [ms] of ``agent``'s decisions on :func:`synthetic_graph` (cache warm)."""
    graph = synthetic_graph(nodes)
    reasoner = create_reasoner(agent)
    reasoner.reset("passport")
    distances = {n.id: float(i % 97) for i, n in enumerate(graph.nodes())}
    observation = ReasonerInput(graph, "passport", distances)
    reasoner.decide(observation)  # warm the embedding and score caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        reasoner.decide(observation)
        times.append((time.perf_counter() - start) * 1e3)
    return {"median": float(np.median(times)), "p95": float(np.percentile(times, 95)), "nodes": float(nodes)}


def _job(work: tuple[tuple[Episode, str, int, dict[str, Any]], ...], first: int, seed: int) -> dict[str, Any]:
    episode, agent, episode_seed, params = work[seed - first]
    return run_episode(episode, agent, episode_seed, params)


def agents_table(report: BenchReport, agents: Sequence[str], tiers: Sequence[str]) -> str:
    """SR / SPL / steps / path / decision time per agent and tier, as a table."""
    s = report.summary
    head = ", ".join(f"{t} {int(s[f'episodes/{t}'])} (set aside {int(s[f'set_aside/{t}'])})" for t in tiers)
    lines = [
        f"benchmark symbolic  (split={report.options.split}, seed={report.options.seed}; episodes: {head})",
        f"{'agent':14s} {'tier':10s} {'SR':>6s} {'SPL':>6s} {'steps':>6s} {'path m':>7s} "
        f"{'dec ms':>7s} {'p95':>7s}",
    ]
    for agent in agents:
        for tier in tiers:
            m = {k: s[f"{agent}/{tier}/{k}"] for k in METRICS}
            lines.append(
                f"{agent:14s} {tier:10s} {m['SR']:6.3f} {m['SPL']:6.3f} {m['steps']:6.2f} {m['path_m']:7.1f} "
                f"{m['decision_ms_median']:7.2f} {m['decision_ms_p95']:7.2f}"
            )
    latencies = [a for a in agents if f"{a}/decision_ms_{LATENCY_NODES}_nodes_median" in s]
    for agent in latencies:
        key = f"{agent}/decision_ms_{LATENCY_NODES}_nodes"
        lines.append(
            f"{agent}: decision on {LATENCY_NODES} actionable nodes {s[key + '_median']:.2f} ms median, "
            f"{s[key + '_p95']:.2f} ms p95"
        )
    return "\n".join(lines)


def _share(decisions: float, fallbacks: float) -> str:
    """The share of decisions the model made (not the fallback), as a percentage."""
    return f"{100 * (1 - fallbacks / decisions):.0f}%" if decisions else "-"


def llm_table(report: BenchReport, agents: Sequence[str]) -> str:
    """Per LLM agent and episode: requests (cache hits included), endpoint calls, cache hits,
    tokens, seconds waiting on the endpoint, fallback decisions, the share decided by the model,
    answers not in the asked form, repair re-prompts, retries; SG-Nav's requests per decision
    next to the paper's naive count (4 per subgraph)."""
    if not agents:
        return ""
    s = report.summary
    lines = [
        "",
        "LLM use per episode (mean)",
        f"{'agent':14s} {'requests':>8s} {'calls':>7s} {'cached':>7s} {'tokens':>8s} {'wait s':>7s} "
        f"{'fallbk':>6s} {'by LLM':>6s} {'unparsed':>8s} {'repairs':>7s} {'retries':>7s}",
    ]
    for a in agents:

        def get(key: str, agent: str = a) -> float:
            return s.get(f"{agent}/{key}", 0.0)

        lines.append(
            f"{a:14s} {get('llm_requests'):8.1f} {get('llm_calls'):7.1f} {get('llm_cache_hits'):7.1f} "
            f"{get('llm_prompt_tokens') + get('llm_completion_tokens'):8.0f} {get('llm_latency_s'):7.1f} "
            f"{get('llm_fallbacks'):6.1f} {_share(get('llm_decisions'), get('llm_fallbacks')):>6s} "
            f"{get('llm_parse_failures'):8.1f} {get('llm_repairs'):7.1f} {get('llm_retries'):7.1f}"
        )
        if f"{a}/sgnav_calls_per_decision" in s:
            lines.append(
                f"{'':14s} requests per decision {get('sgnav_calls_per_decision'):.2f} "
                f"(naive 4 x subgraphs: {get('sgnav_naive_calls_per_decision'):.1f})"
            )
    return "\n".join(lines)
