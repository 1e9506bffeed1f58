"""Child side of :mod:`sg_search.scene_graph.sandbox`; run as ``python -I -m``. Not an API.

Two processes: this one (the *warden*, trusted) reads the request, builds ``G``, leaves the
network where the OS lets it, then forks the *runner*, which drops what it can (user,
limits, file descriptors, ``os`` functions, an audit hook) and runs the code with its stdout
and stderr on a pipe to the warden. The warden enforces the wall-clock limit, keeps at most
``output_bytes`` of the output and writes the one reply on the descriptor the parent passed,
which the runner does not have: the code cannot forge it.
"""

from __future__ import annotations

import builtins
import collections
import io
import itertools
import json
import math
import os
import re
import resource
import select
import signal
import statistics
import sys
import time
from typing import Any

import networkx as nx

BLOCKED_PREFIXES = (
    "open",
    "socket.",
    "subprocess.",
    "os.",
    "shutil.",
    "ctypes.",
    "import",
    "urllib.",
    "http.",
    "webbrowser.",
    "gc.",
    "sys._getframe",
    "sys._current_frames",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "code.__new__",
    "function.__new__",
    "marshal.",
    "pickle.",
    "resource.setrlimit",
    "signal.",
    "mmap.",
)
OS_ALLOWED = frozenset({"fspath", "strerror", "urandom", "getpid"})  # what pure-Python helpers call
NOBODY = 65534
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
STATUS_BYTES = 65_536


class SandboxViolation(PermissionError):
    """The code tried something the sandbox forbids."""


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event.startswith(BLOCKED_PREFIXES):
        detail = args[0] if args else ""
        raise SandboxViolation(f"sandbox refuses {event} {detail!r}")


def _graph(data: dict[str, Any]) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph()
    for node in data["nodes"]:
        graph.add_node(node["id"], **{k: v for k, v in node.items() if k != "id"})
    for edge in data["edges"]:
        attrs = {k: v for k, v in edge.items() if k not in ("source", "target")}
        graph.add_edge(edge["source"], edge["target"], key=edge["relation"], **attrs)
    return nx.freeze(graph)


def _leave_network() -> str:
    """A new, empty network namespace (only a down loopback) for the warden and the runner;
    the layer's name if it held, else why not."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    tries = ((CLONE_NEWNET,) if os.geteuid() == 0 else ()) + (CLONE_NEWUSER | CLONE_NEWNET,)
    failed = ""
    for flags in tries:
        if libc.unshare(flags) == 0:
            del sys.modules["ctypes"]
            return "network namespace"
        failed = os.strerror(ctypes.get_errno())
    return f"no network namespace ({failed})"


def _refuse(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise SandboxViolation(f"sandbox refuses os.{name}")

    return refused


def _strip_os() -> None:
    """Replace every ``os``/``posix`` function the code has no use for (stat, mkfifo, utime,
    write, _exit, kill, ...) with one that refuses: they raise no audit event, and ``os`` is
    reachable from any object."""
    posix = sys.modules["posix"]
    for module in (os, posix):
        for name, value in list(vars(module).items()):
            if callable(value) and not isinstance(value, type) and name not in OS_ALLOWED:
                setattr(module, name, _refuse(name))


def _drop_privileges(keep_fds: tuple[int, ...], limits: dict[str, Any]) -> list[str]:
    """In the runner: limits, no other descriptors, an unprivileged user; the layers held."""
    held = []
    memory = int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = math.ceil(float(limits["time_s"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    os.closerange(max(keep_fds) + 1, 4096)
    highest = max(keep_fds) + 1
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest, highest))  # no new descriptor of any kind
    held.append("resource limits")
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
        held.append("unprivileged user")
    elif os.geteuid() == NOBODY:
        held.append("unprivileged user (user namespace)")
    return held


def _run(
    code: str, graph: nx.MultiDiGraph, limits: dict[str, Any], status: io.FileIO, layers: list[str]
) -> None:
    """The runner: run ``code`` and write how it ended on ``status``; never returns."""
    exit_now = os._exit
    hidden = ("open", "input", "breakpoint", "exit", "quit", "help")
    namespace: dict[str, Any] = {
        "__builtins__": {k: v for k, v in vars(builtins).items() if k not in hidden},
        "G": graph,
        "nx": nx,
        "math": math,
        "json": json,
        "re": re,
        "collections": collections,
        "itertools": itertools,
        "statistics": statistics,
    }
    reply: dict[str, Any] = {
        "ok": False,
        "error": "",
        "layers": [*layers, "os functions removed", "audit hook"],
    }
    try:
        compiled = compile(code, "<retriever>", "exec")
        _strip_os()
        sys.addaudithook(_audit)
        exec(compiled, namespace)
        reply["ok"] = True
    except MemoryError:
        reply["error"] = f"memory limit of {limits['memory_mb']} MB exceeded"
    except BaseException as exc:  # the code's own errors go back to the LLM for self-debugging
        reply["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    try:
        sys.stdout.flush()
        status.write(json.dumps(reply).encode())
        status.flush()
    finally:
        exit_now(0)


def _collect(out_fd: int, deadline: float, keep: int) -> tuple[bytes, bool]:
    """The runner's output until it closes it or ``deadline`` (monotonic s): the first
    ``keep`` bytes, and whether the deadline passed."""
    kept = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return bytes(kept), True
        ready, _, _ = select.select([out_fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(out_fd, 65_536)
        if not chunk:
            return bytes(kept), False
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]


def main() -> None:
    request = json.loads(sys.stdin.read())
    limits = request["limits"]
    reply_fd = int(request["reply_fd"])
    graph = _graph(request["graph"])
    layers = [_leave_network()]
    out_r, out_w = os.pipe()
    status_r, status_w = os.pipe()
    runner = os.fork()
    if runner == 0:
        os.close(reply_fd)
        os.close(out_r)
        os.close(status_r)
        os.dup2(out_w, 1)
        os.dup2(out_w, 2)
        os.dup2(status_w, 3)
        layers += _drop_privileges((0, 1, 2, 3), limits)
        _run(request["code"], graph, limits, io.FileIO(3, "w"), layers)
    os.close(out_w)
    os.close(status_w)
    started = time.monotonic()
    stdout, timed_out = _collect(out_r, started + float(limits["time_s"]), int(limits["output_bytes"]))
    if timed_out:
        os.kill(runner, signal.SIGKILL)
    _, wait_status = os.waitpid(runner, 0)
    status = _read_status(status_r) if not timed_out else {}
    reply = {
        "ok": bool(status.get("ok")) and not timed_out,
        "stdout": stdout.decode("utf-8", "replace"),
        "error": str(status.get("error", "")),
        "timed_out": timed_out,
        "layers": status.get("layers", layers),
    }
    if timed_out:
        reply["error"] = f"time limit of {limits['time_s']} s exceeded"
    elif not status:
        how = (
            f"signal {os.WTERMSIG(wait_status)}"
            if os.WIFSIGNALED(wait_status)
            else f"exit {os.WEXITSTATUS(wait_status)}"
        )
        reply["error"] = f"the code ended its process ({how}) before it finished"
    with os.fdopen(reply_fd, "wb") as channel:  # buffered: written whole
        channel.write(json.dumps(reply).encode())


def _read_status(fd: int) -> dict[str, Any]:
    """The runner's status line, or {} when it wrote none (or not one that parses)."""
    data = bytearray()
    while len(data) < STATUS_BYTES and (chunk := os.read(fd, STATUS_BYTES)):
        data += chunk
    try:
        status = json.loads(bytes(data))
    except ValueError:
        return {}
    return status if isinstance(status, dict) else {}


if __name__ == "__main__":
    main()
