"""Where the simulated base may stand: a raster of the same walls and furniture the MuJoCo
world draws (so what the camera sees and what blocks the base agree to one cell).

Cells are 0.05 m; a cell is blocked if its centre lies within half a cell of a wall box
(1 cm walls on room edges, door gaps open) or inside the footprint of furniture that reaches
below 1 m (wall cabinets hang above the base), or outside every room. The base centre may
stand where the clearance to blocked cells exceeds its radius.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from sg_search.mapping.grid import GridSpec
from sg_search.sim.layout import HouseLayout
from sg_search.sim.mujoco.mjcf import AGENT_RADIUS, wall_segments

RESOLUTION = 0.05  # [m]


def collision_raster(
    layout: HouseLayout, robot_radius: float = AGENT_RADIUS, resolution: float = RESOLUTION
) -> tuple[np.ndarray, GridSpec]:
    """(free for the base centre, grid) of ``layout``."""
    spec = layout.grid(resolution, margin=0.5)
    xs = spec.origin_x + (np.arange(spec.width) + 0.5) * resolution
    ys = spec.origin_y + (np.arange(spec.height) + 0.5) * resolution

    def mark(grid: np.ndarray, ax: float, ay: float, bx: float, by: float, grow: float = 0.0) -> None:
        cols = (xs >= ax - grow) & (xs <= bx + grow)
        rows = (ys >= ay - grow) & (ys <= by + grow)
        grid[np.ix_(rows, cols)] = True

    inside = np.zeros(spec.shape, dtype=bool)
    for room in layout.rooms:
        mark(inside, room.x0, room.y0, room.x1, room.y1)
    blocked = ~inside
    for ax, ay, bx, by in wall_segments(layout):
        mark(blocked, ax, ay, bx, by, grow=resolution / 2)
    for item in layout.furniture:
        cx, cy, cz = item.center
        sx, sy, sz = item.size
        if cz - sz / 2 < 1.0:
            mark(blocked, cx - sx / 2, cy - sy / 2, cx + sx / 2, cy + sy / 2)
    clearance = ndimage.distance_transform_edt(~blocked) * resolution
    return clearance > robot_radius, spec
