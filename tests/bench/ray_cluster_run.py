"""Benchmarks on a two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``): what
tests/bench/test_fanout.py compares with the local pool. Run only inside a private network
namespace (``scripts/private-network``): Ray listens on every interface there is.

    python ray_cluster_run.py OUT_DIR [LLM_OPTIONS_JSON]  ->  OUT_DIR/report.json, OUT_DIR/*.jsonl

LLM_OPTIONS_JSON: a symbolic run whose LLM answers all come from a filled response cache (the
endpoint it names is outside this network namespace, so a cache miss would show in the rows).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

import ray
from ray.cluster_utils import Cluster

from sg_search.bench.fanout import network_interfaces
from sg_search.bench.harness import BenchOptions, map_episodes, run_benchmark

SYMBOLIC = {"split": "val", "episodes": 2, "agents": "scout,nearest", "workers": 2}
CLOSED_LOOP = {"split": "val", "episodes": 2, "agents": "scout", "workers": 2, "max_actions": 60}


def dies_the_first_time(marker_dir: str, seed: int) -> dict[str, Any]:
    """Kills its worker process the first time it runs for a seed (a crash, not an exception)."""
    marker = Path(marker_dir) / f"ran-{seed}"
    if not marker.exists():
        marker.touch()
        os._exit(1)
    return {"value": float(seed)}


def always_dies(seed: int) -> dict[str, Any]:
    os._exit(1)


def main(out: Path, llm: dict[str, Any] | None) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address)
    report: dict[str, Any] = {"interfaces": network_interfaces(), "nodes": len(ray.nodes())}
    runs = [("symbolic", "symbolic", SYMBOLIC), ("closed-loop", "closed-loop", CLOSED_LOOP)]
    if llm is not None:
        runs.append(("symbolic", "llm", {**llm, "reasoner_params": tuple(llm["reasoner_params"])}))
    for name, label, fields in runs:
        results = str(out / f"{label}.jsonl")
        options = BenchOptions(
            **fields, backend="ray", ray_address=cluster.address, out=str(out), results=results
        )
        report[label] = run_benchmark(name, options).summary
    markers = out / "markers"
    markers.mkdir()
    retried = BenchOptions(
        episodes=2, backend="ray", workers=2, out=str(out), results=str(out / "retried.jsonl")
    )
    report["retried"] = map_episodes(lambda s: dies_the_first_time(str(markers), s), retried, "retried")
    dead = BenchOptions(episodes=1, backend="ray", out=str(out), results=str(out / "dead.jsonl"))
    report["dead"] = map_episodes(always_dies, dead, "dead", failed=lambda seed, error: {"error": error})
    ray.shutdown()
    cluster.shutdown()
    (out / "report.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]), json.loads(sys.argv[2]) if len(sys.argv) > 2 else None)
