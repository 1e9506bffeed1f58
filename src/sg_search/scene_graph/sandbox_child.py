"""Child side of :mod:`sg_search.scene_graph.sandbox`; run as ``python -I -m``. Not an API."""

from __future__ import annotations

import builtins
import collections
import contextlib
import io
import itertools
import json
import math
import re
import resource
import signal
import statistics
import sys
from typing import Any

import networkx as nx

BLOCKED_PREFIXES = (
    "open",
    "socket.",
    "subprocess.",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "os.kill",
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.mkdir",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.truncate",
    "os.listdir",
    "os.scandir",
    "shutil.",
    "ctypes.",
    "import",
    "urllib.",
    "http.",
    "webbrowser.",
)


class SandboxViolation(PermissionError):
    """The code tried something the sandbox forbids."""


class WallClockExpired(Exception):
    """The code ran past its time limit."""


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


def _on_alarm(signum: int, frame: object) -> None:
    raise WallClockExpired()


def main() -> None:
    request = json.loads(sys.stdin.read())
    limits = request["limits"]
    graph = _graph(request["graph"])
    memory = int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = math.ceil(float(limits["time_s"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    hidden = ("open", "input", "breakpoint", "exit", "quit", "help")
    safe_builtins = {k: v for k, v in vars(builtins).items() if k not in hidden}
    namespace: dict[str, Any] = {
        "__builtins__": safe_builtins,
        "G": graph,
        "nx": nx,
        "math": math,
        "json": json,
        "re": re,
        "collections": collections,
        "itertools": itertools,
        "statistics": statistics,
    }
    code = compile(request["code"], "<retriever>", "exec")
    out = io.StringIO()
    reply = {"ok": False, "stdout": "", "error": "", "timed_out": False}
    real_stdout = sys.stdout
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.addaudithook(_audit)
    signal.setitimer(signal.ITIMER_REAL, float(limits["time_s"]))
    try:
        with contextlib.redirect_stdout(out):
            exec(code, namespace)
        reply["ok"] = True
    except WallClockExpired:
        reply["timed_out"] = True
        reply["error"] = f"time limit of {limits['time_s']} s exceeded"
    except MemoryError:
        reply["error"] = f"memory limit of {limits['memory_mb']} MB exceeded"
    except BaseException as exc:  # the code's own errors go back to the LLM for self-debugging
        reply["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
    reply["stdout"] = out.getvalue()[: int(limits["output_bytes"])]
    real_stdout.write("\n" + json.dumps(reply) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main()
