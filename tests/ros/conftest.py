"""Fixtures for tests over real DDS (loopback, a domain per xdist worker; see tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy", reason="pip-only ROS 2 not installed (run scripts/bootstrap.sh)")

from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402

from sg_search.config import default_params_file, package_share  # noqa: E402


def executable(name: str) -> str:
    """A node executable: ``<prefix>/lib/sg_search`` (colcon) or the venv's ``bin`` (pip)."""
    for directory in (package_share().parents[1] / "lib" / "sg_search", Path(sys.prefix) / "bin"):
        if (directory / name).is_file():
            return str(directory / name)
    raise FileNotFoundError(f"node executable {name!r} is not installed")


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
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)
    thread.join(timeout=5)


class NodeProcess:
    """A node executable in its own process; stopped with SIGINT, killed if it hangs."""

    def __init__(self, name: str, *ros_args: str) -> None:
        command = [
            executable(name),
            "--ros-args",
            "--params-file",
            str(default_params_file()),
            *ros_args,
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ)
        )
        self._lines: list[str] = []  # read as it comes: a full pipe would block the node
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.append(line)

    def output_so_far(self) -> str:
        """What the node has printed (stdout and stderr) until now."""
        return "".join(self._lines)

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self._reader.join(timeout=5)
        return self.output_so_far()


@pytest.fixture
def start_node() -> Iterator[type[NodeProcess]]:
    started: list[NodeProcess] = []

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
