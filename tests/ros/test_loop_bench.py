"""The ros-loop benchmark's reading of its rows (constructed: a run over DDS takes minutes per
episode; ``sg-search bench ros-loop`` is the measurement) and its refusals."""

from __future__ import annotations

from typing import Any

import pytest

from sg_search.bench.harness import BenchOptions
from sg_search.ros.loop_bench import SEARCH_BUDGET_S, found_within, run, summarise


def _row(dds: bool, inproc: bool, sim_s: float, end: str = "NONE") -> dict[str, Any]:
    return {"scene": "Rs_int", "query": "mug", "relation": "inside", "reasoner": "scout",
            "dds/success": float(dds), "dds/SPL": 0.5 if dds else 0.0, "dds/path_m": 9.0,
            "dds/wall_s": 120.0, "dds/end": end, "inproc/success": float(inproc),
            "inproc/SPL": 0.4 if inproc else 0.0, "inproc/path_m": 8.0, "inproc/steps": 300.0,
            "inproc/sim_s": sim_s, "inproc/cause": "found" if inproc else "container never opened",
            "inproc/wall_s": 10.0}  # fmt: skip


def test_the_in_process_run_counts_on_the_dds_runs_clock() -> None:
    """A find after more simulated seconds than the DDS search had is not a find at that budget."""
    assert found_within(_row(False, True, SEARCH_BUDGET_S), SEARCH_BUDGET_S)
    assert not found_within(_row(False, True, SEARCH_BUDGET_S + 1.0), SEARCH_BUDGET_S)
    assert not found_within(_row(False, False, 10.0), SEARCH_BUDGET_S)


def test_the_pairs_and_rates_of_both_wirings() -> None:
    rows = [
        _row(True, True, 100.0),  # both
        _row(True, True, SEARCH_BUDGET_S + 50.0),  # over DDS only: in process found later
        _row(False, True, 200.0),  # in process only
        _row(False, False, 900.0, "ERROR the demo exited 1 without a result"),
    ]
    s = summarise(rows)
    assert (s["pairs/both"], s["pairs/dds_only"], s["pairs/inproc_only"]) == (1.0, 1.0, 1.0)
    assert (s["dds/SR"], s["inproc/SR"], s["inproc/SR_within_budget_s"]) == (0.5, 0.75, 0.5)
    assert s["dds/errors"] == 1.0 and s["dds/SPL"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (BenchOptions(split="val", episodes=2, workers=2), "--workers 1"),
        (BenchOptions(split="val", episodes=2, agents="scout,nearest"), "one reasoner"),
    ],
)
def test_two_node_sets_at_once_or_two_reasoners_are_refused(options: BenchOptions, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        run(options)
