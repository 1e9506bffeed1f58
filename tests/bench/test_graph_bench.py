from __future__ import annotations

import json
from pathlib import Path

from sg_search.bench.graph import _run_size
from sg_search.bench.harness import BenchOptions, BenchReport


def test_small_graph_run_reports_batched_llm_calls_and_exact_snapshots() -> None:
    row = _run_size(100, seed=3, frames=20)
    assert row["n100_snapshot_identical_rate"] == 1.0
    assert 0.0 < row["n100_llm_calls_per_frame"] <= 1.0
    assert row["n100_naive_calls_per_frame"] > 10 * row["n100_llm_calls_per_frame"]
    assert 0.0 < row["n100_incremental_share"] < 1.0
    assert row["n100_update_ms_median"] > 0.0


def test_report_json_has_options_summary_and_rows(tmp_path: Path) -> None:
    report = BenchReport("x", BenchOptions(episodes=2), {"sr": 0.5}, [{"episode": 0, "sr": 0.5}])
    path = tmp_path / "r.json"
    report.write_json(path)
    data = json.loads(path.read_text())
    assert data["options"]["episodes"] == 2 and data["summary"] == {"sr": 0.5} and len(data["rows"]) == 1
    assert "sr" in report.table()
