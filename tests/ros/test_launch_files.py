"""Launch files reference only executables, parameter files and remapped names that exist.

The launch package is not installed in pip-only mode, so the files are parsed, not run.
"""

from __future__ import annotations

import ast
import re
from importlib import metadata
from pathlib import Path

import pytest

from sg_search.config import package_share

LAUNCH_DIR = package_share() / "launch"
ROS_SOURCES = Path(__import__("sg_search.ros", fromlist=["_"]).__file__).parent


def _node_calls(path: Path) -> list[dict[str, ast.expr]]:
    calls = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Node":
            calls.append({kw.arg: kw.value for kw in node.keywords if kw.arg})
    return calls


def _console_scripts() -> dict[str, str]:
    scripts = metadata.distribution("sg_search").entry_points.select(group="console_scripts")
    return {ep.name: ep.value for ep in scripts}


LAUNCH_FILES = sorted(LAUNCH_DIR.glob("*.launch.py"))


def test_launch_files_are_installed() -> None:
    assert {p.name for p in LAUNCH_FILES} >= {"sim.launch.py", "robot.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_references_exist(path: Path) -> None:
    scripts = _console_scripts()
    text = path.read_text()
    for joined in re.findall(r"os\.path\.join\(share, ([^)]*)\)", text):
        parts = [ast.literal_eval(p.strip()) for p in joined.split(",")]
        assert (package_share().joinpath(*parts)).exists(), f"{path.name}: missing share file {parts}"
    calls = _node_calls(path)
    assert calls, f"{path.name} starts no node"
    for call in calls:
        if ast.literal_eval(call["package"]) == "rviz2":  # the one foreign node: rviz with our config
            config = re.search(r"rviz_config = os\.path\.join\(share, ([^)]*)\)", text)
            assert config is not None, f"{path.name}: rviz2 without sg_search's config"
            continue
        assert ast.literal_eval(call["package"]) == "sg_search"
        executable = ast.literal_eval(call["executable"])
        assert executable in scripts, f"{path.name}: no console script {executable!r}"
        module = scripts[executable].split(":")[0].rsplit(".", 1)[0]
        assert module == "sg_search.ros"
        if "remappings" in call:
            sources = " ".join(p.read_text() for p in ROS_SOURCES.glob("*.py"))
            for pair in ast.literal_eval(call["remappings"]):
                assert f'"{pair[0]}"' in sources, f"{path.name}: remaps {pair[0]!r}, which no node uses"
