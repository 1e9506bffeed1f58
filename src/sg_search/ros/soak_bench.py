"""A bounded soak of the running stack: many searches in a row against the node set (one process
per node, the simulator's Rs_int house), and many observation frames into a scene-graph server.

Measured: each node's resident memory, threads and open file descriptors after every search
and every batch of frames (``/proc``), whether every search ended within its budget, and the
graph server's update latency per batch (a marker observation published, until it is in the
``scene_graph/updates`` stream). The run stops by itself: ``searches`` searches of at most
60 s each (``QUERIES``) and ``frames`` frames at ``FRAME_RATE_HZ``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from sg_search.ros.futures import wait_for_subscription, wait_future
from sg_search.ros.processes import NodeProcess, process_stats

SEARCH_SLACK_S = 15.0  # [s] a search "ends within its budget" when it ends by its timeout + this
FRAME_RATE_HZ = 100.0
FRAME_BATCH = 500  # frames between samples
INSTANCES_PER_FRAME = 5
INSTANCE_POOL = 300  # distinct objects re-observed over and over (a house does not grow)
SUBSCRIPTION_WAIT_S = 120.0  # [s] for the graph server to subscribe before the first frame
SIM = ("-p", "use_sim_time:=true")
STACK: dict[str, tuple[str, ...]] = {
    "sim_bridge": (
        *("-p", "scene:=Rs_int", "-p", "start_room:=bedroom_0", "-p", "target_query:=backpack"),
        *(
            "-p",
            "target_relation:=inroom",
            "-p",
            "target_holder:=bedroom_0",
            "-p",
            "width:=160",
            "-p",
            "height:=120",
        ),
    ),
    "perception": SIM,
    # The learned room knowledge loads before the first search, so that every sample holds
    # its threads (torch's pools); in the background it could finish searches later.
    "scene_graph_server": (*SIM, "-p", "knowledge_at_start:=true"),
    "frontier_planner": SIM,
    "affordance_executor": (*SIM, "-p", "server_wait_s:=5.0"),
    # Verification off: the soak is about what repeats (goals, actions, graph updates, images)
    # leaving resources behind, and a search that verifies takes ~1.5 min here.
    "reasoner": (*SIM, "-p", "executor_wait_s:=5.0", "-p", "verify:=false"),
}
# (query, time budget [s]): the bed is in the start room (found from the first frames); the
# unicorn is nowhere, so that search explores, drives and ends on its budget (TIMEOUT).
QUERIES = (("find the bed", 60.0), ("find the unicorn", 30.0))


@contextmanager
def _client_node(name: str) -> Iterator[Any]:
    """An rclpy node spun in the background (the default context, loopback DDS)."""
    from sg_search.ros_env import use_localhost_profile

    use_localhost_profile()
    import rclpy
    from rclpy.node import Node

    from sg_search.ros.commands import spinning

    rclpy.init()
    node = Node(name)
    try:
        with spinning([node]):
            yield node
    finally:
        node.destroy_node()
        rclpy.shutdown()


def _call(node: Any, srv: Any, name: str, request: Any, timeout_s: float) -> Any:
    client = node.create_client(srv, name)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if client.wait_for_service(timeout_sec=1.0):
            response = wait_future(client.call_async(request), 10.0)
            if response is not None:
                return response
    raise TimeoutError(f"{name}: no answer in {timeout_s} s")


def _sample(procs: dict[str, NodeProcess]) -> dict[str, dict[str, float]]:
    for name, proc in procs.items():
        if proc.process.poll() is not None:
            raise RuntimeError(f"{name} exited during the soak:\n{proc.output_so_far()[-2000:]}")
    return dict(zip(procs, process_stats([p.process.pid for p in procs.values()]), strict=True))


def soak_searches(
    searches: int, on_search: Callable[[int, dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """``searches`` searches in a row against the whole node set (the episode reset between
    them); per search: its outcome, wall time and each node's process statistics after it."""
    from std_srvs.srv import Trigger

    from sg_search.ros.search_client import SearchClient

    procs = {name: NodeProcess(name, *args) for name, args in STACK.items()}
    rows: list[dict[str, Any]] = []
    try:
        with _client_node("soak_client") as node:
            search = SearchClient(node)
            if not search.wait_until_ready(180.0):
                raise RuntimeError("the reasoner's search action never came up")
            for k in range(searches):
                _call(node, Trigger, "reset_episode", Trigger.Request(), 60.0)
                search.feedback.clear()
                query, budget = QUERIES[k % len(QUERIES)]
                start = time.monotonic()
                if not search.start(query, timeout_s=budget):
                    raise RuntimeError(f"search {k} was refused")
                ended = search.wait(budget + SEARCH_SLACK_S)
                wall = time.monotonic() - start
                result = search.result()
                row = {
                    "search": k,
                    "query": query,
                    "status": search.status().name if ended else "RUNNING",
                    "error_code": int(result.error_code) if result is not None else -1,
                    "found": bool(result is not None and result.object_id),
                    "wall_s": wall,
                    "within_budget": bool(ended),
                    "nodes": _sample(procs),
                }
                rows.append(row)
                if on_search is not None:
                    on_search(k, row)
                if not ended:
                    search.cancel()
                    search.wait(30.0)
    finally:
        for proc in procs.values():
            proc.stop()
    return rows


def soak_frames(frames: int) -> list[dict[str, Any]]:
    """``frames`` observation frames into one scene-graph server at ``FRAME_RATE_HZ``; per batch
    of ``FRAME_BATCH``: the server's process statistics and its update latency [ms]."""
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sg_search_interfaces.msg import ObjectObservationArray, SceneGraphUpdate
    from std_msgs.msg import Header

    from sg_search.ros.conversions import instances_to_msg
    from sg_search.scene_graph.observations import ObjectInstance

    server = NodeProcess("scene_graph_server", *SIM, "-p", "rooms_period_s:=0.0")
    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    try:
        with _client_node("soak_frames") as node:
            arrived = threading.Event()
            marker = [""]

            def on_update(msg: SceneGraphUpdate) -> None:
                if any(n.id == marker[0] for n in msg.nodes):
                    arrived.set()

            qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
            node.create_subscription(SceneGraphUpdate, "scene_graph/updates", on_update, qos)
            publisher = node.create_publisher(ObjectObservationArray, "observations", 10)
            if not wait_for_subscription(publisher, SUBSCRIPTION_WAIT_S, period_s=0.1):
                raise RuntimeError(
                    f"soak: the scene-graph server did not subscribe to 'observations' within "
                    f"{SUBSCRIPTION_WAIT_S:.0f} s; no frame was sent. Its output:\n"
                    f"{server.output_so_far()[-2000:]}"
                )

            def publish(index: int, instances: list[ObjectInstance]) -> None:
                header = Header(stamp=node.get_clock().now().to_msg(), frame_id="map")
                publisher.publish(instances_to_msg(instances, header, index))

            for index in range(frames):
                ids = rng.choice(INSTANCE_POOL, INSTANCES_PER_FRAME, replace=False)
                publish(index, [_instance(int(i), rng) for i in ids])
                time.sleep(1.0 / FRAME_RATE_HZ)
                if (index + 1) % FRAME_BATCH == 0:
                    marker[0] = f"marker_{index}"
                    arrived.clear()
                    sent = time.monotonic()
                    publish(index, [ObjectInstance(marker[0], "marker", 0.9, (50.0, 50.0, 0.5))])
                    latency = 1e3 * (time.monotonic() - sent) if arrived.wait(10.0) else float("nan")
                    rows.append(
                        {"frames": index + 1, "latency_ms": latency, **process_stats([server.process.pid])[0]}
                    )
    finally:
        server.stop()
    return rows


def _instance(i: int, rng: np.random.Generator) -> Any:
    from sg_search.scene_graph.observations import ObjectInstance

    centre = (float(i % 20) * 0.8 + rng.normal(0, 0.02), float(i // 20) * 0.8, 0.5)
    return ObjectInstance(f"obj_{i}", ("mug", "book", "bowl", "towel")[i % 4], 0.9, centre)


def run(options: Any) -> Any:
    """``options.episodes`` searches (50 for the full soak) and 200 frames per search."""
    from sg_search.bench.harness import BenchReport

    if options.split != "all":
        raise ValueError(f"soak has no splits; use --split all (got {options.split!r})")
    searches = soak_searches(
        options.episodes,
        lambda k, row: print(f"[soak] search {k}: {row['status']} {row['wall_s']:.1f} s", flush=True),
    )
    batches = soak_frames(200 * options.episodes)
    summary: dict[str, float] = {
        "searches": float(len(searches)),
        "searches_within_budget": float(sum(r["within_budget"] for r in searches)),
        "searches_found": float(sum(r["found"] for r in searches)),
        "search_wall_s_median": float(np.median([r["wall_s"] for r in searches])),
        "search_wall_s_max": float(np.max([r["wall_s"] for r in searches])),
    }
    half = len(searches) // 2
    for name in STACK:
        series = {k: [r["nodes"][name][k] for r in searches] for k in ("rss_mb", "threads", "fds")}
        for key, values in series.items():
            summary[f"{name}/{key}/first"] = values[0]
            summary[f"{name}/{key}/last"] = values[-1]
            summary[f"{name}/{key}/max"] = max(values)
            summary[f"{name}/{key}/growth_second_half"] = values[-1] - values[half]
    summary["frames"] = float(batches[-1]["frames"]) if batches else 0.0
    for key in ("latency_ms", "rss_mb", "threads", "fds"):
        summary[f"graph_frames/{key}/first_batch"] = float(batches[0][key])
        summary[f"graph_frames/{key}/last_batch"] = float(batches[-1][key])
        summary[f"graph_frames/{key}/max"] = float(np.nanmax([b[key] for b in batches]))
    report = BenchReport("soak", options, summary, [*searches, *batches])
    return report
