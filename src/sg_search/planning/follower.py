"""Path following: velocity commands (``cmd_vel`` in ``base_link``) with stuck detection and
recovery (a discrete base quantises them: :mod:`sg_search.planning.discrete`).

Poses are (x, y, yaw) in ``map`` [m, rad]; times in seconds; speeds in m/s and rad/s.
The continuous controller is pure pursuit with a lookahead point and rotate-in-place for
large heading errors. Stuck: less than ``stuck_min_progress`` metres of progress towards
the goal within ``stuck_window_s``; recovery backs off, rotates, then asks for a re-plan;
after ``max_recoveries`` it gives up (STUCK). Progress is measured along the path being followed;
a re-plan (``keep_recoveries``) continues the window on the new path, so a base that is blocked,
re-plans and is blocked again on every step is still seen to make none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry import Pose2D


class FollowStatus(Enum):
    """What the follower is doing."""

    ACTIVE = "active"
    ARRIVED = "arrived"
    RECOVERING = "recovering"
    REPLAN = "replan"
    STUCK = "stuck"
    STOP = "stop"  # not the follower's: a navigation ended, whichever way; the base stands still


@dataclass(frozen=True)
class FollowerParams:
    """Speeds, tolerances and recovery behaviour (see module docstring for units)."""

    max_linear: float = 0.3
    max_angular: float = 0.8
    lookahead: float = 0.4
    goal_tolerance: float = 0.15
    heading_gain: float = 1.5
    rotate_in_place_angle: float = 0.8
    stuck_window_s: float = 5.0
    stuck_min_progress: float = 0.1
    max_recoveries: int = 3
    backoff_s: float = 1.0
    backoff_speed: float = 0.1
    rotate_s: float = 2.0


@dataclass(frozen=True)
class Command:
    """One control output."""

    linear: float
    angular: float
    status: FollowStatus
    note: str = ""
    heading_error: float = 0.0  # [rad] to the lookahead point (what a discrete base turns by)
    cross_track_m: float = 0.0  # [m] from the base to the nearest point of the path


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def remaining_length(
    path: NDArray[np.float64], xy: NDArray[np.float64]
) -> tuple[float, int, NDArray[np.float64]]:
    """Distance [m] from ``xy`` along the rest of ``path``, the index of the next waypoint, and
    the path's point nearest ``xy``."""
    if len(path) == 1:
        return float(np.linalg.norm(path[0] - xy)), 0, np.asarray(path[0], dtype=float)
    seg = np.diff(path, axis=0)
    rel = xy - path[:-1]
    t = np.clip(np.einsum("ij,ij->i", rel, seg) / np.maximum(np.einsum("ij,ij->i", seg, seg), 1e-12), 0, 1)
    closest = path[:-1] + seg * t[:, None]
    i = int(np.argmin(np.linalg.norm(closest - xy, axis=1)))
    rest = float(np.linalg.norm(path[i + 1] - closest[i])) + float(
        np.linalg.norm(np.diff(path[i + 1 :], axis=0), axis=1).sum()
    )
    return rest + float(np.linalg.norm(closest[i] - xy)), i + 1, closest[i]


def lookahead_point(
    path: NDArray[np.float64], xy: NDArray[np.float64], lookahead: float, nxt: int
) -> NDArray[np.float64]:
    """The point ``lookahead`` metres from the base along the rest of the path, waypoint
    ``nxt`` (the next one, from :func:`remaining_length`) first: a carrot on the way to it (the
    base is not steered back onto the segment it drifted off). Measured from the base's
    projection on the path instead, the discrete benchmark's base tracked tighter but turned
    more (val: 141 turns an episode against 129)."""
    point = xy
    budget = lookahead
    for waypoint in path[nxt:]:
        step = float(np.linalg.norm(waypoint - point))
        if step >= budget:
            return np.asarray(point + (waypoint - point) * (budget / max(step, 1e-9)), dtype=float)
        budget -= step
        point = waypoint
    return np.asarray(path[-1], dtype=float)


class PathFollower:
    """Turns a path into commands; call :meth:`command` at the control rate."""

    def __init__(self, params: FollowerParams | None = None) -> None:
        self.params = params or FollowerParams()
        self.path: NDArray[np.float64] = np.zeros((0, 2))
        self.recoveries = 0
        self._progress: list[tuple[float, float]] = []  # (time [s], remaining length [m])
        self._replaced: NDArray[np.float64] | None = None  # the path a re-plan replaced
        self._recovery_until = 0.0
        self._recovery_phase = ""

    def set_path(self, path: NDArray[np.float64], keep_recoveries: bool = False) -> None:
        """Follow ``path`` (N, 2) [m] from now on. A re-plan (``keep_recoveries``) keeps the
        recovery count and the progress window; a new goal starts both afresh."""
        if len(path) == 0:
            raise ValueError("empty path")
        if keep_recoveries and self._progress and self._replaced is None:
            self._replaced = self.path  # the path the window was measured on (two re-plans: the first's)
        self.path = np.asarray(path, dtype=float).reshape(-1, 2)
        self._recovery_phase = ""
        if not keep_recoveries:
            self.recoveries = 0
            self._progress = []

    def command(self, pose: Pose2D, now: float) -> Command:
        """Velocity command for ``pose`` at time ``now``."""
        p = self.params
        xy = np.array(pose[:2])
        remaining, nxt, nearest = remaining_length(self.path, xy)
        if float(np.linalg.norm(self.path[-1] - xy)) <= p.goal_tolerance:
            return Command(0.0, 0.0, FollowStatus.ARRIVED)
        if self._recovery_phase:
            return self._recover(now)
        if self._replaced is not None:  # the window goes on along the new path: the re-plan
            shift = remaining - remaining_length(self._replaced, xy)[0]  # is neither progress nor its loss
            self._progress = [(t, r + shift) for t, r in self._progress]
            self._replaced = None
        self._progress.append((now, remaining))
        while self._progress and self._progress[0][0] < now - p.stuck_window_s:
            self._progress.pop(0)
        window_full = now - self._progress[0][0] >= p.stuck_window_s * 0.95
        if window_full and self._progress[0][1] - remaining < p.stuck_min_progress:
            if self.recoveries >= p.max_recoveries:
                return Command(
                    0.0, 0.0, FollowStatus.STUCK, f"no progress after {self.recoveries} recoveries"
                )
            self.recoveries += 1
            self._recovery_phase, self._recovery_until = "back off", now + p.backoff_s
            return self._recover(now)
        target = lookahead_point(self.path, xy, p.lookahead, nxt)
        error = _wrap(math.atan2(target[1] - xy[1], target[0] - xy[0]) - pose[2])
        angular = float(np.clip(p.heading_gain * error, -p.max_angular, p.max_angular))
        if abs(error) > p.rotate_in_place_angle:
            return Command(0.0, angular, FollowStatus.ACTIVE, "rotate", error)
        linear = min(p.max_linear, remaining) * math.cos(error)
        return Command(
            float(linear),
            angular,
            FollowStatus.ACTIVE,
            heading_error=error,
            cross_track_m=float(np.linalg.norm(nearest - xy)),
        )

    def _recover(self, now: float) -> Command:
        p = self.params
        if now < self._recovery_until:
            if self._recovery_phase == "back off":
                return Command(-p.backoff_speed, 0.0, FollowStatus.RECOVERING, "back off")
            return Command(0.0, p.max_angular, FollowStatus.RECOVERING, "rotate")
        if self._recovery_phase == "back off":
            self._recovery_phase, self._recovery_until = "rotate", now + p.rotate_s
            return Command(0.0, p.max_angular, FollowStatus.RECOVERING, "rotate")
        self._recovery_phase = ""
        self._progress = []
        return Command(0.0, 0.0, FollowStatus.REPLAN, f"recovery {self.recoveries} done: re-plan")
