"""The core library (everything outside sg_search.ros) must import without ROS."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import sg_search

CORE_MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(sg_search.__path__, "sg_search.")
    if not m.name.startswith("sg_search.ros")
)


def test_core_modules_do_not_pull_in_rclpy() -> None:
    assert "sg_search.scene_graph.graph" in CORE_MODULES
    code = (
        "import importlib, sys\n"
        f"for name in {CORE_MODULES!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('rclpy', 'rosidl_runtime_py', 'sg_search_interfaces', 'tf2_msgs', 'geometry_msgs'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"core imported ROS modules: {result.stdout}"
