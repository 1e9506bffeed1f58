"""Node processes that end badly: one that will not stop is killed with its stacks printed; a
SIGKILLed node leaves its Fast DDS shared-memory segment in /dev/shm (about 4 MB of RAM each,
for good), and ``remove_dead_shm_segments`` removes exactly those whose owner is gone."""

from __future__ import annotations

import fcntl
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from rclpy.node import Node

from sg_search.cli import main
from sg_search.ros import processes
from sg_search.ros.processes import SHM_DIR, remove_dead_shm_segments

pytestmark = pytest.mark.ros


def _owned_segments(pid: int) -> set[str]:
    """The segments whose lock file ``pid`` holds an flock on (/proc/locks), by name."""
    inodes = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if fields[1] == "FLOCK" and fields[4] == str(pid):
            inodes.add(int(fields[5].rsplit(":", 1)[1]))
    return {
        lock.name[: -len("_el")]
        for lock in SHM_DIR.glob("fastdds_*_el")
        if not lock.name.startswith("fastdds_port") and _inode(lock) in inodes
    }


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return -1


def test_a_killed_nodes_segment_is_removed_and_a_live_ones_kept(start_node: Any, ros_node: Node) -> None:
    doomed = start_node("frontier_planner")
    assert wait_for(lambda: _owned_segments(doomed.process.pid), 30.0), "the node made no segment"
    left = _owned_segments(doomed.process.pid)
    live = _owned_segments(os.getpid())  # this test's own node
    assert live, "the test's node holds no segment"
    doomed.process.kill()
    doomed.process.wait(30.0)
    assert all((SHM_DIR / name).exists() for name in left), "Fast DDS removed them itself"
    time.sleep(1.0)  # so that the segments are older than the min_age_s below
    removed = remove_dead_shm_segments(min_age_s=0.5)
    assert left <= set(removed), (left, removed)
    assert not any((SHM_DIR / name).exists() or (SHM_DIR / f"{name}_el").exists() for name in left)
    assert not live & set(removed), "a live node's segment was removed"
    assert all((SHM_DIR / name).exists() for name in live)


def test_only_old_unlocked_segment_pairs_go(tmp_path: Path) -> None:
    def pair(name: str, age_s: float) -> Path:
        for path in (tmp_path / name, tmp_path / f"{name}_el"):
            path.write_bytes(b"")
            os.utime(path, (time.time() - age_s, time.time() - age_s))
        return tmp_path / f"{name}_el"

    pair("fastdds_00000000000000aa", 100.0)  # dead owner: goes
    held = pair("fastdds_00000000000000bb", 100.0)
    pair("fastdds_00000000000000cc", 1.0)  # young: its owner may not hold the lock yet
    pair("fastdds_port7411", 100.0)  # a port: Fast DDS's
    (tmp_path / "other_el").write_bytes(b"")
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert remove_dead_shm_segments(tmp_path, min_age_s=30.0) == ["fastdds_00000000000000aa"]
    finally:
        os.close(fd)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "fastdds_00000000000000bb",
        "fastdds_00000000000000bb_el",
        "fastdds_00000000000000cc",
        "fastdds_00000000000000cc_el",
        "fastdds_port7411",
        "fastdds_port7411_el",
        "other_el",
    ]


HUNG_NODE = """
import faulthandler, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)  # as runner.spin_nodes does
signal.signal(signal.SIGINT, signal.SIG_IGN)
def waiting_for_ever():
    print("up", flush=True)
    while True:
        time.sleep(0.05)
waiting_for_ever()
"""


def test_a_node_that_will_not_stop_is_killed_with_its_stacks_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script stands in for a node that ignores SIGINT (a real node should never do so)."""
    script = tmp_path / "hung_node"
    script.write_text(f"#!{sys.executable}\n{HUNG_NODE}")
    script.chmod(0o755)
    monkeypatch.setattr(processes, "executable", lambda name: str(script))
    node = processes.NodeProcess("hung_node")
    assert wait_for(lambda: "up" in node.output_so_far(), 30.0), node.output_so_far()
    output = node.stop()
    assert node.process.returncode == -signal.SIGKILL
    assert "in waiting_for_ever" in output and output.endswith("[killed: no exit within 10 s of SIGINT]\n")


def test_shm_clean_names_what_it_removed(capsys: pytest.CaptureFixture[str]) -> None:
    name = f"fastdds_{os.getpid():016x}"  # a dead participant's pair, made up (no process owns it)
    for path in (SHM_DIR / name, SHM_DIR / f"{name}_el"):
        path.write_bytes(b"")
        os.utime(path, (time.time() - 100.0, time.time() - 100.0))
    assert main(["shm-clean"]) == 0
    assert f"\n  {name}" in capsys.readouterr().out
    assert not (SHM_DIR / name).exists() and not (SHM_DIR / f"{name}_el").exists()
