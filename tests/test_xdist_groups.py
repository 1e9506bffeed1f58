"""The test runner keeps an ``xdist_group`` on one worker, as ``make test`` relies on.

The stack tests share the group "robot" so that two of them never run side by side on the two
cores (pyproject.toml). pytest 9.2 with pytest-xdist 3.8 ignores the mark without a word: both
stack tests of a CI run failed, each on its own worker. This runs the pinned pytest and
pytest-xdist on a few grouped tests and checks where they ran.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GROUPED = """
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.xdist_group("robot")


@pytest.mark.parametrize("i", range(4))
def test_grouped(i):
    (Path(__file__).parent / f"ran_{i}").write_text(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_an_xdist_group_runs_on_one_worker(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    (suite / "test_grouped.py").write_text(GROUPED)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider", "-q"],
        cwd=suite,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    ran = sorted(suite.glob("ran_*"))
    assert len(ran) == 4, (ran, run.stdout)
    workers = {path.read_text() for path in ran}
    assert len(workers) == 1, f"the group ran on {sorted(workers)}: --dist loadgroup ignored xdist_group"
