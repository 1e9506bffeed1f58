"""Fixtures for tests over real DDS (loopback, a domain per xdist worker; see tests/conftest.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

rclpy = pytest.importorskip("rclpy", reason="pip-only ROS 2 not installed (run scripts/bootstrap.sh)")

from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from sg_search.ros.processes import NodeProcess, remove_dead_shm_segments  # noqa: E402

NODES = pytest.StashKey[list[NodeProcess]]()
LOG_TAIL = 4000  # characters of each node's output shown with a failed test


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test shows what each node it started printed: a node's side of a lost goal or
    a hung service is only in its own log."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for proc in item.stash.get(NODES, []):
            report.sections.append(
                (f"node {proc.name} (pid {proc.process.pid})", proc.output_so_far()[-LOG_TAIL:])
            )


@pytest.fixture(scope="session", autouse=True)
def _dead_segments_removed() -> Iterator[None]:
    """The nodes these tests SIGKILL (and any left by an earlier run) leave their Fast DDS
    segments in /dev/shm, about 4 MB of RAM each: removed before and after the session."""
    remove_dead_shm_segments()
    yield
    remove_dead_shm_segments()


@pytest.fixture
def ros_node() -> Iterator[Node]:
    """An rclpy node in its own context, spun in the background."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("test_client", context=context)
    executor = MultiThreadedExecutor(context=context)
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield node
    # an exception in a wait-set call ends the spin thread silently (rclpy 9's ActionClient
    # race did, sg_search/ros/action_client.py): every future of the node then hangs
    spinning = thread.is_alive()
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)
    thread.join(timeout=5)
    assert spinning, "the test node's executor thread died (see the thread exception above)"


@pytest.fixture
def start_node(request: pytest.FixtureRequest) -> Iterator[type[NodeProcess]]:
    started: list[NodeProcess] = []
    request.node.stash[NODES] = started

    def start(executable: str, *ros_args: str) -> NodeProcess:
        proc = NodeProcess(executable, *ros_args)
        started.append(proc)
        time.sleep(0.1)
        assert proc.process.poll() is None, proc.stop()
        return proc

    yield start  # type: ignore[misc]
    for proc in started:
        proc.stop()


# A reasoner whose search must stay observe-only looks for an executor under a name no node
# serves: a test node's or a SIGKILLed node's endpoints outlive it in the DDS graph for a while,
# and a later test on the same worker would otherwise find that executor.
OBSERVE_ONLY = ("-p", "executor_action:=no_executor")


def wait_for(predicate, timeout: float = 20.0, period: float = 0.05) -> bool:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return False
