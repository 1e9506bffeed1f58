"""The one navigator: plan over the occupancy map, follow the path, re-plan, recover, give up.

The frontier planner node hosts it with a base that publishes ``cmd_vel`` and reads TF; the
in-process simulator world hosts it with :class:`~sg_search.planning.discrete.DiscreteBase`,
which quantises the same velocity commands into Habitat's actions. Poses are (x, y, yaw) in
``map`` [m, rad]; times are seconds of the base's clock (wall or simulated).

Planning tries the clearances of ``NavigatorParams.planners`` safest first (a narrow door is
passed with less margin only when the safer plan reaches nothing); a clearance at which the
base's own cell is not traversable starts from the nearest cell that is, but not from one
across an occupied cell (behind a wall). A plan is renewed every
``replan_period_s`` (the map grows while driving), after a recovery, after a blocked move
and after a pose jump (localisation reset). A navigation whose way (driven + still planned)
grows beyond ``detour_factor`` times its shortest plan plus ``detour_slack_m`` ends with
NO_VALID_PATH (``NavResult.detour``): the map has shown the goal to be much farther than it
looked when it was chosen, so the reasoner chooses again instead of driving the detour (a
viewpoint beside the goal lies behind the same detour, as do the ones a retry would choose).

A base can squeeze into a gap that the map, seen closer, shows too narrow for it: then every
plan fails at every clearance although the base drove in. When the region the base is placed
in at the least clearance holds less than ``escape_area_m2`` of floor, the navigator drives back
along its own track (the points it passed, every ``TRACK_SPACING_M``, across navigations) to
the first point in a larger region, once per navigation, and plans again from there: the base
fitted there on its way in, whatever the map shows now.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from sg_search.geometry import Pose2D
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import OCCUPIED
from sg_search.planning.follower import Command, FollowerParams, FollowStatus, PathFollower
from sg_search.planning.geodesic import (
    Cell,
    DistanceField,
    PlannerParams,
    PlanningError,
    line_is_free,
    snap_to_free,
    traversable,
)

TRACK_SPACING_M = 0.1  # [m] between the points of the track a base drives back along out of a pocket
TRACK_POINTS = 300  # the track's newest points kept (30 m)


class NavError(IntEnum):
    """Result codes; the values equal the NavigateTo action's constants."""

    NONE = 0
    UNKNOWN = 1
    NO_VALID_PATH = 2
    UNKNOWN_NODE = 3
    STUCK = 4
    TIMEOUT = 5
    CANCELED = 6
    INVALID_GOAL = 7


@dataclass(frozen=True)
class NavigatorParams:
    """Clearances (safest first), controller, and limits (module docstring for units)."""

    planners: tuple[PlannerParams, ...] = (PlannerParams(),)
    follower: FollowerParams = field(default_factory=FollowerParams)
    timeout_s: float = 120.0
    replan_period_s: float = 5.0
    pose_jump_m: float = 1.0
    detour_factor: float = 2.0
    detour_slack_m: float = 2.0
    escape_area_m2: float = 0.5

    def __post_init__(self) -> None:
        if not self.planners:
            raise ValueError("the navigator needs at least one planner clearance")
        if not self.timeout_s > 0 or not self.replan_period_s > 0:
            raise ValueError("navigator timeout_s and replan_period_s must be positive")
        if self.detour_factor != 0 and self.detour_factor < 1:
            raise ValueError(
                f"navigator detour_factor must be 0 (never give up) or >= 1, not {self.detour_factor}"
            )
        if not self.escape_area_m2 >= 0:
            raise ValueError(f"navigator escape_area_m2 must be >= 0 (0: never), not {self.escape_area_m2}")


@dataclass(frozen=True)
class NavResult:
    """How one navigation ended; ``path_length`` [m] driven."""

    code: NavError
    message: str = ""
    path_length: float = 0.0
    final_pose: Pose2D | None = None
    detour: bool = False  # given up (NO_VALID_PATH) because the way grew into a detour

    @property
    def success(self) -> bool:
        """True when the base arrived."""
        return self.code == NavError.NONE


class Base(Protocol):
    """A mobile base the navigator drives."""

    def pose(self) -> Pose2D | None:
        """The base's pose in ``map``, or None while unknown."""
        ...

    def command(self, command: Command) -> bool:
        """Apply one velocity command for one control period; False if the base reports that
        it was blocked (a bumper, a refused simulator move)."""
        ...

    def now(self) -> float:
        """The base's clock [s]."""
        ...


Feedback = Callable[[Pose2D, float, int], None]
"""(pose, straight-line metres to the goal, recoveries so far)."""


class Navigator:
    """Plans and follows over the map that ``states`` returns (see module docstring)."""

    def __init__(
        self, spec: GridSpec, states: Callable[[], NDArray[np.int8]], params: NavigatorParams | None = None
    ) -> None:
        self.spec = spec
        self.states = states
        self.params = params or NavigatorParams()
        self.track: deque[tuple[float, float]] = deque(maxlen=TRACK_POINTS)  # [m] oldest first
        self.escapes = 0  # drives back out of a pocket begun (module docstring)

    def fields(self, start: tuple[float, float]) -> Iterator[tuple[NDArray[np.bool_], DistanceField]]:
        """(traversable cells, distance field from ``start``) per clearance, safest first, built
        as they are asked for; clearances at which ``start`` cannot be placed are left out."""
        states = self.states()
        for planner in self.params.planners:
            free = traversable(states, self.spec, planner)
            try:
                yield free, DistanceField(free, self.spec, start, planner)
            except PlanningError:
                continue

    def roomy(self, xy: tuple[float, float], free: NDArray[np.bool_] | None = None) -> bool:
        """True if ``xy`` [m] lies on a cell traversable at the safest clearance: not in a gap the
        base squeezed into at a lesser one. ``free``: those cells, when already computed."""
        if free is None:
            free = traversable(self.states(), self.spec, self.params.planners[0])
        cell = self.spec.to_cells(np.array([xy]))
        return bool(self.spec.inside(cell)[0] and free[cell[0, 0], cell[0, 1]])

    def parted_by(
        self, start: tuple[float, float], obstacles: NDArray[np.float64], min_area_m2: float
    ) -> bool:
        """True if obstacles in the cells under the (N, 2) points ``obstacles`` [m] would leave the
        base at ``start`` less floor to drive on at the least clearance (the traversable region
        it is placed in) than they cut it off from, or less than ``min_area_m2`` [m^2] where it
        has at least that much now: a bump in a doorway between the base and the rest of the
        house, or in the only way out of a dead end, met off-centre at a corner of the way. A
        pocket they close off beside a larger region the base keeps does not count."""
        states = self.states()
        cells = self.spec.to_cells(np.asarray(obstacles, dtype=float).reshape(-1, 2))
        cells = cells[self.spec.inside(cells)]
        if not len(cells):
            return False
        blocked = states.copy()
        blocked[cells[:, 0], cells[:, 1]] = OCCUPIED
        before, after = self._area(states, start), self._area(blocked, start)
        return after < before - after or after < min_area_m2 <= before

    def _area(self, states: NDArray[np.int8], start: tuple[float, float]) -> float:
        """The floor [m^2] of the region the base at ``start`` is placed in, at the least clearance."""
        return self._region_area(states)(start, self.params.planners[-1].snap_radius)

    def _region_area(self, states: NDArray[np.int8]) -> Callable[[tuple[float, float], float], float]:
        """A function of a point [m] and a snap radius [m]: the floor [m^2] of the region of
        ``states`` that the point is placed in (:func:`snap_to_free`) at the least clearance, 0
        where it cannot be placed."""
        planner = self.params.planners[-1]
        free = traversable(states, self.spec, planner)
        labels, _ = ndimage.label(free, structure=np.ones((3, 3), dtype=bool))
        areas = np.bincount(labels.ravel()) * self.spec.resolution**2
        areas[0] = 0.0  # not traversable

        def area(xy: tuple[float, float], snap_radius: float) -> float:
            try:
                return float(areas[labels[snap_to_free(free, self.spec, xy, snap_radius, "point")]])
            except PlanningError:
                return 0.0

        return area

    def way_out(self, start: tuple[float, float]) -> NDArray[np.float64] | None:
        """A path (N, 2) [m] from ``start`` back along the track to its newest point in a region
        of at least ``escape_area_m2`` at the least clearance; None when the base at ``start`` is
        not in a smaller one (a pocket), or the track does not leave it (module docstring)."""
        p = self.params
        if p.escape_area_m2 <= 0 or not self.track:
            return None
        area = self._region_area(self.states())
        if area(start, p.planners[-1].snap_radius) >= p.escape_area_m2:
            return None
        way = [start]
        for point in reversed(self.track):
            way.append(point)
            if area(point, 0.0) >= p.escape_area_m2:
                return np.array(way, dtype=float)
        return None

    def _escape(
        self, start: tuple[float, float], failure: tuple[NavError, str, bool], escaped: bool
    ) -> PathFollower | None:
        """A follower on :meth:`way_out` (to its end at the controller's own tolerance, whatever
        the navigation's), when ``failure`` is no way at all (not a detour), the base is in a
        pocket and the navigation has not ``escaped`` one already; else None."""
        code, _, detour = failure
        pocketed = code == NavError.NO_VALID_PATH and not detour and not escaped
        way_out = self.way_out(start) if pocketed else None
        if way_out is None:
            return None
        follower = PathFollower(self.params.follower)
        follower.set_path(way_out)
        return follower

    def _moved(self, last: Pose2D | None, pose: Pose2D) -> tuple[float, bool]:
        """The metres driven since ``last`` (0 after a pose jump: a localisation reset, not a
        drive) and whether the pose jumped; ``pose`` joins the track, which a jump (also one
        since the last navigation) forgets: it no longer leads here."""
        xy = (pose[0], pose[1])
        step = math.dist(last[:2], xy) if last is not None else 0.0
        jumped = step > self.params.pose_jump_m
        if jumped or (self.track and math.dist(self.track[-1], xy) > self.params.pose_jump_m):
            self.track.clear()
        if not self.track or math.dist(self.track[-1], xy) >= TRACK_SPACING_M:
            self.track.append(xy)
        return (0.0 if jumped else step), jumped

    def way(self, start: tuple[float, float], goal: tuple[float, float]) -> float:
        """The geodesic way [m] from ``start`` to ``goal`` at the safest clearance that reaches
        it, the clearance :meth:`plan` takes; inf when none does."""
        ways = (field.distance_to(goal) for _, field in self.fields(start))
        return next((w for w in ways if math.isfinite(w)), math.inf)

    def plan(self, start: tuple[float, float], goal: tuple[float, float]) -> NDArray[np.float64]:
        """A path (N, 2) [m] from ``start`` to ``goal`` at the safest clearance that reaches it;
        PlanningError (of the last clearance tried) when none does. A clearance at which the
        base's cell is not traversable starts from the nearest cell that is; not from one across
        an occupied cell (a wall, with unknown floor behind it): the base would drive into it."""
        error: PlanningError | None = None
        states = self.states()
        for planner in self.params.planners:
            try:
                free = traversable(states, self.spec, planner)
                field = DistanceField(free, self.spec, start, planner)
                self._require_joined(states, start, field.start)
                return field.path_to(goal)
            except PlanningError as exc:
                error = exc
        assert error is not None
        raise error

    def _require_joined(self, states: NDArray[np.int8], start: tuple[float, float], cell: Cell) -> None:
        """PlanningError unless the straight line from ``start`` [m] to the centre of ``cell``
        crosses no occupied cell (the base's own cell aside)."""
        own = self.spec.to_cells(np.array([start]))[0]
        if cell == (own[0], own[1]):
            return
        open_floor = states != OCCUPIED
        open_floor[own[0], own[1]] = True
        end = self.spec.to_metres(np.array([cell]))[0]
        if not line_is_free(open_floor, self.spec, np.asarray(start, dtype=float), end):
            raise PlanningError(f"start {start} is placed across an obstacle at this clearance")

    def _replan(
        self, start: tuple[float, float], goal: tuple[float, float], travelled: float, shortest: float
    ) -> tuple[NDArray[np.float64] | None, float, tuple[NavError, str, bool]]:
        """A new path and the shortest way so far [m] (driven ``travelled`` + planned, against
        ``shortest`` of the earlier plans); or None and why the navigation ends: no path, or a
        detour (the way grown too long against the shortest; the last element tells it)."""
        try:
            path = self.plan(start, goal)
        except PlanningError as exc:
            code = NavError.INVALID_GOAL if exc.outside_map else NavError.NO_VALID_PATH
            return None, shortest, (code, str(exc), False)
        way = travelled + _length(path)
        shortest = min(shortest, way)
        p = self.params
        if p.detour_factor > 0 and way > p.detour_factor * shortest + p.detour_slack_m:
            detour = f"a detour to {goal}: the way grew from {shortest:.1f} m to {way:.1f} m"
            return None, shortest, (NavError.NO_VALID_PATH, detour, True)
        return path, shortest, (NavError.NONE, "", False)

    def navigate(
        self,
        base: Base,
        goal: tuple[float, float],
        tolerance: float = 0.0,
        should_stop: Callable[[], bool] = lambda: False,
        on_path: Callable[[NDArray[np.float64]], None] | None = None,
        on_feedback: Feedback | None = None,
    ) -> NavResult:
        """Drive ``base`` to within ``tolerance`` [m] of ``goal`` (0: the follower's own), or of
        the path's end when the planner snapped the goal onto the nearest reachable cell. The
        base is stopped after, however the navigation ended."""
        p = self.params
        follower_params = p.follower if tolerance <= 0 else replace(p.follower, goal_tolerance=tolerance)
        follower = PathFollower(follower_params)
        start = base.now()
        travelled, last, planned_at = 0.0, None, -math.inf
        shortest = math.inf  # [m] the shortest way (driven + planned) of the plans so far
        escape: PathFollower | None = None  # driving back out of a pocket (module docstring)
        escaped = False  # once per navigation

        def ended(code: NavError, message: str = "", detour: bool = False) -> NavResult:
            return NavResult(code, message, travelled, last, detour)

        publish = on_path or (lambda _: None)
        try:
            while True:
                if should_stop():
                    return ended(NavError.CANCELED, "canceled")
                now = base.now()
                if now - start > p.timeout_s:
                    return ended(NavError.TIMEOUT, f"not there after {p.timeout_s:.0f} s")
                pose = base.pose()
                if pose is None:
                    base.command(Command(0.0, 0.0, FollowStatus.ACTIVE, "waiting for the pose"))
                    continue
                step, jumped = self._moved(last, pose)
                travelled += step
                planned_at = -math.inf if jumped else planned_at
                last = pose
                if math.hypot(goal[0] - pose[0], goal[1] - pose[1]) <= follower_params.goal_tolerance:
                    return ended(NavError.NONE)
                if now - planned_at >= p.replan_period_s and escape is None:
                    path, shortest, failure = self._replan(pose[:2], goal, travelled, shortest)
                    if path is None:
                        escape = self._escape(pose[:2], failure, escaped)
                        if escape is None:
                            return ended(*failure)
                        escaped, path = True, escape.path
                        self.escapes += 1
                    else:
                        follower.set_path(path, keep_recoveries=True)
                    planned_at = now
                    publish(path)
                command = (escape or follower).command(pose, now)
                if command.status == FollowStatus.ARRIVED and escape is not None:
                    escape, planned_at = None, -math.inf  # out of the pocket: plan from here
                    continue
                if command.status in (FollowStatus.ARRIVED, FollowStatus.STUCK):
                    arrived = command.status == FollowStatus.ARRIVED
                    return ended(NavError.NONE if arrived else NavError.STUCK, command.note)
                if command.status == FollowStatus.REPLAN:
                    planned_at = -math.inf
                    continue
                if not base.command(command):
                    planned_at = -math.inf  # the map now holds what blocked it
                if on_feedback is not None:
                    on_feedback(pose, math.hypot(goal[0] - pose[0], goal[1] - pose[1]), follower.recoveries)
        finally:  # as turn_towards: a velocity base would go on with the last command
            base.command(Command(0.0, 0.0, FollowStatus.STOP, "stop"))


def _length(path: NDArray[np.float64]) -> float:
    """Length [m] of a polyline (N, 2)."""
    return float(np.sum(np.hypot(*np.diff(path, axis=0).T))) if len(path) > 1 else 0.0


def turn_towards(
    base: Base,
    heading: float,
    tolerance: float,
    angular_speed: float,
    timeout_s: float,
    should_stop: Callable[[], bool] = lambda: False,
) -> bool:
    """Turn ``base`` in place until its yaw is within ``tolerance`` [rad] of ``heading`` [rad,
    ``map``]; False when out of time, stopped or without a pose. The base is stopped after."""
    start = base.now()
    try:
        while base.now() - start <= timeout_s and not should_stop():
            pose = base.pose()
            if pose is None:
                return False
            error = math.remainder(heading - pose[2], math.tau)
            if abs(error) <= tolerance:
                return True
            base.command(
                Command(0.0, math.copysign(angular_speed, error), FollowStatus.ACTIVE, "turn", error)
            )
        return False
    finally:
        base.command(Command(0.0, 0.0, FollowStatus.STOP, "stop"))
