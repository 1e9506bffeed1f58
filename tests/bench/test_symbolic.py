from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.bench.harness import BenchOptions
from sg_search.bench.symbolic import run, run_episode
from sg_search.sim.episodes import make_episodes


def test_oracle_always_finds_and_bounds_the_others() -> None:
    episodes, _ = make_episodes("test", 6, "typical", seed=3)
    for episode in episodes:
        oracle = run_episode(episode, "oracle", 0)
        assert oracle["SR"] == 1.0 and 0.0 < oracle["SPL"] <= 1.0  # these houses are small enough
        for agent in ("random", "nearest", "exhaustive"):
            other = run_episode(episode, agent, 0)
            assert other["SPL"] <= oracle["SPL"] + 1e-9
            assert 0.0 <= other["SPL"] <= other["SR"] <= 1.0 and other["steps"] <= 10


def test_bench_reports_every_agent_and_tier_with_rates_in_unit_interval(tmp_path: Path) -> None:
    report = run(BenchOptions(split="test", episodes=3, seed=1, agents="nearest,oracle", out=str(tmp_path)))
    tiers = [t for t in ("typical", "misplaced") if report.summary[f"episodes/{t}"] > 0]
    assert tiers, "no reachable episode drawn"
    for agent in ("nearest", "oracle"):
        for tier in tiers:
            assert 0.0 <= report.summary[f"{agent}/{tier}/SR"] <= 1.0
            assert 0.0 <= report.summary[f"{agent}/{tier}/SPL"] <= 1.0
    for tier in tiers:
        assert report.summary[f"oracle/{tier}/SR"] >= report.summary[f"nearest/{tier}/SR"]
        assert report.summary[f"oracle/{tier}/steps"] <= 10
    episodes = sum(int(report.summary[f"episodes/{tier}"]) for tier in ("typical", "misplaced"))
    assert len(report.rows) == 2 * episodes


def test_bench_refuses_unknown_agents_and_splits() -> None:
    with pytest.raises(KeyError, match="available"):
        run(BenchOptions(split="test", episodes=1, agents="psychic"))
    with pytest.raises(ValueError, match="split"):
        run(BenchOptions(split="all", episodes=1))
