"""Network hygiene by default: every node executable keeps DDS on this host (discovery range
and the loopback-only transport profile) unless the user opts out for several machines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

PROBE = (
    "import os, sg_search.ros.runner\n"
    "print(os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', ''))\n"
    "print(os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE', ''))\n"
)


def _node_environment(**extra: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROS_AUTOMATIC", "FASTDDS", "SG_SEARCH"))}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout.splitlines()


def test_node_processes_stay_on_loopback_by_default() -> None:
    discovery, profile = _node_environment()
    assert discovery == "LOCALHOST"
    assert profile.endswith("fastdds_localhost.xml") and "127.0.0.1" in Path(profile).read_text()


def test_several_machines_is_an_explicit_choice() -> None:
    assert _node_environment(SG_SEARCH_MULTI_MACHINE="1") == ["", ""]
    assert _node_environment(ROS_AUTOMATIC_DISCOVERY_RANGE="SUBNET")[0] == "SUBNET"  # the user's wins
