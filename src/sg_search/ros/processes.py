"""Node executables in their own processes (what the tests and the soak benchmark start), and
what the operating system says about a process (memory, threads, file descriptors)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
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
        when it had to be killed (what it writes on shutdown, a recording's end, is then lost)."""
        killed = False
        if self.process.poll() is None:
            self.process.send_signal(2)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                killed = True
        self._reader.join(timeout=5)
        return self.output_so_far() + ("[killed: no exit within 10 s of SIGINT]\n" if killed else "")


def process_stats(pid: int) -> dict[str, float]:
    """Resident memory [MB], threads and open file descriptors of a running process (Linux /proc).
    Open directories are not counted: they are scans in progress (an import walking a package's
    directory), not resources the process keeps."""
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return {
        "rss_mb": int(status["VmRSS"].split()[0]) / 1024.0,
        "threads": float(int(status["Threads"])),
        "fds": float(sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if not _is_directory(pid, fd))),
    }


def _is_directory(pid: int, fd: str) -> bool:
    """True if descriptor ``fd`` of ``pid`` is an open directory (False if it has closed since)."""
    try:
        return stat.S_ISDIR(os.stat(f"/proc/{pid}/fd/{fd}").st_mode)
    except OSError:
        return False
