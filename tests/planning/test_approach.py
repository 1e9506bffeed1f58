"""The one approach (planning/approach.py) the planner node and the in-process world run: which
viewpoints it tries, when it stops, and how its end reads as one navigation. The host is a
scripted base on a line: each drive ends where its script says, having driven the metres from
where it stood."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

from sg_search.planning.approach import XY, ApproachDriver, Odometer, Reached, approach
from sg_search.planning.navigator import NavError, NavigatorParams, NavResult

PARAMS = NavigatorParams(detour_factor=2.0, detour_slack_m=2.0)
RESOLUTION = 0.05


class ScriptedBase:
    """Offers ``goals`` in turn (less the failed ones); each drive ends as ``ends`` says: where the
    base stops (None: at the goal) and with what code and detour flag."""

    def __init__(self, goals: Sequence[XY], ends: Sequence[tuple[XY | None, NavError, bool]]) -> None:
        self.goals, self.ends = list(goals), list(ends)
        self.at: XY = (0.0, 0.0)
        self.driven = 0.0
        self.asked: list[list[XY]] = []
        self.allowances: list[float] = []

    def choose(self, failed: Sequence[XY]) -> XY | None:
        self.asked.append(list(failed))
        return next((g for g in self.goals if g not in failed), None)

    def drive(self, goal: XY, allowance: float) -> NavResult:
        self.allowances.append(allowance)
        stop, code, detour = self.ends.pop(0)
        end = goal if stop is None else stop
        metres = math.dist(self.at, end)
        self.at, self.driven = end, self.driven + metres
        return NavResult(code, "", metres, (*end, 0.0), detour)

    def driver(self) -> ApproachDriver:
        return ApproachDriver(
            self.choose, self.drive, lambda: self.at, lambda g: math.dist(self.at, g), lambda: self.driven
        )


def test_the_first_viewpoint_reached_ends_the_approach() -> None:
    base = ScriptedBase([(3.0, 0.0)], [(None, NavError.NONE, False)])
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert end.arrived and end.code() == NavError.NONE and end.message() == ""
    assert base.asked == [[]] and base.allowances == [pytest.approx(2.0 * 3.0 + 2.0)]


def test_a_drive_that_stops_where_the_planner_snapped_its_goal_tries_the_next_viewpoint() -> None:
    """0.3 m short of the first viewpoint is not there (tolerance 0.1 + a cell); the second is
    chosen away from the first and reached; the tries share the first way's detour limit."""
    base = ScriptedBase(
        [(3.0, 0.0), (3.0, 1.0)], [((2.7, 0.0), NavError.NONE, False), (None, NavError.NONE, False)]
    )
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert end.arrived
    assert base.asked == [[], [(3.0, 0.0)]]
    assert base.allowances == [pytest.approx(8.0), pytest.approx(8.0 - 2.7)]


def test_a_drive_within_tolerance_and_a_cell_has_arrived() -> None:
    base = ScriptedBase([(3.0, 0.0)], [((2.86, 0.0), NavError.NONE, False)])
    assert approach(base.driver(), 0.1, RESOLUTION, PARAMS).arrived


def test_a_detour_gives_the_approach_up_at_once_as_no_way() -> None:
    base = ScriptedBase([(3.0, 0.0), (3.0, 1.0)], [((1.0, 0.0), NavError.NO_VALID_PATH, True)])
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert (end.arrived, end.gave_up, end.no_way) == (False, True, True)
    assert end.code() == NavError.NO_VALID_PATH and len(base.asked) == 1


def test_tries_that_drive_past_the_shared_limit_give_up_not_as_no_way() -> None:
    """The first way is 1 m (limit 4 m); the drive stopped after 4.5 m the other way (the host ends
    it past its allowance): given up, a detour over the tries, not a want of any way."""
    base = ScriptedBase([(1.0, 0.0), (1.0, 1.0)], [((-4.5, 0.0), NavError.CANCELED, False)])
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert (end.arrived, end.gave_up, end.no_way) == (False, True, False)
    assert end.code() == NavError.NO_VALID_PATH and "detour limit" in end.message()


def test_no_viewpoint_at_all_is_no_way() -> None:
    end = approach(ScriptedBase([], []).driver(), 0.1, RESOLUTION, PARAMS)
    assert end == Reached(False, no_way=True) and end.code() == NavError.NO_VALID_PATH


def test_three_viewpoints_stopped_short_end_the_approach_stuck_after_three_tries() -> None:
    goals = [(3.0, 0.0), (3.0, 0.5), (3.0, 1.0), (3.0, 1.5)]
    ends = [((2.5, g[1]), NavError.NONE, False) for g in goals[:3]]
    base = ScriptedBase(goals, ends)
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert not end.arrived and not end.gave_up and not end.no_way
    assert end.code() == NavError.STUCK and "stopped short" in end.message()
    assert len(base.asked) == 3


def test_a_stuck_drive_then_no_viewpoint_left_keeps_the_drives_failure() -> None:
    base = ScriptedBase([(3.0, 0.0)], [((1.0, 0.0), NavError.STUCK, False)])
    end = approach(base.driver(), 0.1, RESOLUTION, PARAMS)
    assert not end.no_way and end.code() == NavError.STUCK


def test_the_odometer_counts_drives_and_legs_but_not_pose_jumps() -> None:
    odometer = Odometer(jump_m=1.0)
    for x in (0.0, 0.5, 1.0, 4.0, 4.5):  # 1.0 -> 4.0 is a localisation reset
        odometer.at((x, 0.0, 0.0))
    assert odometer.leg_m == pytest.approx(1.5)
    odometer.ended(NavResult(NavError.NONE, path_length=1.5))
    assert (odometer.total_m, odometer.leg_m) == (1.5, 0.0)
    odometer.at((9.0, 0.0))
    assert odometer.leg_m == 0.0  # a new drive's first pose
