"""Moving a Habitat agent from ROS commands, and ObjectNav's episode metrics.

Habitat's world is Y-up; the agent looks along its local -Z. A ROS ``cmd_vel`` (v forward
[m/s], w about +z [rad/s]) over ``dt`` seconds is a step along the agent's heading and a turn
about Habitat's +Y (the same turn as about ROS +z: the frame change is a proper rotation).
Quaternions are (x, y, z, w).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry.transforms import quat_multiply, quat_to_matrix
from sg_search.sim.metrics import soft_spl, spl


def step_target(position: Any, rotation_xyzw: Any, forward_m: float) -> NDArray[np.float64]:
    """Where ``forward_m`` metres along the agent's heading (its local -Z) lead, in Habitat's world."""
    heading = quat_to_matrix(np.asarray(rotation_xyzw, dtype=float)) @ np.array([0.0, 0.0, -1.0])
    heading[1] = 0.0  # stay on the floor
    norm = float(np.linalg.norm(heading))
    result: NDArray[np.float64] = (
        np.asarray(position, dtype=float) + (heading / norm if norm else heading) * forward_m
    )
    return result


def turned(rotation_xyzw: Any, angle_rad: float) -> NDArray[np.float64]:
    """The orientation after turning ``angle_rad`` to the left (about Habitat's +Y)."""
    yaw = np.array([0.0, math.sin(angle_rad / 2), 0.0, math.cos(angle_rad / 2)])
    result: NDArray[np.float64] = quat_multiply(yaw, np.asarray(rotation_xyzw, dtype=float))
    return result


@dataclass(frozen=True)
class ObjectNavOutcome:
    """An ObjectNav episode's result (metres): success within ``success_distance`` of a goal
    view point (geodesic), SPL, SoftSPL and the remaining distance to the goal."""

    success: bool
    spl: float
    soft_spl: float
    distance_to_goal: float
    travelled: float

    def as_dict(self) -> dict[str, float]:
        """For JSON."""
        return {"success": float(self.success), "spl": self.spl, "soft_spl": self.soft_spl,
                "distance_to_goal": self.distance_to_goal, "travelled": self.travelled}  # fmt: skip


def objectnav_outcome(
    start_to_goal: float, end_to_goal: float, travelled: float, success_distance: float = 1.0
) -> ObjectNavOutcome:
    """Metrics from geodesic distances to the nearest goal view point at the start and at the
    end, and the path length travelled [m]."""
    success = math.isfinite(end_to_goal) and end_to_goal <= success_distance
    return ObjectNavOutcome(
        success,
        spl(success, start_to_goal, travelled),
        soft_spl(start_to_goal, travelled, start_to_goal, end_to_goal),
        end_to_goal,
        travelled,
    )
