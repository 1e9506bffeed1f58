"""Escape attempts against the run_code sandbox: each is refused (or contained) and leaves no
trace outside. The layers that held on this machine come back with every result."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.sandbox import SandboxLimits, SandboxResult, run_graph_code

WALK_TO_OS = (
    "mods = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close']\n"
    "g = mods[0].__init__.__globals__\n"
)

SHELL = "import os\nos.system('touch {path}.pwned')"

# (name, code with {path} for a file outside the sandbox, the error it must end in)
REFUSED = [
    ("stat a path outside", "import os\nos.stat({path!r})", "refuses os.stat"),
    ("lstat through posix", "import posix\nposix.lstat({path!r})", "refuses os.lstat"),
    ("change file times", "import os\nos.utime({path!r}, (0, 0))", "refuses os.utime"),
    ("make a fifo", "import os\nos.mkfifo({path!r} + '.fifo')", "refuses os.mkfifo"),
    ("make a node", "import os\nos.mknod({path!r} + '.node')", "refuses os.mknod"),
    ("remove a file", "import os\nos.remove({path!r})", "refuses os.remove"),
    ("list a folder", "import os\nos.listdir('/')", "refuses os.listdir"),
    ("change directory", "import os\nos.chdir('/')", "refuses os.chdir"),
    (
        "read a file",
        "__builtins__['__import__']('io').open({path!r}).read()",
        "refuses",
    ),
    ("write to a raw descriptor", "import os\nos.write(1, b'x')", "refuses os.write"),
    ("write the reply's descriptor", "import io\nio.FileIO(3, 'w').write(b'{{}}')", "refuses open"),
    ("kill the parent", "import os\nos.kill(os.getppid(), 9)", "refuses os."),
    ("fork", "import os\nos.fork()", "refuses os.fork"),
    (
        "run a shell through os",
        WALK_TO_OS + "g['system']('touch ' + {path!r} + '.pwned')",
        "refuses os.system",
    ),
    ("set an environment variable", "import os\nos.putenv('X', '1')", "refuses os.putenv"),
    (
        "raise the memory limit",
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
        "refuses resource.setrlimit",
    ),
    ("walk the heap", "import gc\ngc.get_objects()", "refuses"),
    ("read the caller's frame", "import sys\nsys._getframe(1)", "refuses sys._getframe"),
    ("add a permissive audit hook", "import sys\nsys.addaudithook(lambda *a: None)\n" + SHELL, "refuses"),
    ("load native code", "__import__('ctypes')", "refuses"),
    (
        "make a function from bytecode",
        "type(lambda: 0)((lambda: 0).__code__, {{}})()",
        "refuses function.__new__",
    ),
    ("forge the reply and exit", "print('{{\"ok\": true}}')\nimport os\nos._exit(0)", "refuses os._exit"),
]


def _run(code: str, **limits: float) -> SandboxResult:
    return run_graph_code(code, SceneGraph(), SandboxLimits(**limits))  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "code", "error"), REFUSED, ids=[r[0] for r in REFUSED])
def test_an_escape_attempt_is_refused_and_leaves_no_trace(
    name: str, code: str, error: str, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    before = victim.stat().st_mtime
    result = _run(code.format(path=str(victim)))
    assert not result.ok and error in result.error, result
    assert victim.read_text() == "untouched" and victim.stat().st_mtime == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["victim.txt"]


def test_the_reply_cannot_be_forged_by_exiting_early() -> None:
    result = _run('print(\'{"ok": true, "stdout": "forged"}\')\nraise SystemExit(0)')
    assert not result.ok and "SystemExit" in result.error
    assert result.stdout.startswith('{"ok": true')  # what it printed is output, not the reply


def test_ignoring_the_alarm_does_not_outlive_the_time_limit() -> None:
    result = _run(
        "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass", time_s=1.0
    )
    assert not result.ok and ("refuses signal" in result.error or result.timed_out)


def test_a_busy_loop_is_stopped_by_the_warden() -> None:
    result = _run("x = 0\nwhile True:\n    x += 1", time_s=1.0)
    assert result.timed_out and not result.ok and "time limit" in result.error  # not the parent's kill


@pytest.mark.parametrize("character", ["x", "\x01"])  # a control character is six in the JSON reply
def test_output_is_capped_and_the_rest_discarded(character: str) -> None:
    result = _run(f"for _ in range(200):\n    print(chr({ord(character)}) * 100_000)", output_bytes=65_536)
    assert result.ok, result.error
    assert len(result.stdout) == 65_536 and set(result.stdout) == {character}


@pytest.mark.parametrize(
    ("limits", "field"),
    [({"time_s": math.nan}, "time_s"), ({"time_s": 1e9}, "time_s"), ({"time_s": -1.0}, "time_s"),
     ({"memory_mb": 0}, "memory_mb"), ({"output_bytes": 10**9}, "output_bytes")],
)  # fmt: skip
def test_limits_are_capped_naming_the_field(limits: dict[str, float], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        SandboxLimits(**limits)  # type: ignore[arg-type]


def test_the_layers_that_held_are_reported() -> None:
    result = _run("print(len(G))")
    assert result.ok and result.stdout.strip() == "0"
    assert {"audit hook", "os functions removed", "resource limits"} <= set(result.layers)
    network = [layer for layer in result.layers if "network namespace" in layer]
    assert len(network) == 1  # held, or reported with the reason it did not ("no network namespace (...)")
    if os.geteuid() == 0:  # as root the runner always drops to nobody
        assert any(layer.startswith("unprivileged user") for layer in result.layers)
