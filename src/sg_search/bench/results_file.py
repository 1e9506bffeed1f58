"""A benchmark's results as JSON lines that survive the run: a header, then one row per
finished episode, each flushed and fsynced as it arrives.

The header names the benchmark and every option that decides which episodes run and how
(not the worker count, backend or output folder), so ``--resume FILE`` continues only the
run that wrote it. A last line cut off by a killed run is dropped on resume (and the file
truncated to its last whole row); every row before it counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import sys
import time
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

FORMAT = "sg_search.bench.results/1"
TIMING_KEYS = frozenset({"wall_s", "render_s", "decision_ms", "llm_latency_s", "node"})
"""Row fields that depend on the machine or the schedule, not on the episode (left out when
two runs are compared row by row)."""


@cache
def code_version() -> str:
    """``<package version>+<sha256 of the installed package's files, 12 hex>``: equal on two
    machines only when they run the same code, data and configuration."""
    import sg_search

    root = Path(sg_search.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"{sg_search.__version__}+{digest.hexdigest()[:12]}"


class ResultsFile:
    """An append-only JSON-lines results file (see the module docstring).

    Args:
        path: the file; created with its header when missing or empty.
        header: what identifies the run (benchmark name, options, episode count).
        resume: continue an existing file; its header must equal ``header`` (ValueError
            naming the first difference). Without ``resume`` an existing non-empty file is
            refused, so no run is overwritten or mixed into another.
    """

    def __init__(self, path: Path, header: Mapping[str, Any], resume: bool = False) -> None:
        self.path = path
        self.header = json.loads(json.dumps({"format": FORMAT, **header}))  # as it reads back
        self.rows: dict[int, dict[str, Any]] = {}
        exists = path.exists() and path.stat().st_size > 0
        if exists and not resume:
            raise ValueError(f"{path} already holds results; pass --resume {path} to continue that run")
        if resume and not exists:
            raise ValueError(f"--resume {path}: no such results file")
        if exists:
            self._read()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._write_line(json.dumps(self.header, sort_keys=True))

    def _read(self) -> None:
        header, self.rows, cut_off = read_results(self.path, "--resume ")
        if header != self.header:
            raise ValueError(
                f"--resume {self.path}: written by another run ({_difference(header, self.header)})"
            )
        if cut_off:  # a killed run's half-written row: gone, and the episode runs again
            print(f"[results] {self.path}: dropping a cut-off last line ({cut_off} bytes)", file=sys.stderr)
            with self.path.open("r+b") as stream:
                stream.truncate(self.path.stat().st_size - cut_off)

    def append(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """Write one finished episode (flushed and fsynced before returning); returns the row as
        it reads back from the file, so fresh and resumed rows are the same objects."""
        line = json.dumps(row, sort_keys=True)
        self._write_line(line)
        stored: dict[str, Any] = json.loads(line)
        self.rows[int(stored["episode"])] = stored
        return stored

    def _write_line(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as stream:
            stream.write(line + "\n")
            stream.flush()
            os.fsync(stream.fileno())


def read_results(path: Path, context: str = "") -> tuple[dict[str, Any], dict[int, dict[str, Any]], int]:
    """A results file read as it is (a running run's too): its header, its whole rows by
    episode, and the length [bytes] of a cut-off last line (0 when the file ends with a whole
    row). ValueError names the line that is no header or no row (``context`` prefixes the path)."""
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise ValueError(f"{context}{path}: cannot be read ({exc})") from exc
    try:
        header = json.loads(lines[0])
    except ValueError as exc:
        raise ValueError(f"{context}{path}: the first line is not a results header ({exc})") from exc
    if not isinstance(header, dict):
        raise ValueError(f"{context}{path}: the first line is not a results header")
    rows: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines[1:-1], start=2):
        try:
            row = json.loads(line)
            rows[int(row["episode"])] = row
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{context}{path}:{number}: not a results row ({exc})") from exc
    return header, rows, len(lines[-1])


def _difference(found: Mapping[str, Any], wanted: Mapping[str, Any]) -> str:
    for key in sorted(set(found) | set(wanted)):
        if found.get(key) != wanted.get(key):
            if isinstance(found.get(key), dict) and isinstance(wanted.get(key), dict):
                return f"{key}: {_difference(found[key], wanted[key])}"
            return f"{key} is {found.get(key)!r} there, {wanted.get(key)!r} here"
    return "no difference"


def default_path(out: Path, name: str) -> Path:
    """``<out>/results/<name>-<UTC time>-<random>.jsonl`` for a run that names no file."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return out / "results" / f"{name}-{stamp}-{secrets.token_hex(3)}.jsonl"
