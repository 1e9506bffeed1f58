"""Open a run's ``run.rrd`` in Rerun's web viewer and its ``report.html`` in headless Chromium,
take screenshots and write what was seen as JSON. Run inside a private network namespace:

    scripts/private-network python tests/browser/drive.py RUN_FOLDER OUT_FOLDER
    scripts/private-network python tests/browser/drive.py --live OUT_FOLDER   (a running
        ``sg-search demo --view`` in the same namespace: a screenshot of the live view)

(the viewer's page asks for fonts, a release check and telemetry on the internet; in the
namespace those fail instead of leaving the machine, and the failures are reported apart).
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.browser.cdp import Browser, Page, chromium

OUTSIDE = ("ERR_INTERNET_DISCONNECTED", "ERR_NAME_NOT_RESOLVED", "Failed to fetch", "Failed to load resource")
VIEWER_WAIT_S = 60.0  # software WebGL on 2 cores: the first frames take a while
# what the viewer must show before it is judged (test_in_browser.py asserts the same): the
# map's free and occupied cells, a container or object, and the search's entities in the tree
MIN_MAP_FREE, MIN_MAP_OCCUPIED = 0.01, 0.0005
ENTITY_NAMES = ("world", "camera", "frontiers", "graph", "map", "robot")


def _png(data: bytes) -> np.ndarray:
    import io

    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def _ocr(image: np.ndarray) -> str:
    """Text in ``image`` by tesseract (scaled up: UI fonts are small); "" without tesseract."""
    if shutil.which("tesseract") is None:
        return ""
    import io

    from PIL import Image

    buffer = io.BytesIO()
    picture = Image.fromarray(image)
    picture.resize((picture.width * 3, picture.height * 3)).save(buffer, format="PNG")
    result = subprocess.run(
        ["tesseract", "stdin", "stdout", "--psm", "6"],
        input=buffer.getvalue(),
        capture_output=True,
        timeout=60,
    )
    return result.stdout.decode(errors="replace")


def _near(image: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 30) -> float:
    """Share of pixels within ``tolerance`` of ``rgb`` in every channel."""
    return float(np.mean(np.all(np.abs(image.astype(int) - np.array(rgb)) <= tolerance, axis=2)))


def look_at_viewer(page: Page, url: str, out: Path) -> dict[str, Any]:
    """The viewer until it shows everything it should (module constants) or VIEWER_WAIT_S
    pass, then what it shows. It draws progressively: free space and a container came before
    the walls and the entity tree's children once (CI), so each is waited for."""
    from sg_search.view.rerun_log import KIND_COLOURS, MAP_COLOURS

    page.goto(url)
    start, shot = time.monotonic(), np.zeros((1, 1, 3), np.uint8)
    seen: dict[str, Any] = {}
    while time.monotonic() - start < VIEWER_WAIT_S:
        page.pump(3.0)
        shot = _png(page.screenshot())
        h, w, _ = shot.shape
        scene = shot[int(0.1 * h) : int(0.9 * h), int(0.15 * w) : int(0.6 * w)]
        seen = {
            "map_free": _near(scene, MAP_COLOURS["free"], 12),
            "map_occupied": _near(scene, MAP_COLOURS["occupied"], 12),
            "containers": _near(scene, KIND_COLOURS["container"][:3]),
            "objects": _near(scene, KIND_COLOURS["object"][:3]),
            "distinct_colours": len(np.unique(scene.reshape(-1, 3) // 16, axis=0)),
        }
        seen["entity_tree_text"] = _ocr(shot[int(0.05 * h) : h, : int(0.15 * w)])  # blueprint and streams
        drawn = seen["map_free"] > MIN_MAP_FREE and seen["map_occupied"] > MIN_MAP_OCCUPIED
        listed = shutil.which("tesseract") is None or all(
            name in seen["entity_tree_text"].lower() for name in ENTITY_NAMES
        )  # without tesseract the tree is not read (and its test is skipped)
        if drawn and (seen["containers"] > 0 or seen["objects"] > 0) and listed:
            break
    page.screenshot(out / "viewer.png")
    seen["seconds"] = round(time.monotonic() - start, 1)
    return seen


def look_at_report(page: Page, report: Path, out: Path) -> dict[str, Any]:
    """The report: its images, their load state, and the page's errors."""
    page.errors.clear()
    page.goto(report.resolve().as_uri())
    page.pump(1.0)
    images = page.evaluate(
        "Array.from(document.images).map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,"
        " width: i.naturalWidth}))"
    )
    links = page.evaluate("Array.from(document.links).map(a => a.getAttribute('href'))")
    height = page.evaluate("document.documentElement.scrollHeight")
    page.send("Emulation.setDeviceMetricsOverride", width=1200, height=min(int(height), 6000),
              deviceScaleFactor=1, mobile=False)  # fmt: skip
    page.screenshot(out / "report.png")
    return {"images": images, "links": links, "errors": list(page.errors)}


def main(run: Path, out: Path) -> int:
    from sg_search.view.viewer import ViewerPorts, start_viewer, stop_viewer

    out.mkdir(parents=True, exist_ok=True)
    executable = chromium()
    if executable is None:
        print("no chromium", file=sys.stderr)
        return 3
    ports = ViewerPorts(19876, 19090)
    viewer = start_viewer(run / "run.rrd", web=True, ports=ports)
    browser = Browser(executable)
    try:
        page = browser.open()
        result: dict[str, Any] = {"viewer": look_at_viewer(page, ports.web_url, out)}
        errors = page.errors
        result["viewer"]["errors"] = [e for e in errors if not any(o in e for o in OUTSIDE)]
        result["viewer"]["outside_requests_blocked"] = sum(any(o in e for o in OUTSIDE) for e in errors)
        page.close()
        result["report"] = look_at_report(browser.open(), run / "report.html", out)
    finally:
        browser.close()
        stop_viewer(viewer)
    (out / "seen.json").write_text(json.dumps(result, indent=1))
    return 0


def live(out: Path) -> int:
    """Screenshot the web viewer a running ``sg-search demo --view`` streams to."""
    from sg_search.view.viewer import ViewerPorts

    out.mkdir(parents=True, exist_ok=True)
    browser = Browser(chromium() or "chromium")
    try:
        seen = look_at_viewer(browser.open(), ViewerPorts().web_url, out)
    finally:
        browser.close()
    (out / "seen.json").write_text(json.dumps({"viewer": seen}, indent=1))
    return 0


if __name__ == "__main__":
    # The viewer runs in a session of its own (stop_viewer ends it): a SIGTERM (the test's
    # timeout) must unwind through the ``finally`` blocks that stop it and the browser.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if sys.argv[1] == "--live":
        sys.exit(live(Path(sys.argv[2])))
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
