"""Test-wide network hygiene: DDS stays on loopback, one ROS domain per xdist worker.

Set before anything imports rclpy; subprocesses started by tests inherit it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # shared test helpers (box_room, ...)

DOMAIN_BASE = 40  # workers use 40, 41, ...; ROS_DOMAIN_ID must stay <= 101


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return int(worker[2:]) if worker.startswith("gw") else 0


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(DOMAIN_BASE + _worker_index())

from sg_search.ros_env import ensure_ros_env, use_localhost_profile  # noqa: E402

ensure_ros_env()
use_localhost_profile()

from hypothesis import settings  # noqa: E402

# Property tests draw the same examples on every run (a red CI is reproducible) and are not
# timed (a loaded machine is slow, not wrong); nothing is stored in the working tree.
settings.register_profile("sg_search", derandomize=True, deadline=None, database=None)
settings.load_profile("sg_search")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """'No tests collected' (exit 5) is not a failure of the suite."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK
