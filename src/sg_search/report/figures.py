"""The report's figures (PNG, matplotlib Agg): the top-down map and the decision timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sg_search.report.record import RunRecord
from sg_search.scene_graph import Layer, NodeState

AFFORDANCE_COLOURS = {"navigate": "tab:blue", "open": "tab:red", "inspect": "tab:orange", "close": "tab:gray"}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw_map(record: RunRecord, path: Path) -> Path:
    """Occupancy map, rooms (outlined, named), trajectory, frontiers, opened containers,
    rejected candidates and the find, top-down (x right, y up, metres)."""
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(11, 7))
    if record.states is not None and record.spec is not None:
        s = record.spec
        image = np.full(record.states.shape, 0.75)
        image[record.states == 0] = 1.0
        image[record.states >= 50] = 0.15
        extent = (
            s.origin_x,
            s.origin_x + s.width * s.resolution,
            s.origin_y,
            s.origin_y + s.height * s.resolution,
        )
        ax.imshow(image, cmap="gray", vmin=0, vmax=1, origin="lower", extent=extent, interpolation="nearest")
    graph = record.graph
    if graph is not None:
        for room in graph.nodes(layer=Layer.ROOM):
            if room.bbox is None:
                continue
            lo = room.bbox.minimum
            ax.add_patch(
                Rectangle(
                    lo[:2], room.bbox.size[0], room.bbox.size[1], fill=False, ec="tab:purple", lw=1.2, ls="--"
                )
            )
            ax.text(room.position[0], room.position[1], room.category or room.id, ha="center", fontsize=8,
                    color="tab:purple", bbox={"fc": "white", "alpha": 0.6, "lw": 0})  # fmt: skip
        for node in graph.nodes(layer=Layer.OBJECT):
            if node.kind == "container" and node.bbox is not None:
                colour = "tab:green" if node.state == NodeState.OPEN else "0.45"
                lo = node.bbox.minimum
                ax.add_patch(
                    Rectangle(lo[:2], node.bbox.size[0], node.bbox.size[1], fc=colour, alpha=0.35, lw=0)
                )
    if record.path:
        xy = np.array(record.path)
        ax.plot(xy[:, 0], xy[:, 1], color="tab:blue", lw=1.5, label="trajectory")
        ax.plot(*xy[0], "o", color="tab:blue", ms=8, label="start")
    if record.frontiers:
        f = np.array(record.frontiers)
        ax.plot(f[:, 0], f[:, 1], "^", color="tab:cyan", ms=6, label="frontiers (end)")
    for i, (_, (x, y)) in enumerate(record.opened):
        ax.plot(x, y, "s", color="tab:green", ms=9, mec="k", label="opened" if i == 0 else None)
    for i, (_, (x, y)) in enumerate(record.rejected):
        ax.plot(x, y, "x", color="tab:red", ms=10, mew=2, label="rejected candidate" if i == 0 else None)
    if record.found_xy is not None:
        ax.plot(*record.found_xy, "*", color="gold", ms=20, mec="k", label=f"found {record.found_id}")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    outcome = "found" if record.success else record.result
    ax.set_title(f"{record.scene}: {record.query!r} ({record.reasoner}) - {outcome}")
    if record.states is not None and record.spec is not None and (record.states >= 0).any():
        known = record.spec.to_metres(np.argwhere(record.states >= 0))  # zoom to what was mapped
        lo, hi = known.min(axis=0) - 1.0, known.max(axis=0) + 1.0
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
    from matplotlib.patches import Patch

    handles, _ = ax.get_legend_handles_labels()
    handles += [
        Patch(fill=False, ec="tab:purple", ls="--", label="room (segmented, named)"),
        Patch(fc="tab:green", alpha=0.35, label="container, open"),
        Patch(fc="0.45", alpha=0.35, label="container, not opened"),
        Patch(fc="white", ec="0.5", label="free (mapped)"),
        Patch(fc="0.15", label="occupied"),
        Patch(fc="0.75", label="unknown"),
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def draw_timeline(record: RunRecord, path: Path) -> Path:
    """The chosen target's utility per decision, coloured by affordance."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 2.8))
    for d in record.decisions:
        if not d.top:
            continue
        _, affordance, utility, _ = d.top[0]
        ax.bar(d.step, utility, color=AFFORDANCE_COLOURS.get(affordance, "0.5"))
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    handles = [Patch(facecolor=colour, label=name) for name, colour in AFFORDANCE_COLOURS.items()]
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # decisions are counted, not measured
    ax.set_xlabel("decision")
    ax.set_ylabel("utility of the choice")
    ax.set_ylim(0, 1)
    ax.legend(handles=handles, fontsize=7, ncol=4, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
