"""The retriever sandbox runs graph queries and refuses everything else."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.sandbox import SandboxLimits, SandboxResult, run_graph_code


def _run(code: str, graph: SceneGraph, **limits: float) -> SandboxResult:
    return run_graph_code(code, graph, SandboxLimits(**limits))  # type: ignore[arg-type]


def test_graph_query_runs_and_prints(two_rooms: SceneGraph) -> None:
    code = (
        "rooms = [n for n, d in G.nodes(data=True) if d['kind'] == 'room']\n"
        "closed = sorted(n for n, d in G.nodes(data=True) if d['state'] == 'closed')\n"
        "print(len(rooms), closed, nx.shortest_path_length(G, 'root', 'fridge_0'))\n"
    )
    result = _run(code, two_rooms)
    assert result.ok, result.error
    assert result.stdout.strip() == "2 ['fridge_0', 'nightstand_0'] 3"


def test_errors_come_back_for_self_debugging(two_rooms: SceneGraph) -> None:
    result = _run("print(G.nodes['nope'])", two_rooms)
    assert not result.ok and result.error.startswith("KeyError")


def test_graph_is_read_only(two_rooms: SceneGraph) -> None:
    result = _run("G.add_node('x')", two_rooms)
    assert not result.ok and "Frozen" in result.error


def test_network_is_refused(two_rooms: SceneGraph) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(8.0)
    thread = threading.Thread(target=lambda: accepted.append(_accept(server)), daemon=True)
    thread.start()
    result = _run(f"import socket\ns = socket.create_connection(('127.0.0.1', {port}))", two_rooms)
    thread.join(10)
    server.close()
    assert not result.ok and "sandbox refuses" in result.error
    assert accepted == [None], "the sandboxed code reached the listening socket"
    result = _run("s = __import__('socket').socket()", two_rooms)
    assert not result.ok and "sandbox refuses" in result.error


def _accept(server: socket.socket) -> object:
    try:
        return server.accept()
    except OSError:
        return None


def test_file_writes_and_reads_are_refused(two_rooms: SceneGraph, tmp_path: Path) -> None:
    target = tmp_path / "pwned.txt"
    write = _run(f"import io\nio.open({str(target)!r}, 'w').write('x')", two_rooms)
    assert not write.ok and "sandbox refuses" in write.error
    assert not target.exists()
    read = _run("print(io.open('/etc/hostname').read())", two_rooms)
    assert not read.ok
    assert not _run("open('/etc/hostname')", two_rooms).ok
    assert "sandbox refuses" in _run("import os\nos.system('touch /tmp/x')", two_rooms).error


def test_infinite_loop_hits_the_time_limit(two_rooms: SceneGraph) -> None:
    result = _run("while True:\n    pass", two_rooms, time_s=1.0)
    assert result.timed_out and not result.ok


def test_large_allocation_hits_the_memory_limit(two_rooms: SceneGraph) -> None:
    result = _run("x = bytearray(3 * 1024**3)\nprint(len(x))", two_rooms, memory_mb=512)
    assert not result.ok and "memory" in result.error


@pytest.mark.parametrize("code", ["import ctypes", "import subprocess", "__import__('urllib.request')"])
def test_new_imports_are_refused(two_rooms: SceneGraph, code: str) -> None:
    result = _run(code, two_rooms)
    assert not result.ok and "sandbox refuses" in result.error
