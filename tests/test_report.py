"""The run report: a self-contained HTML page with its figures."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np

from sg_search.mapping.grid import GridSpec
from sg_search.report import RunRecord, write_report
from sg_search.scene_graph import Layer, SceneGraph, SceneNode
from sg_search.search.outcome import DecisionRecord


def test_report_inlines_every_figure_and_tells_the_story(tmp_path: Path) -> None:
    graph = SceneGraph()
    graph.upsert_node(SceneNode("plate_1", Layer.OBJECT, "object", "plate", (1.0, 1.0, 0.9)))
    states = np.full((40, 40), -1, dtype=np.int8)
    states[5:35, 5:35] = 0
    record = RunRecord(
        "find the plate", "Rs_int", "scout", True, "NONE",
        explanation="found plate (plate_1) <in> the kitchen", steps=2, path_length_m=3.5,
        found_id="plate_1", found_xy=(1.0, 1.0), states=states, spec=GridSpec(0.1, 40, 40, -1.0, -1.0),
        path=[(0.0, 0.0), (0.5, 0.5), (1.0, 0.6)], opened=[("cab", (0.8, 1.2))], graph=graph,
        decisions=[DecisionRecord(1, "cab", "best", (("cab", "open", 0.75, "p(plate in kitchen) = 0.78"),))],
        metrics={"SPL": 0.61},
    )  # fmt: skip
    page = write_report(record, tmp_path)
    html = page.read_text()
    for name in ("map.png", "timeline.png", "scene_graph.png"):
        png = (tmp_path / name).read_bytes()
        assert png.startswith(b"\x89PNG") and base64.b64encode(png).decode() in html
    assert "&lt;in&gt;" in html and "<in>" not in html  # text is escaped
    assert "p(plate in kitchen) = 0.78" in html and "0.610" in html


def test_the_timeline_legend_tells_affordances_apart(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    from sg_search.report import figures

    record = RunRecord("find the plate", "Rs_int", "scout", False, "NOT_FOUND",
                       decisions=[DecisionRecord(1, "cab", "", (("cab", "open", 0.7, ""),))])  # fmt: skip
    legends: list[list[tuple[float, ...]]] = []
    real_savefig = plt.Figure.savefig

    def grab(fig: object, *args: object, **kwargs: object) -> None:
        for ax in fig.axes:  # type: ignore[attr-defined]
            if ax.get_legend() is not None:
                legends.append([tuple(h.get_facecolor()) for h in ax.get_legend().legend_handles])
        real_savefig(fig, *args, **kwargs)  # type: ignore[arg-type]

    plt.Figure.savefig = grab  # type: ignore[method-assign]
    try:
        figures.draw_timeline(record, tmp_path / "timeline.png")
    finally:
        plt.Figure.savefig = real_savefig  # type: ignore[method-assign]
    (colours,) = legends
    assert len(colours) == len(figures.AFFORDANCE_COLOURS) == len(set(colours))  # one colour each
