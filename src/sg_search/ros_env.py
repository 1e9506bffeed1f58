"""Process environment for ROS 2, set before rclpy is imported. Imports no ROS.

Network hygiene is the default: DDS discovery stays on this host unless the
user explicitly chose a range (``ROS_AUTOMATIC_DISCOVERY_RANGE``); the default
range would join multicast on the outside interface.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

MULTI_MACHINE = "SG_SEARCH_MULTI_MACHINE"  # "1": the user opts out of the loopback-only defaults


def multi_machine(environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether the user opted out of the loopback-only defaults (``SG_SEARCH_MULTI_MACHINE=1``)."""
    return environ.get(MULTI_MACHINE, "") == "1"


def ensure_ros_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Fill in what a pip-only ROS 2 needs; never override what the user set.

    - ``ROS_AUTOMATIC_DISCOVERY_RANGE`` defaults to ``LOCALHOST`` (not with
      ``SG_SEARCH_MULTI_MACHINE=1``).
    - ``AMENT_PREFIX_PATH`` gains ``sys.prefix`` when the interfaces were built into this
      venv (pip-only mode); under a sourced distro it already lists the install space.

    Returns the mapping it changed (``os.environ`` by default).
    """
    env = os.environ if environ is None else environ
    if not multi_machine(env):
        env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    prefix = sys.prefix
    index = Path(prefix) / "share" / "ament_index" / "resource_index" / "packages"
    if (index / "sg_search_interfaces").exists():
        paths = [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
        if prefix not in paths:
            env["AMENT_PREFIX_PATH"] = os.pathsep.join([*paths, prefix])
    return env  # type: ignore[return-value]


def use_localhost_profile(environ: dict[str, str] | None = None) -> None:
    """Use the shipped Fast DDS profile (loopback UDP + large shared memory) unless one is set
    or the user opted out with ``SG_SEARCH_MULTI_MACHINE=1`` (nodes on several machines: then
    set ``ROS_AUTOMATIC_DISCOVERY_RANGE``/``ROS_STATIC_PEERS`` and, on a shared network,
    SROS2 enclaves).

    Every node executable, the demo and the tests load it: nothing leaves this host by default.
    """
    from sg_search.config import package_share

    env = os.environ if environ is None else environ
    if multi_machine(env):
        return
    profile = package_share() / "config" / "fastdds_localhost.xml"
    env.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(profile))
