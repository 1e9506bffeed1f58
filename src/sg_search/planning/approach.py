"""One approach to an object's viewpoint: the viewpoints tried in turn, sharing one detour limit.

The frontier planner node runs it for a NavigateTo goal that names a node; the in-process world
runs it for the executor's navigate skill: the same tries, the same ends. Positions are (x, y)
in ``map`` [m].

A try drives to the viewpoint that ``choose`` gives, away from the goals of the tries that failed
before it (the map seen on the way, the far side of a bed or a closed door, changes which ones
are reachable). A drive that ends where the planner snapped an unreachable goal onto the
nearest reachable cell, farther than the tolerance from the viewpoint, did not reach it. The
tries share the navigator's detour limit: once the metres driven for this approach pass
``detour_factor`` x the first viewpoint's way over the known map + ``detour_slack_m`` (no limit
while no way is known) the approach is given up, as it is when one drive ends in a detour or
runs out of time: a viewpoint beside it lies behind the same detour, or on the routes the base
went back and forth between.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sg_search.planning.navigator import NavError, NavigatorParams, NavResult

XY = tuple[float, float]
APPROACH_TRIES = 3  # viewpoints one approach drives to at most


@dataclass(frozen=True)
class Reached:
    """How one approach ended: ``arrived``; else ``gave_up`` (its way grew into a detour or it ran
    out of time: not tried again) and ``no_way`` (every try ended because the planner found no
    way over the map, or no viewpoint was left: not the robot's fault). ``last``: the last
    drive's result, None when no drive began."""

    arrived: bool
    gave_up: bool = False
    no_way: bool = False
    last: NavResult | None = None

    def code(self) -> NavError:
        """The approach told as one navigation's result code: NONE when it arrived;
        NO_VALID_PATH for no way, or for a detour over the tries; the last drive's failure
        otherwise, STUCK when that drive ended short of a viewpoint the planner snapped."""
        if self.arrived:
            return NavError.NONE
        if self.no_way or self.last is None:
            return NavError.NO_VALID_PATH
        if self.last.code not in (NavError.NONE, NavError.CANCELED):
            return self.last.code
        return NavError.NO_VALID_PATH if self.gave_up else NavError.STUCK

    def message(self) -> str:
        """Why the approach ended, in words ("" when it arrived)."""
        if self.arrived:
            return ""
        if self.last is None:
            return "no reachable viewpoint"
        if self.gave_up and self.last.code in (NavError.NONE, NavError.CANCELED):
            return "given up: the tries drove past the approach's detour limit"
        if self.last.code == NavError.NONE:
            return "stopped short of every viewpoint tried: the planner could not reach them"
        return self.last.message


@dataclass(frozen=True)
class ApproachDriver:
    """What an approach needs of its host (see module docstring).

    Attributes:
        choose: the viewpoint for a try, away from the failed goals given; None when none is left.
        drive: drives to a goal [m] with at most so many metres more [m] to drive.
        position: the base's position now [m].
        way: the geodesic way [m] from the base to a goal over the known map (inf: none).
        odometer: metres driven so far [m], a running total.
    """

    choose: Callable[[Sequence[XY]], XY | None]
    drive: Callable[[XY, float], NavResult]
    position: Callable[[], XY]
    way: Callable[[XY], float]
    odometer: Callable[[], float]


def approach(host: ApproachDriver, tolerance: float, resolution: float, params: NavigatorParams) -> Reached:
    """Drive to the viewpoints ``host.choose`` gives, in turn (module docstring), until one is
    reached within ``tolerance`` [m] (+ a ``resolution`` [m] cell), at most
    :data:`APPROACH_TRIES`."""
    failed: list[XY] = []
    start, limit, no_way = host.odometer(), math.inf, True
    last: NavResult | None = None
    for _ in range(APPROACH_TRIES):
        goal = host.choose(failed)
        if goal is None:
            return Reached(False, no_way=no_way, last=last)
        if not failed and params.detour_factor > 0:
            limit = params.detour_factor * host.way(goal) + params.detour_slack_m
        last = host.drive(goal, limit - (host.odometer() - start))
        # the planner may snap an unreachable goal to the nearest reachable cell: not the viewpoint
        if last.success and math.dist(host.position(), goal) <= tolerance + resolution:
            return Reached(True, last=last)
        no_way = no_way and last.code == NavError.NO_VALID_PATH
        if last.detour or last.code == NavError.TIMEOUT or host.odometer() - start > limit:
            return Reached(False, gave_up=True, no_way=no_way, last=last)
        failed.append(goal)
    return Reached(False, no_way=no_way, last=last)


class Odometer:
    """Metres a base drove [m] over an approach's drives: ``total_m`` (each finished drive's
    own count, :attr:`NavResult.path_length`) and ``leg_m``, the drive under way so far, from the
    poses it reports (a step longer than ``jump_m`` is a localisation reset, not a drive, as the
    navigator counts it)."""

    def __init__(self, jump_m: float) -> None:
        self.jump_m = jump_m
        self.total_m = 0.0
        self.leg_m = 0.0
        self._last: XY | None = None

    def at(self, pose: Sequence[float]) -> None:
        """The base's pose now ([m], ``map``), during a drive."""
        xy = (float(pose[0]), float(pose[1]))
        step = math.dist(self._last, xy) if self._last is not None else 0.0
        self.leg_m += step if step <= self.jump_m else 0.0
        self._last = xy

    def ended(self, result: NavResult) -> NavResult:
        """A drive ended: its metres join the total, the next leg counts from 0; ``result`` back."""
        self.total_m += result.path_length
        self.leg_m, self._last = 0.0, None
        return result
