"""``sg-search search`` over DDS ends on SIGTERM: rclpy's handler shuts ROS down in the process
and raises nothing, so a follower that only waited for the result sat out its whole budget
(``sg-search demo`` did so for ten minutes)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rclpy.action import ActionServer, CancelResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import SearchObject

pytestmark = pytest.mark.ros

SG_SEARCH = str(Path(sys.prefix) / "bin" / "sg-search")


def test_a_search_followed_from_the_cli_ends_on_sigterm(ros_node: Node) -> None:
    accepted, finished = threading.Event(), threading.Event()

    def execute(handle: ServerGoalHandle) -> SearchObject.Result:
        """Test double of the reasoner's search: it runs until the test ends."""
        accepted.set()
        while not finished.is_set():
            time.sleep(0.05)
        handle.abort()
        return SearchObject.Result()

    ActionServer(
        ros_node, SearchObject, "search", execute_callback=execute,
        cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=ReentrantCallbackGroup(),
    )  # fmt: skip
    cli = subprocess.Popen(
        [SG_SEARCH, "search", "mug", "--timeout", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert accepted.wait(60.0), "the CLI never sent its goal"
        cli.send_signal(signal.SIGTERM)
        output, _ = cli.communicate(timeout=20.0)
    finally:
        finished.set()
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 130, output
    assert "ROS was shut down" in output, output
