"""Reasoners are plugins: a third-party distribution with an ``sg_search.reasoners`` entry
point, built and installed in a temp dir, is found by name and searches a symbolic episode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
    source = tmp_path / "src"
    (source / "lab_reasoner").mkdir(parents=True)
    (source / "lab_reasoner" / "__init__.py").write_text(PLUGIN)
    (source / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='lab-reasoner', version='0.1', packages=['lab_reasoner'],\n"
        "      entry_points={'sg_search.reasoners': ['first-listed = lab_reasoner:create']})\n"
    )
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(site), str(source)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "symbolic.json"
    run = subprocess.run(
        [sys.executable, "-m", "sg_search.cli", "bench", "symbolic", "--split", "val", "--episodes", "1",
         "--agents", "first-listed", "--json", str(out)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    rows = json.loads(out.read_text())["rows"]
    assert rows and all(r["agent"] == "first-listed" for r in rows)
    assert all(r["steps"] >= 1 for r in rows)
