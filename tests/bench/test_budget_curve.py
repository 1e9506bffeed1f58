"""Success against budget from one run's rows: an episode counts at every budget it finished
within (constructed rows whose answers are known)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.bench.closed_loop import _budget_curve
from sg_search.bench.harness import BenchOptions


def _row(steps: float, success: bool, spl: float) -> dict[str, object]:
    return {"reasoner": "scout", "cause": "x", "steps": steps, "success": float(success), "SPL": spl,
            "path_m": 10.0, "sim_s": 60.0}  # fmt: skip


def test_sr_and_spl_count_an_episode_only_from_the_budget_it_finished_within(tmp_path: Path) -> None:
    rows = [_row(80, True, 0.5), _row(400, True, 0.3), _row(1200, True, 0.2), _row(1500, False, 0.0)]
    summary: dict[str, float] = {}
    _budget_curve(rows, ("scout",), 1500, summary, BenchOptions(out=str(tmp_path)))
    assert [summary[f"scout/SR@{b}"] for b in (100, 250, 500, 1000, 1500)] == [0.25, 0.25, 0.5, 0.5, 0.75]
    assert summary["scout/SPL@500"] == pytest.approx((0.5 + 0.3) / 4)
    assert summary["scout/SPL@1500"] == pytest.approx(1.0 / 4)
    # 2 of 4 by 500: the Wilson score interval of 0.5 on 4 is 0.5 -/+ 0.35
    assert (summary["scout/SR@500/low"], summary["scout/SR@500/high"]) == pytest.approx(
        (0.150, 0.850), abs=1e-3
    )
    assert (tmp_path / "closed_loop_budget.png").stat().st_size > 0
