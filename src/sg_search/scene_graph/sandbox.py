"""Run LLM-written Python against a read-only copy of the scene graph (SG-RwR's retriever).

Threat model. The code comes from a language model that may be wrong, confused or
prompt-injected (object names are text from the world). It must not reach the network,
write or read files, start processes, load native code, change the live graph, run
forever or exhaust memory. What it gets: ``G``, a frozen networkx MultiDiGraph copy
(node attributes as in :func:`sg_search.scene_graph.serialization.node_to_dict`), the
modules ``nx``, ``math``, ``json``, ``re``, ``collections``, ``itertools``, ``statistics``,
and ``print``. What it returns: its stdout (bounded) and the error, if any.

How. A separate interpreter (``python -I``) receives the graph on stdin, then, before
the code runs: resource limits (address space, CPU seconds, file size 0 so nothing can be
written), a wall-clock alarm, and a PEP 578 audit hook that refuses opening files,
sockets, processes, imports of modules not pre-loaded, ctypes and file-system changes.
The parent also kills the child after a grace period.

Limits of this design: audit hooks are not a security boundary against an adversary who
can exploit CPython itself. For untrusted deployments run the reasoner in a container
with no network; this sandbox is the in-process layer that catches everything an LLM
plausibly writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.serialization import graph_to_dict

STARTUP_GRACE_S = 10.0  # the child interpreter needs ~0.5 s to start and build G


@dataclass(frozen=True)
class SandboxLimits:
    """Wall-clock seconds for the code, address-space megabytes, stdout bytes kept."""

    time_s: float = 5.0
    memory_mb: int = 1024
    output_bytes: int = 65_536


@dataclass(frozen=True)
class SandboxResult:
    """What the code printed and how it ended."""

    ok: bool
    stdout: str
    error: str = ""
    timed_out: bool = False


def run_graph_code(code: str, graph: SceneGraph, limits: SandboxLimits | None = None) -> SandboxResult:
    """Execute ``code`` in the sandbox with ``G`` bound to a read-only copy of ``graph``."""
    limits = limits or SandboxLimits()
    request = json.dumps({"code": code, "graph": graph_to_dict(graph), "limits": limits.__dict__})
    with tempfile.TemporaryDirectory(prefix="sg_search_sandbox_") as cwd:
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-m", "sg_search.scene_graph.sandbox_child"],
                input=request,
                capture_output=True,
                text=True,
                timeout=limits.time_s + STARTUP_GRACE_S,
                cwd=cwd,
                env={"PATH": "/usr/bin:/bin"},
            )
        except subprocess.TimeoutExpired:
            return SandboxResult(False, "", f"killed after {limits.time_s + STARTUP_GRACE_S:.0f} s", True)
    try:
        reply = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = (done.stderr or done.stdout)[-500:]
        return SandboxResult(False, "", f"sandbox process failed (exit {done.returncode}): {tail}")
    return SandboxResult(
        ok=bool(reply["ok"]),
        stdout=str(reply["stdout"])[: limits.output_bytes],
        error=str(reply["error"]),
        timed_out=bool(reply["timed_out"]),
    )
