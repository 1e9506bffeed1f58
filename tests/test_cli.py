from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

SG_SEARCH = str(Path(sys.prefix) / "bin" / "sg-search")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SG_SEARCH, *args], capture_output=True, text=True, timeout=120)


def test_help_lists_every_subcommand() -> None:
    result = _run("--help")
    assert result.returncode == 0
    for command in ("demo", "bench", "search", "graph", "sim", "knowledge", "distill"):
        assert command in result.stdout


def test_distill_build_names_a_missing_answers_file(tmp_path: Path) -> None:
    result = _run("distill", "build", "--answers", str(tmp_path / "none.yaml"), "--out", str(tmp_path))
    assert result.returncode == 2 and "none.yaml" in result.stderr and "Traceback" not in result.stderr


def test_graph_schema_is_yaml_with_node_kinds() -> None:
    result = _run("graph", "schema")
    schema = yaml.safe_load(result.stdout)
    assert {"container", "frontier", "room"} <= set(schema["node_kinds"])
    assert "metres" in schema["node"]["position"]


def test_bench_list_names_the_benchmarks() -> None:
    result = _run("bench", "list")
    assert result.returncode == 0 and "graph" in result.stdout and "dds-images" in result.stdout


def test_bench_rejects_unknown_names_and_splits() -> None:
    unknown = _run("bench", "nope")
    assert unknown.returncode == 2 and "graph" in unknown.stderr
    split = _run("bench", "graph", "--split", "val", "--episodes", "1")
    assert split.returncode == 2 and "no splits" in split.stderr


def test_graph_draw_renders_a_snapshot(tmp_path: Path) -> None:
    from sg_search.config import package_share
    from sg_search.scene_graph.prior import load_prior
    from sg_search.scene_graph.serialization import save_snapshot

    snapshot = tmp_path / "g.json"
    save_snapshot(load_prior(package_share() / "config" / "demo" / "apartment.yaml"), snapshot)
    out = tmp_path / "g.png"
    result = _run("graph", "draw", str(snapshot), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    refused = _run("graph", "draw", str(bad), "--out", str(out))
    assert refused.returncode == 2 and "not a scene graph snapshot" in refused.stderr


def test_sim_layout_writes_a_loadable_prior_and_a_picture(tmp_path: Path) -> None:
    result = _run("sim", "layout", "--scene", "Merom_1_int", "--seed", "2", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    prior = yaml.safe_load((tmp_path / "Merom_1_int_seed2.yaml").read_text())
    assert prior["metadata"]["synthetic_adjacency"] is True and prior["rooms"] and prior["doors"]
    assert (tmp_path / "Merom_1_int_seed2.png").stat().st_size > 10_000
    unknown = _run("sim", "layout", "--scene", "Nowhere_0_int", "--out", str(tmp_path))
    assert unknown.returncode == 2 and "unknown scene 'Nowhere_0_int'" in unknown.stderr


def test_view_names_a_missing_recording(tmp_path: Path) -> None:
    result = _run("view", str(tmp_path))
    assert result.returncode == 2 and f"no recording at {tmp_path / 'run.rrd'}" in result.stderr


def test_view_serves_a_recording_on_loopback_only(tmp_path: Path) -> None:
    """``sg-search view --web`` in a private network namespace: the web viewer answers on
    127.0.0.1, nothing listens on another address, and SIGTERM ends the viewer with it."""
    from sg_search.view import SearchLog

    log = SearchLog.to_file(tmp_path / "run.rrd")
    log.set_time(0.0)
    log.robot(0.0, 0.0, 0.0)
    log.close()
    root = Path(__file__).resolve().parents[1]
    fetch = f"{sys.executable} -c 'import urllib.request as u; print(u.urlopen(\"http://127.0.0.1:19091/\").read()[:2000])'"
    script = (
        f"{SG_SEARCH} view {tmp_path} --web --port 19877 --web-port 19091 & pid=$!; "
        f"for i in $(seq 100); do {fetch} >/dev/null 2>&1 && break; sleep 0.2; done; "
        f"{fetch}; ss -ltnH; kill -TERM $pid; wait $pid; echo exit=$?; sleep 0.5; ss -ltnH | wc -l"
    )
    result = subprocess.run(
        [str(root / "scripts" / "private-network"), "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = result.stdout
    assert "Rerun" in out, result.stderr[-2000:]
    listening = [line.split()[3] for line in out.splitlines() if line.startswith("LISTEN")]
    assert listening and all(a.startswith("127.0.0.1:") for a in listening), listening
    assert "exit=0" in out and out.strip().endswith("0"), out[-500:]
