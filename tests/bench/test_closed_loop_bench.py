"""The closed-loop benchmark books an episode that raised as a failure: on the progress line,
in the summary's error count and in the episode's row (a run whose every episode raised once
read "failures 0" as it went)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.bench import closed_loop
from sg_search.bench.harness import BenchOptions
from sg_search.sim.episodes import Episode


def test_an_episode_that_raises_is_a_failure_on_the_progress_line_and_in_its_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(episode: Episode, reasoner: str, *_: object) -> dict[str, float]:
        raise RuntimeError(f"{episode.query!r} cannot run")

    monkeypatch.setattr(closed_loop, "run_episode", broken)
    options = BenchOptions(
        split="val", episodes=2, agents="scout", out=str(tmp_path), results=str(tmp_path / "r.jsonl")
    )
    report = closed_loop.run(options)  # one worker: the episodes run in this process
    assert report.summary["scout/errors"] == 2
    assert [r["success"] for r in report.rows] == [0.0, 0.0]
    assert all(r["end"].startswith("ERROR RuntimeError: ") and "cannot run" in r["end"] for r in report.rows)
    assert "failures 2" in capsys.readouterr().err
