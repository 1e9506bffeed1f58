"""A bumper from odometry: a base told to drive forward that does not move is blocked.

The in-process robot knows at once when a forward action moves nothing (the simulator says
so) and marks what lies ahead as occupied; a base driven by velocity commands learns it only
from its pose. An obstacle the camera cannot see (a door jamb below its field of view, a
glass pane) then stops the base while the map says the way is free, and the planner would
send it into the same spot after every recovery. With this, the base reports the blockage and
the planner marks what lies ahead (``FrontierPlannerConfig.bump_marks``, as the in-process
robot does) and plans around it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry import Pose2D


@dataclass
class StallDetector:
    """``update`` says True once the base has been commanded forward faster than
    ``min_speed`` [m/s] for ``window_s`` [s] and moved less than ``min_progress_m`` [m]."""

    window_s: float = 2.0
    min_progress_m: float = 0.03
    min_speed: float = 0.05

    def __post_init__(self) -> None:
        if self.window_s <= 0 or self.min_progress_m <= 0 or self.min_speed < 0:
            raise ValueError("stall window_s and min_progress_m must be > 0, min_speed >= 0")
        self._since: tuple[float, Pose2D] | None = None  # when pushing began, and the pose then

    def update(self, now_s: float, pose: Pose2D, linear: float) -> bool:
        """One command period: the time [s], the base's pose (x, y [m], yaw), the forward speed
        commanded [m/s]. True when the base is blocked (then the window starts afresh)."""
        if linear <= self.min_speed:
            self._since = None
            return False
        if self._since is None:
            self._since = (now_s, pose)
            return False
        start_s, start = self._since
        if now_s - start_s < self.window_s:
            return False
        self._since = (now_s, pose)
        return math.dist(pose[:2], start[:2]) < self.min_progress_m


def point_ahead(pose: Pose2D, distance_m: float) -> tuple[float, float]:
    """The point ``distance_m`` [m] in front of the base (x, y [m] in the pose's frame)."""
    x, y, yaw = pose
    return (x + distance_m * math.cos(yaw), y + distance_m * math.sin(yaw))


def disc_points(centre: tuple[float, float], radius_m: float, spacing_m: float) -> NDArray[np.float64]:
    """(N, 2) points [m] of a square lattice ``spacing_m`` apart, centred on ``centre``, that lie
    within ``radius_m`` of it: the cells of a disc (only the centre when ``radius_m`` < spacing)."""
    steps = int(radius_m / spacing_m + 1e-9)
    offsets = np.arange(-steps, steps + 1) * spacing_m
    dx, dy = (grid.ravel() for grid in np.meshgrid(offsets, offsets))
    inside = np.hypot(dx, dy) <= radius_m + 1e-9
    return np.stack([centre[0] + dx[inside], centre[1] + dy[inside]], axis=1)
