"""Run LLM-written Python against a read-only copy of the scene graph (SG-RwR's retriever).

Threat model. The code comes from a language model that may be wrong, confused or
prompt-injected (object names are text from the world). It must not reach the network,
read or change files, start processes, load native code, change the live graph, forge the
sandbox's reply, run forever or exhaust memory or the caller. What it gets: ``G``, a frozen
networkx MultiDiGraph copy (node attributes as in
:func:`sg_search.scene_graph.serialization.node_to_dict`), the modules ``nx``, ``math``,
``json``, ``re``, ``collections``, ``itertools``, ``statistics``, and ``print``. What it
returns: its output (stdout and stderr, at most ``output_bytes``) and the error, if any.

Layers (:mod:`sg_search.scene_graph.sandbox_child`), each reported in
:attr:`SandboxResult.layers` when it held:

1. a separate interpreter (``python -I``, empty environment, a fresh temporary directory);
2. a network namespace of its own (``unshare``; as root, or through a user namespace);
3. the code runs in a forked *runner* as user ``nobody`` (when started as root), with
   address-space, CPU-time and file-size (0) limits and no free file descriptor;
4. every ``os`` function it has no use for (``stat``, ``mkfifo``, ``utime``, ``write``,
   ``_exit``, ``kill``, ...) replaced by one that refuses;
5. a PEP 578 audit hook refusing files, sockets, processes, new imports, ctypes, frame and
   garbage-collector introspection;
6. the *warden* process enforces the wall-clock limit, keeps at most ``output_bytes`` and
   writes the one reply on a pipe the runner does not have.

Audit hooks and stripped modules are not a boundary against an adversary who can exploit
CPython itself; the OS layers (2, 3) are. For untrusted deployments also run the node in a
container without network.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.serialization import graph_to_dict

STARTUP_GRACE_S = 10.0  # the child interpreter needs ~0.5 s to start and build G
MAX_TIME_S = 60.0  # the longest time limit a request may ask for [s]
MAX_OUTPUT_BYTES = 1 << 20
JSON_EXPANSION = 6  # JSON writes a control character (or a replaced byte) as six: \u0001


@dataclass(frozen=True)
class SandboxLimits:
    """Wall-clock seconds for the code (at most ``MAX_TIME_S``), address-space megabytes,
    output bytes kept (at most ``MAX_OUTPUT_BYTES``)."""

    time_s: float = 5.0
    memory_mb: int = 1024
    output_bytes: int = 65_536

    def __post_init__(self) -> None:
        if not (math.isfinite(self.time_s) and 0 < self.time_s <= MAX_TIME_S):
            raise ValueError(f"time_s must lie in (0, {MAX_TIME_S:.0f}] s, got {self.time_s}")
        if self.memory_mb < 64:
            raise ValueError(f"memory_mb must be at least 64, got {self.memory_mb}")
        if not (0 < self.output_bytes <= MAX_OUTPUT_BYTES):
            raise ValueError(f"output_bytes must lie in (0, {MAX_OUTPUT_BYTES}], got {self.output_bytes}")


@dataclass(frozen=True)
class SandboxResult:
    """What the code printed and how it ended; ``layers``: the isolation layers that held."""

    ok: bool
    stdout: str
    error: str = ""
    timed_out: bool = False
    layers: tuple[str, ...] = field(default=())


def run_graph_code(code: str, graph: SceneGraph, limits: SandboxLimits | None = None) -> SandboxResult:
    """Execute ``code`` in the sandbox with ``G`` bound to a read-only copy of ``graph``."""
    limits = limits or SandboxLimits()
    reply_r, reply_w = os.pipe()
    request = {"code": code, "graph": graph_to_dict(graph), "limits": limits.__dict__, "reply_fd": reply_w}
    chunks: list[bytes] = []
    most = limits.output_bytes * JSON_EXPANSION + 65_536  # the reply's JSON, the output escaped
    reader = threading.Thread(target=_read_reply, args=(reply_r, most, chunks))
    with tempfile.TemporaryDirectory(prefix="sg_search_sandbox_") as cwd:
        try:
            child = subprocess.Popen(
                [sys.executable, "-I", "-m", "sg_search.scene_graph.sandbox_child"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(reply_w,),
                cwd=cwd,
                env={"PATH": "/usr/bin:/bin"},
            )
        finally:
            os.close(reply_w)
        reader.start()
        try:
            _, stderr = child.communicate(
                json.dumps(request).encode(), timeout=limits.time_s + STARTUP_GRACE_S
            )
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            reader.join()
            return SandboxResult(False, "", f"killed after {limits.time_s + STARTUP_GRACE_S:.0f} s", True)
        reader.join()
    try:
        reply = json.loads(b"".join(chunks))
    except ValueError:
        tail = stderr.decode("utf-8", "replace")[-500:]
        return SandboxResult(False, "", f"sandbox process failed (exit {child.returncode}): {tail}")
    return SandboxResult(
        ok=bool(reply["ok"]),
        stdout=str(reply["stdout"])[: limits.output_bytes],
        error=str(reply["error"]),
        timed_out=bool(reply["timed_out"]),
        layers=tuple(str(layer) for layer in reply.get("layers", ())),
    )


def _read_reply(fd: int, limit: int, chunks: list[bytes]) -> None:
    """Read the warden's reply (at most ``limit`` bytes) until it closes the pipe."""
    with os.fdopen(fd, "rb") as channel:
        size = 0
        while chunk := channel.read1(65_536):
            if size < limit:
                chunks.append(chunk[: limit - size])
            size += len(chunk)
