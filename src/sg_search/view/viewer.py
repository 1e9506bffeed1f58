"""Starting a Rerun viewer that listens on 127.0.0.1 only.

The SDK's own servers (``rr.serve_grpc``, ``rr.serve_web_viewer``) bind every interface and
have no bind argument, so the viewer is always the ``rerun`` executable started with
``--bind 127.0.0.1``. From another machine, tunnel the ports:
``ssh -L 9090:127.0.0.1:9090 -L 9876:127.0.0.1:9876 robot``.

The viewer collects usage analytics by default and sends them to rerun.io; here it runs with a
configuration directory of its own (``viewer_environment``) in which analytics are disabled,
so nothing leaves the machine and the user's own Rerun settings stay as they are.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

GRPC_PORT = 9876  # the viewer's gRPC server (SDKs log to it)
WEB_PORT = 9090  # the web viewer's HTTP server


class ViewerError(RuntimeError):
    """The viewer could not be started (named reason)."""


@dataclass(frozen=True)
class ViewerPorts:
    """Where a started viewer listens (127.0.0.1)."""

    grpc: int = GRPC_PORT
    web: int = WEB_PORT

    @property
    def sdk_url(self) -> str:
        """What an SDK (``rr.GrpcSink``) connects to."""
        return f"rerun+http://127.0.0.1:{self.grpc}/proxy"

    @property
    def web_url(self) -> str:
        """The page to open in a browser."""
        return f"http://127.0.0.1:{self.web}/?url={quote(self.sdk_url, safe='')}"


def rerun_executable() -> str:
    """The ``rerun`` CLI of this environment (installed with ``rerun-sdk``)."""
    beside = Path(sys.executable).parent / "rerun"
    found = str(beside) if beside.is_file() else shutil.which("rerun")
    if not found:
        raise ViewerError("the 'rerun' executable is missing: pip install rerun-sdk==0.41.0 (make setup)")
    return found


def viewer_environment() -> dict[str, str]:
    """This process's environment with ``XDG_CONFIG_HOME`` pointing at a Rerun configuration
    in which analytics are off (made once under ``$SG_SEARCH_CACHE`` or ~/.cache/sg_search)."""
    cache = Path(os.environ.get("SG_SEARCH_CACHE", Path.home() / ".cache" / "sg_search"))
    config_home = cache / "rerun-config"
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    if not (config_home / "rerun" / "analytics.json").is_file():
        config_home.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [rerun_executable(), "analytics", "disable"], env=env, check=True, capture_output=True, timeout=30
        )
    return env


def has_display() -> bool:
    """True where a native window can open."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def viewer_command(recording: Path | None, web: bool, ports: ViewerPorts) -> list[str]:
    """The ``rerun`` command line: the native viewer, or (``web``) the web viewer's server,
    bound to 127.0.0.1, showing ``recording`` or waiting for an SDK to log to it."""
    command = [rerun_executable(), "--bind", "127.0.0.1", "--port", str(ports.grpc)]
    if web:
        command += ["--serve-web", "--web-viewer-port", str(ports.web)]
    if recording is not None:
        if not recording.is_file():
            raise ViewerError(f"no recording at {recording}")
        command.append(str(recording))
    return command


def start_viewer(
    recording: Path | None, web: bool, ports: ViewerPorts = ViewerPorts(), timeout_s: float = 20.0
) -> subprocess.Popen[bytes]:
    """Start the viewer and wait until its gRPC port accepts connections (and its web port
    with ``web``); ViewerError if it exits or does not listen within ``timeout_s``."""
    # Its own session: the ``rerun`` script starts the viewer binary as a child, and
    # stop_viewer must end both.
    process = subprocess.Popen(
        viewer_command(recording, web, ports), env=viewer_environment(), start_new_session=True
    )
    wanted = [ports.grpc, *([ports.web] if web else [])]
    deadline = time.monotonic() + timeout_s
    while not all(_listening(port) for port in wanted):
        if process.poll() is not None:
            raise ViewerError(
                f"the rerun viewer exited with code {process.returncode} (ports {wanted} in use?)"
            )
        if time.monotonic() > deadline:
            stop_viewer(process)
            raise ViewerError(f"the rerun viewer did not listen on 127.0.0.1:{wanted} within {timeout_s} s")
        time.sleep(0.1)
    return process


def open_viewer(
    recording: Path | None, web: bool, ports: ViewerPorts = ViewerPorts()
) -> subprocess.Popen[bytes]:
    """:func:`start_viewer`, web where asked or where no window can open; prints the page to
    open (and how to reach it from another machine) for a web viewer."""
    web = web or not has_display()
    process = start_viewer(recording, web, ports)
    if web:
        print(f"open {ports.web_url} (from another machine: ssh -L {ports.web}:127.0.0.1:{ports.web} "
              f"-L {ports.grpc}:127.0.0.1:{ports.grpc} <this host>)")  # fmt: skip
    return process


def stop_viewer(process: subprocess.Popen[bytes], timeout_s: float = 10.0) -> None:
    """End a viewer from :func:`start_viewer` and everything it started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=timeout_s)
            return
        except subprocess.TimeoutExpired:
            continue


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0
