"""A top-down figure of one house after ``bench perception``: rooms, instances, truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sg_search.perception.fusion import Instance
from sg_search.perception.room_segmentation import RoomSegmentation
from sg_search.sim.layout import HouseLayout


def plot_house(
    path: Path,
    layout: HouseLayout,
    free: np.ndarray,
    segmentation: RoomSegmentation,
    names: dict[int, str],
    instances: list[Instance],
    truth: dict[str, np.ndarray],
) -> Path:
    """Segmented rooms (colours, with their inferred type), the true room outlines (black),
    fused instance boxes (blue, with category) and the true seen-object centroids (red x)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    spec = segmentation.spec
    extent = (spec.origin_x, spec.origin_x + spec.width * spec.resolution,
              spec.origin_y, spec.origin_y + spec.height * spec.resolution)  # fmt: skip
    labels = np.where(free, segmentation.labels, 0).astype(float)
    labels[labels == 0] = np.nan
    fig, ax = plt.subplots(figsize=(9, 9))
    ax.imshow(labels, origin="lower", extent=extent, cmap="tab20", alpha=0.45, interpolation="nearest")
    for room in layout.rooms:
        ax.add_patch(Rectangle((room.x0, room.y0), room.x1 - room.x0, room.y1 - room.y0, fill=False, lw=1.2))
    for label in range(1, segmentation.count + 1):
        x0, y0, x1, y1 = segmentation.extent(label)
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, names.get(label) or "?", ha="center", fontsize=9, weight="bold")
    for instance in instances:
        (x0, y0), (x1, y1) = instance.lower[:2], instance.upper[:2]
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, color="tab:blue", lw=0.8))
        ax.text(x0, y1, instance.category, fontsize=6, color="tab:blue")
    if truth:
        points = np.array(list(truth.values()))
        ax.plot(points[:, 0], points[:, 1], "x", color="tab:red", ms=5, label="true objects (seen part)")
        ax.legend(loc="upper right", fontsize=8)
    x_lo, y_lo, x_hi, y_hi = layout.bounds(margin=0.5)
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_aspect("equal")
    ax.set_title(f"{layout.scene}: rooms from the explored map, fused instances (clean ground truth)")
    ax.set_xlabel("x [m] (map)")
    ax.set_ylabel("y [m] (map)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
