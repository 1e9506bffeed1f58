"""Object-search metrics (Habitat ObjectNav conventions): success, SPL, SoftSPL.

Distances are geodesic metres on the layout's raster; ``shortest`` is the start-to-goal
geodesic distance, ``travelled`` the agent's path length.
"""

from __future__ import annotations

import math

import numpy as np

from sg_search.sim.mujoco.world import Frame, SimWorld


def spl(success: bool, shortest: float, travelled: float) -> float:
    """Success weighted by path length: success * shortest / max(shortest, travelled)."""
    if not success or not math.isfinite(shortest):
        return 0.0
    return shortest / max(shortest, travelled, 1e-9)


def soft_spl(shortest: float, travelled: float, start_to_goal: float, end_to_goal: float) -> float:
    """SoftSPL: progress towards the goal (1 - end/start distance) instead of binary success."""
    if not (math.isfinite(shortest) and math.isfinite(start_to_goal)) or start_to_goal <= 0:
        return 0.0
    progress = max(0.0, 1.0 - end_to_goal / start_to_goal)
    return progress * shortest / max(shortest, travelled, 1e-9)


def target_found(world: SimWorld, frame: Frame, target_id: str, within_m: float = 1.0) -> bool:
    """Success of a rendered episode: the target has pixels in ``frame`` and lies within
    ``within_m`` metres (horizontal) of the base."""
    if world.visible_pixels(target_id, frame) == 0:
        return False
    body = world.data.body(target_id)
    return bool(np.hypot(*(np.asarray(body.xpos[:2]) - np.asarray(world.pose[:2]))) <= within_m)
