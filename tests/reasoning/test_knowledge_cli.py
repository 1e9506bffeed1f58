"""``sg-search knowledge score`` and ``sg-search bench symbolic --episodes-file``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sg_search.bench.harness import BenchOptions
from sg_search.bench.symbolic import run
from sg_search.cli import main


def test_score_adds_a_score_to_every_good_line_and_names_bad_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    lines = [
        {"kind": "contain", "a": "kitchen", "b": "plate"},
        {"kind": "cooccur", "a": "fridge", "b": "milk carton"},
        {"kind": "contain", "a": "", "b": "Mugs"},
        {"kind": "guess", "a": "x", "b": "y"},
    ]
    pairs.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    assert main(["knowledge", "score", "--pairs", str(pairs)]) == 2
    out, err = capsys.readouterr()
    scored = [json.loads(line) for line in out.splitlines()]
    assert [{k: v for k, v in s.items() if k != "score"} for s in scored] == lines[:3]
    assert all(0.0 <= s["score"] <= 1.0 for s in scored)
    assert f"{pairs}:4" in err and f"{pairs}:5" in err


def test_symbolic_runs_an_episodes_file_and_counts_what_it_cannot_place(tmp_path: Path) -> None:
    episodes = tmp_path / "episodes.jsonl"
    rows = [
        {
            "scene": "Rs_int",
            "query": "milk_carton",
            "relation": "inside",
            "container": "fridge",
            "room": "kitchen",
        },
        {"scene": "Rs_int", "query": "sock", "relation": "inroom", "container": None, "room": "bedroom"},
        {"scene": "Rs_int", "query": "mug", "relation": "inside", "container": "wardrobe", "room": "garage"},
        {"scene": "Nowhere_int", "query": "mug", "relation": "inroom", "container": None, "room": "kitchen"},
    ]
    episodes.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    options = BenchOptions(
        split="file", episodes=1, agents="oracle,scout", episodes_file=str(episodes), out=str(tmp_path)
    )
    report = run(options)
    assert report.extra["episodes"]["per_tier"] == {"file": 2}
    assert report.extra["episodes"]["set_aside"] == {"file": 2}
    assert report.extra["agents"]["oracle"]["SR"] == 1.0
    assert {r["agent"] for r in report.rows} == {"oracle", "scout"} and len(report.rows) == 4
    scout = report.extra["agents"]["scout"]
    assert 0.0 <= scout["SPL"] <= scout["SR"] <= 1.0 and scout["decision_ms_1000_nodes"]["nodes"] == 1000
    path = tmp_path / "out.json"
    report.write_json(path)
    assert set(json.loads(path.read_text())["agents"]) == {"oracle", "scout"}
