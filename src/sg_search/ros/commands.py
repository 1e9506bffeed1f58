"""The ROS-side implementations of ``sg-search demo | search | graph``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sg_search.ros_env import ensure_ros_env

ensure_ros_env()

import rclpy  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from sg_search.ros.demo import DemoOptions  # noqa: E402
from sg_search.ros.futures import call_with_resend  # noqa: E402
from sg_search.ros.runner import EXECUTOR_THREADS, shut_down  # noqa: E402
from sg_search.ros.search_client import SearchClient, TaskResult  # noqa: E402

PHASE_WIDTH = 8


@contextmanager
def spinning(nodes: list[Node], threads: int = EXECUTOR_THREADS) -> Iterator[MultiThreadedExecutor]:
    """Spin ``nodes`` on a background MultiThreadedExecutor for the duration of the block; at
    its end the spin loop stops before the executor is shut down (:func:`shut_down`)."""
    executor = MultiThreadedExecutor(num_threads=threads, context=nodes[0].context if nodes else None)
    for node in nodes:
        executor.add_node(node)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set() and executor.context.ok():
            executor.spin_once(timeout_sec=0.1)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield executor
    finally:
        stop.set()
        executor.wake()
        thread.join(timeout=5.0)
        shut_down(executor)


def demo(options: DemoOptions) -> int:
    """``sg-search demo`` (see sg_search.ros.demo)."""
    from sg_search.ros.demo import run_demo

    return run_demo(options)


def search(query: str, reasoner: str, max_steps: int, timeout_s: float, namespace: str) -> int:
    """Send one goal to a running stack, print feedback and the result; exit code 0 on success."""
    rclpy.init(args=["sg-search"])
    node = Node("sg_search_cli", namespace=namespace or "")
    try:
        with spinning([node]):
            return run_search_goal(node, query, reasoner, max_steps, timeout_s)[0]
    finally:
        node.destroy_node()
        if rclpy.ok():  # a SIGTERM has shut it down already
            rclpy.shutdown()


def run_search_goal(
    node: Node, query: str, reasoner: str, max_steps: int, timeout_s: float
) -> tuple[int, SearchClient]:
    """Send one search goal from ``node``, print feedback and the result; (exit code, client)."""
    client = SearchClient(node)
    return _follow_search(client, query, reasoner, max_steps, timeout_s), client


def _follow_search(client: SearchClient, query: str, reasoner: str, max_steps: int, timeout_s: float) -> int:
    if not client.wait_until_ready(15.0):
        print("[search] no 'search' action server found: is the stack running (same ROS_DOMAIN_ID)?")
        return 3
    print(f"[search] {query!r}")
    printer: Callable[..., None] = lambda fb: print(  # noqa: E731
        f"  step {fb.step:3d}  {fb.phase:<{PHASE_WIDTH}} {fb.target_node_id or '-':<18} "
        f"u={fb.utility:.2f}  {fb.explanation}"
    )
    started = client.start(
        query, max_steps=max_steps, reasoner=reasoner, timeout_s=timeout_s, on_feedback=printer
    )
    if not started and not client.shut_down:
        print("[search] goal rejected (another search is running)")
        return 4
    deadline = time.monotonic() + (timeout_s or 600.0) + 30.0
    while not client.wait(0.2):
        if client.shut_down:  # also when it came while the goal was being sent (start() is False)
            print("[search] ROS was shut down (a signal): the search is left unfinished")
            return 130
        if client.server_lost:
            print("[search] the reasoner node died during the search: no result will come")
            return 6
        if time.monotonic() > deadline:
            client.cancel()
            print("[search] no result in time; canceled")
            return 5
    result = client.result()
    assert result is not None
    if client.status() == TaskResult.SUCCEEDED:
        p = result.pose.pose.position
        print(
            f"[search] FOUND {result.category} ({result.object_id}) in {result.room_id or 'no room yet'} at "
            f"({p.x:.2f}, {p.y:.2f}, {p.z:.2f}) m [map], {result.steps} steps, {result.path_length:.1f} m"
        )
        print(f"[search] {result.explanation}")
        return 0
    print(f"[search] {client.status().name}: error {result.error_code}: {result.error_msg}")
    return 1


def graph(action: str, text: str, kind: str, namespace: str) -> int:
    """``graph show`` (counts per kind) or ``graph query TEXT`` against a running server."""
    from sg_search_interfaces.srv import GetSceneGraph, QuerySceneGraph

    rclpy.init(args=["sg-search"])
    node = Node("sg_search_graph_cli", namespace=namespace or "")
    try:
        with spinning([node]):
            if action == "show":
                client = node.create_client(GetSceneGraph, "scene_graph/get")
                request = GetSceneGraph.Request(since_sequence=0)
            else:
                client = node.create_client(QuerySceneGraph, "scene_graph/query")
                request = QuerySceneGraph.Request(text=text, kind=kind)
            if not client.wait_for_service(timeout_sec=10.0):
                print("[graph] no scene_graph server found")
                return 3
            response = call_with_resend(client, request, 10.0)
            if response is None:
                print("[graph] no answer")
                return 3
            if action == "show":
                counts: dict[str, int] = {}
                for n in response.update.nodes:
                    counts[n.kind] = counts.get(n.kind, 0) + 1
                print(
                    f"sequence {response.update.sequence}: {len(response.update.nodes)} nodes, "
                    f"{len(response.update.edges)} edges"
                )
                for k, c in sorted(counts.items()):
                    print(f"  {k:10s} {c}")
                return 0
            if not response.success:
                print(f"[graph] {response.message}")
                return 2
            for n in response.nodes:
                print(
                    f"{n.id:20s} {n.kind:10s} {n.category:16s} room={n.room_id or '-':14s} "
                    f"conf={n.confidence:.2f} at ({n.position.x:.2f}, {n.position.y:.2f}, {n.position.z:.2f})"
                )
            return 0
    finally:
        node.destroy_node()
        if rclpy.ok():  # a SIGTERM has shut it down already
            rclpy.shutdown()
