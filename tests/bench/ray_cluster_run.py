"""Benchmarks on a two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``): what
tests/bench/test_fanout.py compares with the local pool. Run only inside a private network
namespace (``scripts/private-network``): Ray listens on every interface there is.

    python ray_cluster_run.py OUT_DIR   ->  OUT_DIR/report.json, OUT_DIR/*.jsonl
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


def main(out: Path) -> None:
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address)
    report: dict[str, Any] = {"interfaces": network_interfaces(), "nodes": len(ray.nodes())}
    for name, fields in (("symbolic", SYMBOLIC), ("closed-loop", CLOSED_LOOP)):
        options = BenchOptions(
            **fields,
            backend="ray",
            ray_address=cluster.address,
            out=str(out),
            results=str(out / f"{name}.jsonl"),
        )  # type: ignore[arg-type]
        report[name] = run_benchmark(name, options).summary
    retried = BenchOptions(
        episodes=2, backend="ray", workers=2, out=str(out), results=str(out / "retried.jsonl")
    )
    (out / "markers").mkdir()
    report["retried"] = map_episodes(
        lambda s: dies_the_first_time(str(out / "markers"), s), retried, "retried"
    )
    dead = BenchOptions(episodes=1, backend="ray", workers=1, out=str(out), results=str(out / "dead.jsonl"))
    report["dead"] = map_episodes(always_dies, dead, "dead", failed=lambda seed, error: {"error": error})
    ray.shutdown()
    cluster.shutdown()
    (out / "report.json").write_text(json.dumps(report))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
