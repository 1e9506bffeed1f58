"""Reasoners are plugins: a third-party distribution with an ``sg_search.reasoners`` entry
point, built and installed in a temp dir, is found by name and searches a symbolic episode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from plugin_builder import install_reasoner_plugin

from sg_search.reasoning import available_reasoners, create_reasoner

PLUGIN = '''
from sg_search.reasoning import Decision, Reasoner, actionable_candidates


class FirstListed(Reasoner):
    """Picks the first actionable candidate in id order (a lab's reasoner, for the test)."""

    name = "first-listed"

    def decide(self, observation):
        ranked = sorted(actionable_candidates(observation.graph), key=lambda c: c.node_id)
        return Decision(tuple(ranked), "first listed: " + (ranked[0].node_id if ranked else "none"))


def create(params):
    return FirstListed()
'''


def test_builtin_reasoners_come_from_entry_points() -> None:
    assert {"scout", "nearest", "random", "sgnav", "msgnav", "navgpt", "sgrwr"} <= set(available_reasoners())
    with pytest.raises(KeyError, match=r"unknown reasoner 'no-such'; available: .*scout"):
        create_reasoner("no-such")


def test_a_third_party_reasoner_installed_as_a_package_runs_a_symbolic_episode(tmp_path: Path) -> None:
    site = install_reasoner_plugin(tmp_path, "lab_reasoner", PLUGIN, {"first-listed": "lab_reasoner:create"})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "symbolic.json"
    run = subprocess.run(
        [sys.executable, "-m", "sg_search.cli", "bench", "symbolic", "--split", "val", "--episodes", "1",
         "--agents", "first-listed", "--json", str(out), "--out", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert rows and all(r["agent"] == "first-listed" for r in rows)
    assert all(r["steps"] >= 1 for r in rows)
