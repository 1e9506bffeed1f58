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
