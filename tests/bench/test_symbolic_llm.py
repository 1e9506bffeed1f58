"""`bench symbolic` with LLM reasoners against a scripted server: LLM counters in every row,
SG-Nav's requests per decision beside the naive count, and a re-run from the response cache
that asks the server nothing and repeats every result."""

from __future__ import annotations

import json
from pathlib import Path

from scripted_llm import ScriptedLlm, scripted_llm

from sg_search.bench import BenchOptions, run_benchmark

VARYING = {"llm_calls", "llm_cache_hits", "llm_latency_s", "decision_ms"}  # differ by nature between runs


def answer(prompt: str) -> str:
    if "subgraphs of the" in prompt:
        return json.dumps({"subgraphs": [{"n": 1, "distance": 3.0, "reason": "kitchens hold food"}]})
    return "not json at all"  # moma-llm: repaired, then the fallback decides


def test_second_run_from_cache_repeats_results_without_requests(tmp_path: Path) -> None:
    ref: list[ScriptedLlm] = []
    with scripted_llm(answer) as server:
        ref.append(server)
        options = BenchOptions(
            split="val",
            episodes=1,
            agents="sgnav,moma-llm",
            out=str(tmp_path / "runs"),
            reasoner_params=(
                f"llm_base_url={server.base_url}",
                "llm_model=scripted",
                f"llm_cache_dir={tmp_path}",
                "fallback=nearest",
            ),
        )
        first = run_benchmark("symbolic", options)
        asked = len(server.requests)
        second = run_benchmark("symbolic", options)
        assert len(server.requests) == asked > 0
    for a, b in zip(first.rows, second.rows, strict=True):
        assert {k: v for k, v in a.items() if k not in VARYING} == {
            k: v for k, v in b.items() if k not in VARYING
        }
        assert b["llm_calls"] == 0 and b["llm_cache_hits"] == a["llm_requests"]
    moma = [r for r in first.rows if r["agent"] == "moma-llm"]
    assert all(r["llm_fallbacks"] == r["steps"] and r["llm_repairs"] == r["steps"] for r in moma)
    assert "nearest decided" in moma[0]["explanation"]
    sgnav = first.extra["agents"]["sgnav"]["llm"]
    assert 0 < sgnav["sgnav_calls_per_decision"] < sgnav["sgnav_naive_calls_per_decision"]
    assert "requests per decision" in first.text and "naive 4 x subgraphs" in first.text
