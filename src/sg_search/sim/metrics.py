"""Object-search metrics (Habitat ObjectNav conventions): success, SPL, SoftSPL.

Distances are geodesic metres on the layout's raster; ``shortest`` is the start-to-goal
geodesic distance, ``travelled`` the agent's path length.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from sg_search.planning.geodesic import DistanceField, PlannerParams
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


def reachable_cells(world: SimWorld) -> tuple[np.ndarray, np.ndarray]:
    """Centres [m, layout frame] (n, 2) of the free cells of the world's collision map the base
    can drive to from where it stands, and their geodesic distance from it [m] (n,)."""
    field = DistanceField(
        world.free, world.grid, world.pose[:2], PlannerParams(robot_radius=0.0, snap_radius=1.0)
    )
    rows, cols = np.nonzero(np.isfinite(field.distance))
    return world.grid.to_metres(np.stack([rows, cols], axis=1)), field.distance[rows, cols]


def distance_to_success(world: SimWorld, target_id: str, within_m: float = 1.0) -> float:
    """Geodesic distance [m] from the base to the nearest free cell within ``within_m`` of the
    target (the success region); inf if none is reachable."""
    centres, distance = reachable_cells(world)
    target = np.asarray(world.data.body(target_id).xpos[:2])
    near = np.hypot(*(centres - target).T) <= within_m
    return float(distance[near].min()) if near.any() else math.inf


@dataclass
class EpisodeRun:
    """Counts one rendered episode from now on: actions, path, containers opened, wall time;
    :meth:`result` gives ObjectNav's metrics at the end."""

    world: SimWorld
    target_id: str
    within_m: float = 1.0
    start_to_goal: float = field(init=False)
    _actions: int = field(init=False)
    _travelled: float = field(init=False)
    _opens: int = field(init=False)
    _started: float = field(init=False)

    def __post_init__(self) -> None:
        self.start_to_goal = distance_to_success(self.world, self.target_id, self.within_m)
        self._actions, self._travelled = self.world.actions, self.world.travelled
        self._opens, self._started = self.world.opens, time.monotonic()

    def result(self, frame: Frame | None = None) -> dict[str, float]:
        """success, SPL, SoftSPL, steps, path [m], containers opened, wall time [s]."""
        frame = frame or self.world.render()
        found = target_found(self.world, frame, self.target_id, self.within_m)
        travelled = self.world.travelled - self._travelled
        end = 0.0 if found else distance_to_success(self.world, self.target_id, self.within_m)
        return {
            "success": float(found),
            "SPL": spl(found, self.start_to_goal, travelled),
            "SoftSPL": soft_spl(self.start_to_goal, travelled, self.start_to_goal, end),
            "steps": float(self.world.actions - self._actions),
            "path_m": travelled,
            "opened": float(self.world.opens - self._opens),
            "wall_s": time.monotonic() - self._started,
        }
