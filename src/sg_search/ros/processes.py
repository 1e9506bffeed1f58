"""Node executables in their own processes (what the tests and the soak benchmark start), what
the operating system says about a process (memory, threads, file descriptors), and the shared
memory a killed node leaves behind."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from sg_search.config import default_params_file, package_share


def executable(name: str) -> str:
    """A node executable: ``<prefix>/lib/sg_search`` (colcon) or the venv's ``bin`` (pip)."""
    for directory in (package_share().parents[1] / "lib" / "sg_search", Path(sys.prefix) / "bin"):
        if (directory / name).is_file():
            return str(directory / name)
    raise FileNotFoundError(f"node executable {name!r} is not installed")


class NodeProcess:
    """A node executable in its own process with the shipped parameters and ``ros_args``;
    stopped with SIGINT, killed if it hangs. Its output is read as it comes (a full pipe would
    block the node)."""

    def __init__(self, name: str, *ros_args: str) -> None:
        command = [executable(name), "--ros-args", "--params-file", str(default_params_file()), *ros_args]
        self.name = name
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ)
        )
        self._lines: list[str] = []
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
        """SIGINT, then SIGKILL after 10 s; returns everything the node printed, and says so
        when it had to be killed (what it writes on shutdown, a recording's end, is then lost).
        Before the SIGKILL a SIGUSR1 asks for every thread's stack (``runner.spin_nodes``
        registers it), so the output says where a node that would not stop was."""
        killed = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.send_signal(signal.SIGUSR1)
                time.sleep(STACKS_WAIT_S)
                self.process.kill()
                self.process.wait(timeout=REAP_S)
                killed = True
        self._reader.join(timeout=5)
        return self.output_so_far() + ("[killed: no exit within 10 s of SIGINT]\n" if killed else "")


STACKS_WAIT_S = 1.0  # [s] for a hung node to print its stacks before it is killed
# [s] for the kernel to tear a SIGKILLed node down: the simulator's (a GL context, ~1 GB mapped,
# a dozen threads) took over 2 s on 2 busy cores. A bound, not a sleep.
REAP_S = 30.0
HELD_FOR_S = 0.25  # [s] a descriptor is held when it is open in two readings this far apart


def process_stats(pids: Sequence[int]) -> list[dict[str, float]]:
    """Resident memory [MB], threads and held file descriptors of running processes (Linux
    /proc), one dict per pid. A descriptor is held when it is open, with the same target, in two
    readings ``HELD_FOR_S`` apart (one wait for all the processes). What a process only passes
    through is left out: a file an import or a model load reads (the graph server's knowledge
    model reads over 2,000 files in 13 s, each open for milliseconds) and an open directory (an
    import walking a package). A leaked descriptor stays, and is counted."""
    first = [_open_files(pid) for pid in pids]
    time.sleep(HELD_FOR_S)
    return [
        {**_memory_and_threads(pid), "fds": float(len(held_in_both(before, _open_files(pid))))}
        for pid, before in zip(pids, first, strict=True)
    ]


def _memory_and_threads(pid: int) -> dict[str, float]:
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return {"rss_mb": int(status["VmRSS"].split()[0]) / 1024.0, "threads": float(int(status["Threads"]))}


def held_in_both(first: dict[str, str], second: dict[str, str]) -> dict[str, str]:
    """The descriptors of ``second`` open with the same target in ``first`` (a number reused
    for another file in between is a new descriptor, not a held one)."""
    return {fd: target for fd, target in second.items() if first.get(fd) == target}


def _open_files(pid: int) -> dict[str, str]:
    """Descriptor number -> target of ``pid``'s open descriptors that are not directories (one
    closed while being read is left out)."""
    out = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not stat.S_ISDIR(os.stat(path).st_mode):
                out[fd] = os.readlink(path)
        except OSError:
            continue
    return out


SHM_DIR = Path("/dev/shm")
_SEGMENT = re.compile(r"fastdds_[0-9a-f]{16}")  # a participant's segment; ports are fastdds_port<N>
SEGMENT_MIN_AGE_S = 30.0


def remove_dead_shm_segments(directory: Path = SHM_DIR, min_age_s: float = SEGMENT_MIN_AGE_S) -> list[str]:
    """Remove the Fast DDS shared-memory segments of participants that are gone; the names removed.

    Each participant writes into a segment ``fastdds_<16 hex>`` (about 4 MB of RAM in tmpfs
    with the shipped profile) and holds an exclusive ``flock`` on ``<segment>_el`` while it
    lives. It removes both on a clean exit; a SIGKILLed node leaves them for good. A pair whose
    lock anybody may take has no owner, and goes. A lock file younger than ``min_age_s`` [s] is
    left: a participant being created makes it before it takes the lock. Ports
    (``fastdds_port<N>``) are left to Fast DDS, which checks and reuses them.
    """
    removed = []
    now = time.time()
    for lock_file in sorted(directory.glob("fastdds_*_el")):
        segment = lock_file.with_name(lock_file.name[: -len("_el")])
        if not _SEGMENT.fullmatch(segment.name):
            continue
        try:
            if now - lock_file.stat().st_mtime < min_age_s or not _lock_is_free(lock_file):
                continue
            segment.unlink(missing_ok=True)
            lock_file.unlink()
        except OSError:  # removed meanwhile, or another user's
            continue
        removed.append(segment.name)
    return removed


def _lock_is_free(path: Path) -> bool:
    """Whether an exclusive flock on ``path`` can be taken now (it is released at once)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # closing releases a lock taken
    return True
