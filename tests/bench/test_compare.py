"""Two closed-loop runs compared pair by pair, on results files written by the benchmark's own
writer with constructed rows whose counts, p-values and intervals are known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sg_search.bench.compare import compare, first_difference, mcnemar_p, parting, pick_sides, wilson
from sg_search.bench.results_file import ResultsFile
from sg_search.cli import main


def _write(path: Path, agents: str, rows: list[dict[str, Any]], max_actions: int = 1500) -> Path:
    work = {"agents": agents, "episodes": 10, "episodes_file": "", "max_actions": max_actions,
            "noise": False, "reasoner_params": [], "seed": 0, "split": "val"}  # fmt: skip
    results = ResultsFile(path, {"benchmark": "closed-loop", "jobs": len(rows), "work": work})
    for job, row in enumerate(rows):
        results.append({"episode": job, "seed": job, **row})
    return path


def _row(reasoner: str, episode: int, steps: float, success: bool, cause: str = "found") -> dict[str, Any]:
    return {"reasoner": reasoner, "scene": f"house_{episode}", "query": f"thing {episode}", "steps": steps,
            "success": float(success), "cause": cause if success else "target never detected"}  # fmt: skip


def test_a_change_found_by_six_more_episodes_is_a_p_of_one_in_thirty_two(tmp_path: Path) -> None:
    # main finds 0-3 by 400 actions; the change finds 0-3 the same and 4-9 at 300 (main: never)
    same = [_row("scout", e, 400, True) for e in range(4)]
    main_rows = same + [_row("scout", e, 1500, False) for e in range(4, 10)]
    new_rows = same + [_row("scout", e, 300, True) for e in range(4, 10)]
    a, b = pick_sides([_write(tmp_path / "main.jsonl", "scout", main_rows),
                       _write(tmp_path / "new.jsonl", "scout", new_rows)])  # fmt: skip
    result = compare(a, b)
    at = {r.budget: r for r in result.budgets}
    assert (at[250].found_a, at[250].found_b, at[250].p_value) == (0, 0, 1.0)
    assert (at[500].found_a, at[500].found_b, at[500].only_a, at[500].only_b) == (4, 10, 0, 6)
    assert at[500].p_value == pytest.approx(2 * 0.5**6)  # all six discordant pairs one way
    assert at[500].interval_b[1] == pytest.approx(1.0) and at[500].interval_b[0] < 1.0
    assert [c.episode for c in result.changed] == [4, 5, 6, 7, 8, 9]
    assert "A target never detected (1500 actions); B found at 300" in result.table()


def test_two_reasoners_of_one_run_are_paired_by_episode_not_by_job(tmp_path: Path) -> None:
    # jobs interleave the reasoners: job 2e is scout's episode e, job 2e + 1 nearest's
    rows = []
    for e in range(3):
        rows += [_row("scout", e, 100 + e, True), _row("nearest", e, 1500, e == 0)]
    a, b = pick_sides([_write(tmp_path / "run.jsonl", "scout,nearest", rows)])
    result = compare(a, b)
    assert (a.reasoner, b.reasoner, result.episodes) == ("scout", "nearest", (0, 1, 2))
    last = result.budgets[-1]
    assert (last.budget, last.found_a, last.found_b, last.only_a) == (1500, 3, 1, 2)


def test_runs_that_drew_different_episodes_are_refused_naming_the_episode(tmp_path: Path) -> None:
    other = [_row("scout", e, 100, True) for e in range(3)]
    other[1] = {**other[1], "query": "passport"}
    a, b = pick_sides([_write(tmp_path / "a.jsonl", "scout", [_row("scout", e, 100, True) for e in range(3)]),
                       _write(tmp_path / "b.jsonl", "scout", other)])  # fmt: skip
    with pytest.raises(ValueError, match=r"episode 1 is house_1 'thing 1' .* but house_1 'passport'"):
        compare(a, b)


def test_budgets_are_counted_only_up_to_the_shorter_run(tmp_path: Path) -> None:
    a, b = pick_sides([_write(tmp_path / "a.jsonl", "scout", [_row("scout", 0, 90, True)], max_actions=500),
                       _write(tmp_path / "b.jsonl", "scout", [_row("scout", 0, 90, True)])])  # fmt: skip
    assert [r.budget for r in compare(a, b).budgets] == [100, 250, 500]


def test_the_statistics_match_their_textbook_values() -> None:
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(2, 0) == pytest.approx(0.5)
    assert mcnemar_p(3, 7) == pytest.approx(0.34375)  # 2 * P(X <= 3), X ~ Bin(10, 0.5)
    low, high = wilson(32, 50)  # Wilson score interval of 0.64 on 50
    assert (round(low, 3), round(high, 3)) == (0.501, 0.759)


def test_the_command_prints_the_table_and_names_a_file_that_is_no_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [_row("scout", 0, 100, True), _row("nearest", 0, 700, True)]
    run = _write(tmp_path / "run.jsonl", "scout,nearest", rows)
    assert main(["compare", str(run), "--json", str(tmp_path / "c.json")]) == 0
    assert "1 paired episodes" in capsys.readouterr().out
    assert '"only_a": 1' in (tmp_path / "c.json").read_text()  # found by 500 by scout only
    with run.open("a") as killed:  # a run killed while writing a row: its whole rows count
        killed.write('{"episode": 2, "reasoner": "sco')
    assert main(["compare", str(run)]) == 0
    (tmp_path / "notes.txt").write_text("not json\n")
    assert main(["compare", str(tmp_path / "notes.txt")]) == 2
    assert "notes.txt: the first line is not a results header" in capsys.readouterr().err
    assert main(["compare", str(run), "--reasoners", "scout,random"]) == 2
    assert "holds no reasoner 'random'" in capsys.readouterr().err


def test_which_side_found_sooner_counts_only_episodes_both_found(tmp_path: Path) -> None:
    # A finds 0-5 in half B's actions, 6 in as many, 7 only; B alone finds nothing sooner
    a_rows = [_row("scout", e, 100, True) for e in range(6)] + [
        _row("scout", 6, 300, True),
        _row("scout", 7, 50, True),
    ]
    b_rows = [_row("scout", e, 200, True) for e in range(6)] + [
        _row("scout", 6, 300, True),
        _row("scout", 7, 1500, False),
    ]
    a, b = pick_sides(
        [_write(tmp_path / "a.jsonl", "scout", a_rows), _write(tmp_path / "b.jsonl", "scout", b_rows)]
    )
    sooner = compare(a, b).sooner
    assert (sooner.both, sooner.a_sooner, sooner.b_sooner) == (7, 6, 0)
    assert sooner.p_value == pytest.approx(2 * 0.5**6)
    assert sooner.median_ratio == pytest.approx(0.5)


def _step(
    action: int, phase: str, node: str, utility: float, top: list[list[Any]] | None = None
) -> dict[str, Any]:
    step = {"action": action, "phase": phase, "node": node, "what": node.split("_")[0], "utility": utility}
    return {**step, "top": top} if top else step


def test_the_step_where_two_runs_of_an_episode_part_is_named(tmp_path: Path) -> None:
    shared = [_step(0, "look-around", "", 0.0), _step(12, "reason", "fridge_1", 0.7)]
    main_trace = [
        *shared,
        _step(40, "reason", "cabinet_2", 0.5, [["cabinet_2", "open", 0.5], ["sink_3", "inspect", 0.4]]),
    ]
    new_trace = [
        *shared,
        _step(40, "reason", "sink_3", 0.45, [["sink_3", "inspect", 0.45], ["cabinet_2", "open", 0.44]]),
    ]
    a, b = pick_sides([
        _write(tmp_path / "main.jsonl", "scout", [{**_row("scout", 0, 1500, False), "trace": main_trace}]),
        _write(tmp_path / "new.jsonl", "scout", [{**_row("scout", 0, 90, True), "trace": new_trace}]),
    ])  # fmt: skip
    table = compare(a, b).table()
    assert (
        "the runs part at action 40 (step 3): A reason cabinet_2 (cabinet, 0.50) over sink_3 0.40; "
        "B reason sink_3 (sink, 0.45) over cabinet_2 0.44"
    ) in table


def test_traces_part_at_the_first_differing_step_or_where_the_shorter_ends() -> None:
    trace = [
        _step(0, "look-around", "", 0.0),
        _step(12, "reason", "fridge_1", 0.7),
        _step(30, "found", "mug_4", 0.9),
    ]
    assert first_difference(trace, list(trace)) is None
    assert first_difference(trace, trace[:2]) == 2  # one run went on where the other ended
    assert first_difference(trace, [trace[0], _step(13, "reason", "fridge_1", 0.7)]) == 1  # a later action
    assert first_difference(trace, [trace[0], _step(12, "reason", "fridge_1", 0.6)]) == 1  # another utility
    assert parting(trace, None) is None  # a row written before traces were kept
    assert (
        parting(trace, trace[:2]) == "the runs part at action 30 (step 3): A found mug_4 (mug, 0.90); B ended"
    )
