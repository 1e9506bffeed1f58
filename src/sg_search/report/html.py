"""``report.html``: one self-contained page (figures inlined as base64 PNG) plus the PNGs."""

from __future__ import annotations

import base64
import html
from pathlib import Path

from sg_search.report.figures import draw_map, draw_timeline
from sg_search.report.record import RunRecord
from sg_search.scene_graph.draw import draw_top_down

STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}
h1{font-size:1.5em}table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #ccc;padding:3px 6px;
vertical-align:top}th{background:#f2f2f2}.ok{color:#1a7f37}.bad{color:#b42318}img{max-width:100%}
.expl{background:#f7f7f7;padding:.8em;border-left:4px solid #888}"""


RECORDINGS = """<h2>Recordings</h2><ul>
<li><a href="run.rrd">run.rrd</a>: the search in 3D over time (map, scene graph, camera, decisions).
Open it with <code>sg-search view &lt;this folder&gt;</code> (Rerun's viewer; the web viewer on
127.0.0.1 where there is no display) or any Rerun 0.41 viewer: <code>rerun run.rrd</code>.</li>
<li><a href="run.mcap">run.mcap</a>: the ROS 2 topics (TF, odometry, camera, map, scene-graph
markers) in MCAP. Open it in Foxglove (a 3D panel with the <code>map</code> frame shows the robot,
camera and markers together) or read it with <code>mcap</code> / <code>ros2 bag</code>.</li></ul>"""


def write_report(record: RunRecord, folder: Path) -> Path:
    """Write map.png, scene_graph.png, timeline.png and report.html into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    figures = {
        "map": draw_map(record, folder / "map.png"),
        "timeline": draw_timeline(record, folder / "timeline.png"),
    }
    if record.graph is not None:
        figures["scene_graph"] = draw_top_down(
            record.graph, folder / "scene_graph.png", title="final scene graph"
        )
    page = folder / "report.html"
    page.write_text(_page(record, figures))
    return page


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{alt}" src="data:image/png;base64,{data}">'


def _page(record: RunRecord, figures: dict[str, Path]) -> str:
    e = html.escape
    verdict = (
        f'<span class="ok">found {e(record.found_id)}</span>'
        if record.success
        else f'<span class="bad">{e(record.result)}: {e(record.message)}</span>'
    )
    metrics = "".join(f"<tr><th>{e(k)}</th><td>{v:.3f}</td></tr>" for k, v in record.metrics.items())
    rows = []
    for d in record.decisions:
        top = "<br>".join(f"{e(i)} ({e(a)}) <b>{u:.2f}</b>: {e(r)}" for i, a, u, r in d.top)
        rows.append(f"<tr><td>{d.step}</td><td>{e(d.chosen)}</td><td>{top}</td></tr>")
    graph = record.graph
    counts = ""
    if graph is not None:
        kinds: dict[str, int] = {}
        for n in graph.nodes():
            kinds[n.kind] = kinds.get(n.kind, 0) + 1
        counts = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items()))
    sections = [
        f"<h1>sg_search: {e(record.query)}</h1>",
        f"<p>{e(record.scene)} &middot; reasoner <b>{e(record.reasoner)}</b> &middot; {verdict} &middot; "
        f"{record.steps} decisions, {record.path_length_m:.1f} m, {record.wall_s:.0f} s wall time</p>",
        f'<div class="expl">{e(record.explanation or record.message)}</div>',
        "<h2>Where the robot went</h2>",
        _img(figures["map"], "top-down map"),
        "<h2>Decisions</h2>",
        _img(figures["timeline"], "decision timeline"),
        "<table><tr><th>step</th><th>chosen</th><th>top candidates (utility: why)</th></tr>"
        + "".join(rows)
        + "</table>",
    ]
    if "scene_graph" in figures:
        sections += [
            "<h2>Final scene graph</h2>",
            f"<p>{e(counts)}</p>",
            _img(figures["scene_graph"], "scene graph"),
        ]
    if metrics:
        sections += ["<h2>Metrics</h2>", f"<table>{metrics}</table>"]
    sections += [RECORDINGS]
    head = f"<head><meta charset='utf-8'><title>sg_search report</title><style>{STYLE}</style></head>"
    return f"<!doctype html><html>{head}<body>{''.join(sections)}</body></html>\n"
