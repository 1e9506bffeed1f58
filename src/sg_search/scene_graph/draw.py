"""A top-down picture of the scene graph (PNG), for people without rviz.

x right, y up, metres in ``map``. Rooms are outlined rectangles (dashed when unexplored),
containers filled boxes (red closed, green open), other objects dots, doors green lines
between room centres, groups orange hulls' centres, spatial relations thin blue lines.
"""

from __future__ import annotations

import math
from pathlib import Path

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, Layer, NodeState

STATE_COLOURS = {NodeState.CLOSED: "tab:red", NodeState.OPEN: "tab:green"}


def _legend() -> list[object]:
    """Proxy artists naming every mark the drawing uses."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    return [
        Patch(fill=False, edgecolor="0.3", label="room (dashed: unexplored)"),
        Patch(color=STATE_COLOURS[NodeState.CLOSED], alpha=0.5, label="container, closed"),
        Patch(color=STATE_COLOURS[NodeState.OPEN], alpha=0.5, label="container, open"),
        Patch(color="tab:gray", alpha=0.5, label="container, state unknown"),
        Line2D([], [], marker="o", color="tab:blue", ls="", markersize=4, label="object"),
        Line2D([], [], marker="*", color="tab:orange", ls="", markersize=9, label="group"),
        Line2D([], [], color="tab:green", alpha=0.4, label="door (rooms adjacent)"),
        Line2D([], [], color="tab:blue", lw=0.5, alpha=0.6, label="spatial relation"),
        Line2D([], [], marker="o", color="tab:red", label="robot"),
    ]


def draw_top_down(
    graph: SceneGraph,
    path: Path | str,
    title: str = "",
    dpi: int = 120,
    robot: tuple[float, float, float] | None = None,
) -> Path:
    """Render the graph to ``path`` (PNG) and return it; ``robot`` = (x, y, yaw) [m, rad] in
    ``map`` is drawn as an arrow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(11, 7))
    for room in graph.nodes(layer=Layer.ROOM):
        if room.bbox is None:
            continue
        lo = room.bbox.minimum
        dashed = room.state == NodeState.UNEXPLORED
        ax.add_patch(
            Rectangle(
                (lo[0], lo[1]),
                room.bbox.size[0],
                room.bbox.size[1],
                fill=False,
                linestyle="--" if dashed else "-",
                edgecolor="0.3",
                linewidth=1.5,
            )
        )
        ax.text(lo[0] + 0.1, lo[1] + 0.1, room.category or room.id, fontsize=9, color="0.2")
    for edge in graph.edges(EdgeKind.ADJACENCY):
        a, b = graph.node(edge.source), graph.node(edge.target)
        ax.plot([a.position[0], b.position[0]], [a.position[1], b.position[1]], color="tab:green", alpha=0.4)
    for edge in graph.edges(EdgeKind.SPATIAL):
        a, b = graph.node(edge.source), graph.node(edge.target)
        ax.plot(
            [a.position[0], b.position[0]],
            [a.position[1], b.position[1]],
            color="tab:blue",
            lw=0.5,
            alpha=0.4,
        )
    for node in graph.nodes(layer=Layer.OBJECT):
        x, y = node.position[0], node.position[1]
        if node.kind == "container" and node.bbox is not None:
            lo = node.bbox.minimum
            ax.add_patch(
                Rectangle(
                    (lo[0], lo[1]),
                    node.bbox.size[0],
                    node.bbox.size[1],
                    alpha=0.5,
                    color=STATE_COLOURS.get(node.state, "tab:gray"),
                )
            )
        else:
            ax.plot(x, y, "o", color="tab:blue", markersize=4)
        ax.annotate(node.category, (x, y), fontsize=7, xytext=(2, 2), textcoords="offset points")
    for group in graph.nodes(layer=Layer.GROUP):
        ax.plot(group.position[0], group.position[1], "*", color="tab:orange", markersize=9)
    if robot is not None:
        x, y, yaw = robot
        ax.plot(x, y, "o", color="tab:red", markersize=8)
        ax.arrow(x, y, 0.6 * math.cos(yaw), 0.6 * math.sin(yaw), width=0.05, color="tab:red")
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.legend(handles=_legend(), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_xlabel("x [m] (map)")
    ax.set_ylabel("y [m] (map)")
    ax.set_title(title or f"scene graph, sequence {graph.sequence}: {len(graph)} nodes")
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out
