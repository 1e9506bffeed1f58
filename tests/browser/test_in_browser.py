"""A run's ``run.rrd`` and ``report.html`` in a real browser (Debian's headless Chromium over
the DevTools protocol, WebGL by SwiftShader), inside a private network namespace.

Skipped where Chromium is absent; ``make test-browser`` installs it (and tesseract, which
reads the viewer's entity tree off the screenshot: the viewer draws its UI into a canvas,
so the page's DOM and accessibility tree hold no entity names).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.browser.drive import ENTITY_NAMES, MIN_MAP_FREE, MIN_MAP_OCCUPIED

from sg_search.config import package_share
from sg_search.mapping.grid import GridSpec
from sg_search.report import RunRecord, write_report
from sg_search.scene_graph.prior import load_prior
from sg_search.search.outcome import DecisionRecord
from sg_search.view import CameraFrame, SearchLog

ROOT = Path(__file__).resolve().parents[2]
DRIVE_TIMEOUT_S = 300
pytestmark = [
    pytest.mark.xdist_group("robot"),  # a browser rendering WebGL on the CPU beside timed tests
    pytest.mark.skipif(
        subprocess.run(["sh", "-c", "command -v chromium"], capture_output=True).returncode != 0,
        reason="Chromium is not installed (make test-browser installs it)",
    ),
]


def _recorded_run(folder: Path) -> None:
    """A run folder as the demo leaves it: run.rrd and report.html of one search over the demo
    apartment (the search itself is not run here; tests/ros/test_recording.py covers that)."""
    graph = load_prior(package_share() / "config" / "demo" / "apartment.yaml")
    spec = GridSpec(0.05, 400, 300, -5.0, -5.0)
    states = np.full(spec.shape, -1, dtype=np.int8)
    states[20:280, 20:380] = 0
    states[20:280, 20:30] = states[20:280, 370:380] = 100  # 0.5 m walls: visible from any view
    states[20:30, 20:380] = states[270:280, 20:380] = 100
    states[120:180, 250:310] = 100  # a 3 m x 3 m block
    path = [(-3.0 + 0.25 * i, -3.0 + 0.2 * i) for i in range(25)]
    log = SearchLog.to_file(folder / "run.rrd")
    rgb = np.zeros((120, 160, 3), np.uint8)
    rgb[:, :, 0] = np.linspace(0, 255, 160, dtype=np.uint8)
    for i, (x, y) in enumerate(path):
        log.set_time(0.5 * i)
        log.robot(x, y, math.atan2(0.2, 0.25))
        camera = np.eye(4)
        camera[:3, :3] = [[0, 0, 1], [-1, 0, 0], [0, -1, 0]]  # optical frame looking along +x
        camera[:3, 3] = [x, y, 1.0]
        log.camera(CameraFrame(camera, (120.0, 120.0, 80.0, 60.0), rgb, np.full((120, 160), 2.0, np.float32)))
    log.map(states, spec)
    log.graph(graph)
    log.frontiers([(3.0, 2.0), (-2.0, 4.0)])
    log.decision("step 1: open the kitchen cabinet")
    log.close()
    record = RunRecord(
        "mug", "apartment", "scout", True, "NONE", steps=3, path_length_m=7.8, found_id="mug_1"
    )
    record.graph, record.states, record.spec, record.path = graph, states, spec, path
    record.found_xy = path[-1]
    record.decisions = [
        DecisionRecord(1, "kitchen", "explore the kitchen", (("kitchen", "navigate", 0.8, "mugs"),))
    ]
    write_report(record, folder)


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    run, out = tmp_path_factory.mktemp("run"), tmp_path_factory.mktemp("browser")
    _recorded_run(run)
    command = [
        str(ROOT / "scripts" / "private-network"),
        sys.executable,
        str(ROOT / "tests/browser/drive.py"),
    ]
    driver = subprocess.Popen(
        [*command, str(run), str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _, stderr = driver.communicate(timeout=DRIVE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        driver.terminate()  # drive.py then stops the viewer and the browser it started
        try:
            driver.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            driver.kill()
            driver.communicate()
        pytest.fail(f"drive.py did not finish within {DRIVE_TIMEOUT_S} s")
    assert driver.returncode == 0, stderr[-3000:]
    return dict(json.loads((out / "seen.json").read_text()), out=out)


def test_the_viewer_draws_the_map_and_the_graph(seen: dict[str, Any]) -> None:
    viewer = seen["viewer"]
    assert viewer["map_free"] > MIN_MAP_FREE and viewer["map_occupied"] > MIN_MAP_OCCUPIED, viewer
    assert viewer["containers"] > 0 or viewer["objects"] > 0, viewer
    assert viewer["errors"] == [], viewer["errors"]
    assert (seen["out"] / "viewer.png").stat().st_size > 20_000


@pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v tesseract"], capture_output=True).returncode != 0,
    reason="tesseract (reads the entity tree off the screenshot) is not installed (make test-browser)",
)
def test_the_viewer_entity_tree_lists_the_search_entities(seen: dict[str, Any]) -> None:
    text = seen["viewer"]["entity_tree_text"].lower()
    for name in ENTITY_NAMES:
        assert name in text, f"{name!r} not in the entity tree: {text!r}"


def test_the_report_loads_every_image_without_errors(seen: dict[str, Any]) -> None:
    report = seen["report"]
    assert len(report["images"]) == 3 and all(i["ok"] and i["width"] > 300 for i in report["images"]), report
    assert report["errors"] == [], report["errors"]
    assert "run.rrd" in report["links"] and "run.mcap" in report["links"], report["links"]
