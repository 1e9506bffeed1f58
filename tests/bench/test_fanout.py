"""Benchmarks fanned out: the local pool and a two-node Ray cluster give the same rows; results
survive a killed run; a dead worker is retried once; Ray never leaves the loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from sg_search.bench import fanout
from sg_search.bench.harness import BenchOptions, EpisodesFailed, map_episodes, run_benchmark
from sg_search.bench.results_file import TIMING_KEYS, ResultsFile

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from ray_cluster_run import CLOSED_LOOP, SYMBOLIC  # noqa: E402
from scripted_llm import scripted_llm  # noqa: E402
from test_symbolic_llm import answer  # noqa: E402


def _rows(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines()[1:]
    rows = [{k: v for k, v in json.loads(line).items() if k not in TIMING_KEYS} for line in lines]
    return sorted(rows, key=lambda r: int(r["episode"]))


@pytest.mark.xdist_group("robot")  # two Ray nodes and a process pool: not beside the timed robot tests
def test_a_two_node_ray_cluster_and_the_local_pool_give_the_same_rows(tmp_path: Path) -> None:
    llm: dict[str, Any] = {"split": "val", "episodes": 1, "agents": "sgnav", "workers": 2}
    with scripted_llm(answer) as server:
        llm["reasoner_params"] = [f"llm_base_url={server.base_url}", "llm_model=scripted",
                                  f"llm_cache_dir={tmp_path / 'cache'}", "fallback=nearest"]  # fmt: skip
        for run_name in ("fresh", "cached"):  # the second from the cache
            results = str(tmp_path / f"llm-{run_name}.jsonl")
            fields = {**llm, "reasoner_params": tuple(llm["reasoner_params"])}
            run_benchmark("symbolic", BenchOptions(**fields, out=str(tmp_path), results=results))
        assert server.requests and all(r["llm_calls"] == 0 for r in _rows(tmp_path / "llm-cached.jsonl"))
    ray_out = tmp_path / "ray"
    ray_out.mkdir()
    run = subprocess.run(
        [ROOT / "scripts/private-network", sys.executable, HERE / "ray_cluster_run.py", ray_out,
         json.dumps(llm)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads((ray_out / "report.json").read_text())
    assert report["interfaces"] == ["lo"] and report["nodes"] == 2  # nothing but loopback to listen on
    for name, fields in (("symbolic", SYMBOLIC), ("closed-loop", CLOSED_LOOP)):
        local = tmp_path / f"{name}.jsonl"
        options = BenchOptions(**fields, out=str(tmp_path), results=str(local))  # type: ignore[arg-type]
        summary = run_benchmark(name, options).summary
        assert _rows(ray_out / f"{name}.jsonl") == _rows(local), name
        assert _untimed(summary) == _untimed(report[name]), name
    assert _rows(ray_out / "llm.jsonl") == _rows(tmp_path / "llm-cached.jsonl")  # one cache, shared
    nodes = {json.loads(line)["node"] for line in (ray_out / "symbolic.jsonl").read_text().splitlines()[1:]}
    assert len(nodes) == 2  # two tasks in flight on two one-CPU nodes: both nodes ran episodes
    assert [r["value"] for r in report["retried"]] == [0.0, 1.0]  # each worker died once, retried
    assert report["dead"][0]["error"].startswith(fanout.DIED_TWICE)


def _untimed(summary: dict[str, float]) -> str:
    """The summary without what depends on the machine's speed, comparable with NaNs."""
    timed = ("_ms", "wall", "render", "latency")
    return json.dumps({k: v for k, v in summary.items() if not any(t in k for t in timed)}, sort_keys=True)


# --------------------------------------------------------------------------- the local pool


def _episode(marker_dir: Path, seed: int) -> dict[str, Any]:
    """Seed 1 kills its worker every time, seed 2 the first time; seed 3 raises (not retried)."""
    runs = marker_dir / f"runs-{seed}"
    runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
    if seed == 1 or (seed == 2 and runs.read_text() == "x"):
        os._exit(1)
    if seed == 3:
        raise RuntimeError("episode 3 is broken")
    return {"value": float(seed)}


def test_the_local_pool_retries_a_dead_worker_once_and_records_what_failed(tmp_path: Path) -> None:
    options = BenchOptions(episodes=5, workers=2, out=str(tmp_path), results=str(tmp_path / "r.jsonl"))
    rows = map_episodes(
        partial(_episode, tmp_path), options, "pool", failed=lambda seed, error: {"error": error}
    )
    assert [r.get("value") for r in rows] == [0.0, None, 2.0, None, 4.0]
    assert rows[1]["error"] == fanout.DIED_TWICE
    assert rows[3]["error"] == "RuntimeError: episode 3 is broken"
    # once in the pool, then alone: once, or twice when another episode was running beside it
    assert (tmp_path / "runs-1").read_text() in ("xx", "xxx")
    assert _rows(tmp_path / "r.jsonl") == [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]


@pytest.mark.parametrize(
    ("crashed", "started", "requeued", "tries"),
    [
        ([1, 2], {1}, [2], {1: 1}),  # 2 was queued when 1 died: new again; 1 charged, once alone
        ([0, 1], {0, 1}, [], {0: 2, 1: 2}),  # either died: neither charged, two tries alone each
        ([3], set(), [], {3: 1}),  # nothing ran: the pool itself broke
    ],
)
def test_a_broken_pool_charges_a_death_only_to_the_episode_known_to_have_died(
    crashed: list[int], started: set[int], requeued: list[int], tries: dict[int, int]
) -> None:
    assert fanout.after_a_broken_pool(crashed, started) == (requeued, tries)


def test_pool_workers_end_when_their_driver_is_killed(tmp_path: Path) -> None:
    driver = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("pool_driver.py")), str(tmp_path)]
    )
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.iterdir())) < 2:  # both workers are in their minute-long episode
            assert driver.poll() is None and time.monotonic() < deadline, "the workers never started"
            time.sleep(0.05)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    workers = [int(p.name) for p in tmp_path.iterdir()]
    deadline = time.monotonic() + 20
    while alive := [pid for pid in workers if Path(f"/proc/{pid}").exists() and _running(pid)]:
        assert time.monotonic() < deadline, f"workers {alive} outlived their killed driver"
        time.sleep(0.1)


def _running(pid: int) -> bool:
    """Not a zombie (an orphaned worker that exited waits for init to reap it)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_without_failure_rows_a_failed_episode_stays_out_of_the_file_and_the_run_says_so(
    tmp_path: Path,
) -> None:
    options = BenchOptions(
        episodes=3, workers=1, seed=3, out=str(tmp_path), results=str(tmp_path / "r.jsonl")
    )
    with pytest.raises(EpisodesFailed, match=r"episode 0 \(seed 3\): RuntimeError: episode 3 is broken"):
        map_episodes(partial(_episode, tmp_path), options, "serial")  # in this process: seeds 3, 4, 5
    assert [r["episode"] for r in _rows(tmp_path / "r.jsonl")] == [1, 2]


# --------------------------------------------------------------------------- results that survive

RESUMABLE = ["closed-loop", "--split", "val", "--episodes", "4", "--agents", "scout", "--max-actions", "40"]


def _bench(*args: str) -> list[str]:
    return [sys.executable, "-m", "sg_search.cli", "bench", *args]


def test_a_killed_run_resumes_where_it_stopped_and_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    results = tmp_path / "killed.jsonl"
    run = subprocess.Popen(
        _bench(*RESUMABLE, "--out", str(tmp_path), "--results", str(results)),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not (results.exists() and len(results.read_text().splitlines()) >= 2):
            assert run.poll() is None and time.monotonic() < deadline, "no episode finished"
            time.sleep(0.05)
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait()
    before = results.read_text()
    done = len(before.splitlines()) - 1
    assert 1 <= done < 4
    other = subprocess.run(
        _bench(*RESUMABLE[:-1], "60", "--out", str(tmp_path), "--resume", str(results)),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert other.returncode == 2 and "max_actions is 40 there, 60 here" in other.stderr
    assert results.read_text() == before  # a refused resume changes nothing
    resumed = subprocess.run(
        _bench(*RESUMABLE, "--out", str(tmp_path), "--resume", str(results), "--json", f"{tmp_path}/r.json"),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{done} of 4 already there" in resumed.stderr
    assert results.read_text().startswith(before)  # the finished episodes were not run again
    fresh = tmp_path / "fresh.jsonl"
    whole = subprocess.run(
        _bench(*RESUMABLE, "--out", str(tmp_path), "--results", str(fresh), "--workers", "2"),
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert whole.returncode == 0, whole.stderr[-2000:]
    assert _rows(results) == _rows(fresh)
    assert [r["episode"] for r in json.loads((tmp_path / "r.json").read_text())["rows"]] == [0, 1, 2, 3]


def test_a_cut_off_last_line_is_dropped_and_a_results_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    header = {"benchmark": "b", "work": {"seed": 0}}
    first = ResultsFile(path, header)
    first.append({"episode": 0, "value": 1.0})
    with path.open("a") as stream:
        stream.write('{"episode": 1, "val')  # killed while writing
    with pytest.raises(ValueError, match="already holds results; pass --resume"):
        ResultsFile(path, header)
    with pytest.raises(ValueError, match="seed is 0 there, 1 here"):
        ResultsFile(path, {"benchmark": "b", "work": {"seed": 1}}, resume=True)
    again = ResultsFile(path, header, resume=True)
    assert list(again.rows) == [0]
    again.append({"episode": 1, "value": 2.0})
    assert [json.loads(line)["episode"] for line in path.read_text().splitlines()[1:]] == [0, 1]


def test_a_local_ray_is_refused_where_other_interfaces_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SG_SEARCH_MULTI_MACHINE", raising=False)
    monkeypatch.setattr(fanout, "network_interfaces", lambda: ["lo", "eth0"])
    with pytest.raises(ValueError, match=r"every network interface \(here eth0\).*scripts/private-network"):
        run_benchmark("symbolic", BenchOptions(split="val", backend="ray"))
    monkeypatch.setattr(fanout, "network_interfaces", lambda: ["lo"])
    fanout.check_local_ray_allowed()
    monkeypatch.setattr(fanout, "network_interfaces", lambda: ["lo", "eth0"])
    monkeypatch.setenv("SG_SEARCH_MULTI_MACHINE", "1")
    fanout.check_local_ray_allowed()
