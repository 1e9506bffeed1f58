from __future__ import annotations

import json
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


def test_pending_subcommands_say_so_and_fail() -> None:
    result = _run("sim")
    assert result.returncode == 2 and "not available yet" in result.stderr


def test_graph_schema_is_yaml_with_node_kinds() -> None:
    result = _run("graph", "schema")
    schema = yaml.safe_load(result.stdout)
    assert {"container", "frontier", "room"} <= set(schema["node_kinds"])
    assert "metres" in schema["node"]["position"]


def test_bench_writes_json_with_rates_in_unit_interval(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = _run("bench", "graph-updates", "--episodes", "1", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert "integrate_ms_mean" in result.stdout
    data = json.loads(out.read_text())
    assert data["options"]["episodes"] == 1 and len(data["rows"]) == 1
    assert 0.0 < data["summary"]["incremental_share"] < 1.0


def test_bench_rejects_unknown_names_and_splits() -> None:
    unknown = _run("bench", "nope")
    assert unknown.returncode == 2 and "graph-updates" in unknown.stderr
    split = _run("bench", "graph-updates", "--split", "val", "--episodes", "1")
    assert split.returncode == 2 and "no splits" in split.stderr
