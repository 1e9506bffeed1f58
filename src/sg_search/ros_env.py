"""Process environment for ROS 2, set before rclpy is imported. Imports no ROS.

Network hygiene is the default: DDS discovery stays on this host unless the
user explicitly chose a range (``ROS_AUTOMATIC_DISCOVERY_RANGE``); the default
range would join multicast on the outside interface.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def ensure_ros_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Fill in what a pip-only ROS 2 needs; never override what the user set.

    - ``ROS_AUTOMATIC_DISCOVERY_RANGE`` defaults to ``LOCALHOST``.
    - ``AMENT_PREFIX_PATH`` gains ``sys.prefix`` when the interfaces were built into this
      venv (pip-only mode); under a sourced distro it already lists the install space.

    Returns the mapping it changed (``os.environ`` by default).
    """
    env = os.environ if environ is None else environ
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    prefix = sys.prefix
    index = Path(prefix) / "share" / "ament_index" / "resource_index" / "packages"
    if (index / "sg_search_interfaces").exists():
        paths = [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
        if prefix not in paths:
            env["AMENT_PREFIX_PATH"] = os.pathsep.join([*paths, prefix])
    return env  # type: ignore[return-value]


def use_localhost_profile(environ: dict[str, str] | None = None) -> None:
    """Use the shipped Fast DDS profile (loopback UDP + large shared memory) unless one is set.

    For tests and the single-machine demo; a multi-machine deployment must not use it.
    """
    from sg_search.config import package_share

    env = os.environ if environ is None else environ
    profile = package_share() / "config" / "fastdds_localhost.xml"
    env.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(profile))
