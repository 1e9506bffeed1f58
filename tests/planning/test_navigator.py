"""The one navigator over a known map, driving a discrete base (Habitat's actions) and a
velocity base: it arrives around a wall, only ever takes forward/turn actions, re-plans after
a blocked move, and ends with the right code when there is no path, when canceled and when
out of time."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from floor_maps import SPEC, doorway_floor, wall_floor, walled_floor

from sg_search.geometry import Pose2D
from sg_search.mapping.occupancy import FREE, OCCUPIED, UNKNOWN
from sg_search.planning.discrete import DiscreteBase, DiscreteParams
from sg_search.planning.follower import Command, FollowerParams, FollowStatus
from sg_search.planning.geodesic import PlannerParams
from sg_search.planning.navigator import NavError, Navigator, NavigatorParams
from sg_search.planning.stall import disc_points

PARAMS = NavigatorParams(planners=(PlannerParams(robot_radius=0.25), PlannerParams(robot_radius=0.2)))


class GridActuator:
    """Test double of a simulator's base: discrete moves in 2 cm steps that stop at occupied
    cells of ``truth`` (a base cannot run in a unit test)."""

    def __init__(self, truth: np.ndarray, pose: Pose2D) -> None:
        self.truth, self.xy, self.yaw = truth, np.array(pose[:2]), pose[2]
        self.actions: list[tuple[float, float]] = []

    def pose(self) -> Pose2D:
        return (float(self.xy[0]), float(self.xy[1]), self.yaw)

    def act(self, forward_m: float, turn_rad: float) -> bool:
        self.actions.append((forward_m, turn_rad))
        self.yaw = math.remainder(self.yaw + turn_rad, math.tau)
        heading = np.array([math.cos(self.yaw), math.sin(self.yaw)])
        for _ in range(round(forward_m / 0.02)):
            nxt = self.xy + heading * 0.02
            row, col = SPEC.to_cells(nxt)[0]
            if self.truth[row, col] == OCCUPIED:
                return False
            self.xy = nxt
        return True


def test_a_discrete_base_goes_round_the_wall_in_habitat_actions() -> None:
    states = wall_floor()
    navigator = Navigator(SPEC, lambda: states, PARAMS)
    actuator = GridActuator(states, (2.0, 2.0, math.pi))  # facing away from the goal
    base = DiscreteBase(actuator, PARAMS.follower)
    result = navigator.navigate(base, (8.0, 2.0), tolerance=0.3)
    assert result.success, result.message
    assert math.dist(actuator.pose()[:2], (8.0, 2.0)) <= 0.3
    assert 13.0 < result.path_length < 17.0  # round the wall's end at y = 8 m (2 x 6.9 m), not through (6 m)
    turn = DiscreteParams().turn_step_rad
    for forward, turn_rad in actuator.actions:
        assert (forward == 0.0 and math.isclose(abs(turn_rad), turn)) or (
            0.0 < forward <= 0.25 and turn_rad == 0.0
        )


def _unseen_wall() -> tuple[np.ndarray, np.ndarray, list[Pose2D], type[GridActuator]]:
    """The wall map (truth), a map that has not seen the wall (known), and an actuator whose
    bumper reveals the truth within 0.5 m (like the simulated robot's)."""
    truth = wall_floor()
    known = np.full(SPEC.shape, FREE, dtype=np.int8)  # the map has not seen the wall yet
    known[truth == OCCUPIED] = FREE
    known[:, [0, -1]] = OCCUPIED
    known[[0, -1], :] = OCCUPIED
    blocked: list[Pose2D] = []

    class BumperActuator(GridActuator):
        def act(self, forward_m: float, turn_rad: float) -> bool:
            moved = super().act(forward_m, turn_rad)
            if not moved:  # the truth within 0.5 m becomes known, like the simulated robot's bumper
                blocked.append(self.pose())
                row, col = SPEC.to_cells(self.xy)[0]
                window = (slice(max(0, row - 10), row + 11), slice(max(0, col - 10), col + 11))
                known[window] = truth[window]
            return moved

    return truth, known, blocked, BumperActuator


def test_a_wall_the_map_does_not_know_blocks_and_the_navigator_replans() -> None:
    truth, known, blocked, BumperActuator = _unseen_wall()
    actuator = BumperActuator(truth, (2.0, 2.0, 0.0))
    # simulated seconds (bumps cost time); any detour is driven (the default gives it up: below)
    patient = NavigatorParams(PARAMS.planners, timeout_s=600.0, detour_factor=0.0)
    result = Navigator(SPEC, lambda: known, patient).navigate(
        DiscreteBase(actuator, PARAMS.follower), (8.0, 2.0), 0.3
    )
    assert blocked, "the straight line through the unseen wall was never tried"
    assert result.success, result.message
    assert math.dist(actuator.pose()[:2], (8.0, 2.0)) <= 0.3


def test_a_goal_that_turns_out_far_is_given_up_not_driven_to() -> None:
    """The wall found on the way makes the way 6 m -> ~17 m: with detour_factor 2 (+ 2 m) the
    navigation ends NO_VALID_PATH at the wall instead of driving round it."""
    truth, known, blocked, BumperActuator = _unseen_wall()
    actuator = BumperActuator(truth, (2.0, 2.0, 0.0))
    params = NavigatorParams(PARAMS.planners, timeout_s=600.0)  # detour_factor 2, detour_slack_m 2
    result = Navigator(SPEC, lambda: known, params).navigate(
        DiscreteBase(actuator, PARAMS.follower), (8.0, 2.0), 0.3
    )
    assert blocked and result.code == NavError.NO_VALID_PATH and result.detour, result
    assert "detour" in result.message
    # the bumper reveals the wall 0.5 m at a time, so the way grows as the robot feels along it;
    # it gives up on this side of the wall, long before the ~17 m way round it is driven
    assert result.path_length < 12.0 and actuator.pose()[0] < 5.0, (result, actuator.pose())


def test_no_path_cancel_and_timeout_end_with_their_codes() -> None:
    closed = wall_floor(gap=False)
    navigator = Navigator(SPEC, lambda: closed, PARAMS)
    base = DiscreteBase(GridActuator(closed, (2.0, 2.0, 0.0)), PARAMS.follower)
    walled_off = navigator.navigate(base, (8.0, 2.0))
    assert walled_off.code == NavError.NO_VALID_PATH and not walled_off.detour  # no way at all
    assert navigator.navigate(base, (30.0, 2.0)).code == NavError.INVALID_GOAL
    open_map = wall_floor()
    navigator = Navigator(SPEC, lambda: open_map, PARAMS)
    assert navigator.navigate(base, (8.0, 2.0), should_stop=lambda: True).code == NavError.CANCELED
    quick = Navigator(SPEC, lambda: open_map, NavigatorParams(PARAMS.planners, timeout_s=5.0))
    timed = quick.navigate(DiscreteBase(GridActuator(open_map, (2.0, 2.0, 0.0)), PARAMS.follower), (8.0, 2.0))
    assert timed.code == NavError.TIMEOUT and 0.0 < timed.path_length < 8.0


class UnicycleBase:
    """Test double of a velocity-controlled base: integrates commands for ``dt`` seconds."""

    def __init__(self, pose: Pose2D, dt: float = 0.1) -> None:
        self.x, self.y, self.yaw, self.dt, self.t = *pose, dt, 0.0
        self.last = Command(0.0, 0.0, FollowStatus.ACTIVE, "")

    def pose(self) -> Pose2D:
        return (self.x, self.y, self.yaw)

    def command(self, command: Command) -> bool:
        self.last = command
        self.x += command.linear * math.cos(self.yaw) * self.dt
        self.y += command.linear * math.sin(self.yaw) * self.dt
        self.yaw += command.angular * self.dt
        self.t += self.dt
        return True

    def now(self) -> float:
        return self.t


def test_the_same_navigator_drives_a_velocity_base() -> None:
    states = wall_floor()
    params = NavigatorParams(PARAMS.planners, FollowerParams(goal_tolerance=0.2))
    base = UnicycleBase((2.0, 2.0, 0.0))
    feedback: list[float] = []
    result = Navigator(SPEC, lambda: states, params).navigate(
        base, (8.0, 2.0), on_feedback=lambda pose, remaining, recoveries: feedback.append(remaining)
    )
    # within the tolerance of the planned goal, which lies on a cell centre (0.05 m cells)
    assert result.success and math.dist(base.pose()[:2], (8.0, 2.0)) <= 0.2 + 0.05
    assert feedback[0] > feedback[-1] and result.final_pose is not None
    assert (base.last.linear, base.last.angular) == (0.0, 0.0)  # it does not drive on


def test_a_velocity_base_is_stopped_however_the_navigation_ends() -> None:
    """Canceled mid-drive (its last command moved it) and out of time, the base is left with a
    zero command: it does not go on at the last velocity."""
    states = wall_floor()
    base = UnicycleBase((2.0, 2.0, 0.0))
    steps = iter(range(30))
    navigator = Navigator(SPEC, lambda: states, PARAMS)
    canceled = navigator.navigate(base, (8.0, 2.0), should_stop=lambda: next(steps, 30) >= 30)
    assert canceled.code == NavError.CANCELED and canceled.path_length > 0.0
    assert (base.last.linear, base.last.angular, base.last.status) == (0.0, 0.0, FollowStatus.STOP)
    quick = Navigator(SPEC, lambda: states, NavigatorParams(PARAMS.planners, timeout_s=1.0))
    assert quick.navigate(base, (8.0, 2.0)).code == NavError.TIMEOUT
    assert (base.last.linear, base.last.angular) == (0.0, 0.0)


def test_roomy_is_the_safest_clearance_not_a_lesser_one() -> None:
    """0.22 m from the wall the base fits at the lesser 0.2 m clearance but not the safest
    0.25 m: it is not roomy there; in the open it is."""
    states = wall_floor()
    navigator = Navigator(SPEC, lambda: states, PARAMS)
    assert navigator.roomy((2.0, 2.0))
    assert not navigator.roomy((5.0 - 0.22, 2.0))
    assert not navigator.roomy((30.0, 2.0))  # off the map


def test_the_way_is_measured_at_the_safest_clearance_that_reaches_the_goal() -> None:
    """Through a 0.45 m gap the base fits at the lesser 0.2 m radius only: the way is the one
    the navigator plans there (finite: the straight line through the gap, to within a cell),
    not the safest field's inf."""
    states = wall_floor(gap=False)
    states[int(4.0 / 0.05) : int(4.45 / 0.05), 100] = FREE  # a 0.45 m gap at y = 4 m
    navigator = Navigator(SPEC, lambda: states, PARAMS)
    start, goal = (4.0, 4.2), (6.0, 4.2)
    safest = next(navigator.fields(start))[1]
    assert math.isinf(safest.distance_to(goal))
    way = navigator.way(start, goal)
    assert way == pytest.approx(2.0, abs=0.1)  # straight through the gap (cell centres)
    path = navigator.plan(start, goal)
    assert way == pytest.approx(float(np.sum(np.hypot(*np.diff(path, axis=0).T))), abs=0.2)
    assert math.isinf(navigator.way(start, (30.0, 4.2)))  # off the map


def test_an_obstacle_parts_the_base_only_where_it_would_keep_less_floor_than_it_loses() -> None:
    """A dead-end corridor 0.6 m wide (x 4.7-5.3 m, open at y = 3 m): an obstacle on its middle
    ahead of the base leaves it 0.16 m^2 and cuts it off from the room; one in the open room, or
    one in a corridor already closed by the map, parts it from nothing that counts. A wall with
    a doorway 0.9 m wide between a room of 3 m x 10 m and one of 7 m x 10 m: an obstacle in the
    doorway cuts the base in the smaller room off from the larger (test 13, session 83: a disc
    marked in a doorway left the base 10.8 of 532 m^2), not the base in the larger one."""
    states = walled_floor()
    states[:60, [94, 106]] = OCCUPIED  # the corridor's walls, up to y = 3 m
    navigator = Navigator(SPEC, lambda: states, PARAMS)
    assert navigator.parted_by((5.0, 1.0), np.array([(5.0, 1.5)]), min_area_m2=1.0)
    assert navigator.parted_by((5.0, 1.0), np.array([(5.0, 1.5)]), min_area_m2=0.1)  # it loses the room
    assert not navigator.parted_by((2.0, 6.0), np.array([(2.25, 6.0)]), min_area_m2=1.0)
    states[40, 94:107] = OCCUPIED  # the map closes the corridor at y = 2 m: the base is shut in already
    assert not navigator.parted_by((5.0, 1.0), np.array([(5.0, 1.5)]), min_area_m2=1.0)

    rooms = doorway_floor(0.9)  # a wall at x = 3 m, the doorway at y = 5.0-5.9 m
    navigator = Navigator(SPEC, lambda: rooms, PARAMS)
    doorway = disc_points((3.0, 5.45), 0.1, 0.05)
    assert navigator.parted_by((2.55, 5.45), doorway, min_area_m2=1.0)
    assert not navigator.parted_by((3.45, 5.45), doorway, min_area_m2=1.0)


def _corridor(ledge: bool) -> np.ndarray:
    """The free square with a dead-end corridor 0.45 m wide from x = 5 to 7.5 m along y = 5 m,
    cut into a block 0.8 m thick on either side (no free cell within the planner's 1 m snap of
    its end); ``ledge``: the map has since seen an obstacle across its middle at x = 6 m that
    the true corridor does not hold (what a closer look at a gap the base squeezed into shows)."""
    states = wall_floor(gap=True)
    states[:, 100] = FREE  # no wall at x = 5 m
    states[79:122, 100:170] = OCCUPIED  # y = 3.95 .. 6.1 m, x = 5 .. 8.5 m
    states[96:105, 100:150] = FREE  # the corridor: y = 4.8 .. 5.25 m, x = 5 .. 7.5 m
    if ledge:
        states[99:102, 120] = OCCUPIED
    return states


@pytest.mark.parametrize("escape_area_m2", [0.5, 0.0])
def test_a_base_in_a_pocket_of_the_map_drives_back_along_its_track(escape_area_m2: float) -> None:
    """The base drove to the corridor's end; the map then cut the corridor: the base's region
    holds 0.05 m^2 and no plan leaves it at any clearance. It drives back the way it came and
    reaches a goal in the open; with escape_area_m2 0 it gives up where it stands."""
    truth = _corridor(ledge=False)
    known = [truth]
    navigator = Navigator(SPEC, lambda: known[0], replace(PARAMS, escape_area_m2=escape_area_m2))
    actuator = GridActuator(truth, (2.0, 5.0, 0.0))
    base = DiscreteBase(actuator, PARAMS.follower)
    assert navigator.navigate(base, (7.2, 5.0), tolerance=0.15).success
    known[0] = _corridor(ledge=True)
    result = navigator.navigate(base, (2.0, 8.0), tolerance=0.3)
    if escape_area_m2 > 0:
        assert result.success, result
        assert math.dist(actuator.pose()[:2], (2.0, 8.0)) <= 0.3
        assert result.path_length > 2.0 + 3.0 and navigator.escapes == 1  # back out, then up to the goal
    else:
        assert result.code == NavError.NO_VALID_PATH and result.path_length == 0.0, result
        assert actuator.pose()[0] > 6.5 and navigator.escapes == 0


def test_a_plan_does_not_start_across_a_wall_from_the_base() -> None:
    """A corridor 0.5 m wide (x 4.5-5.0 m), unknown floor behind its right wall: at the safer
    clearance (0.25 m) no cell in it is traversable, and the nearest one that is lies behind one
    of its walls. A plan from there sent the base into the wall at every re-plan (val 33: 535 bumps at one
    pose); the plan runs along the corridor at the clearance the base has in it."""
    states = np.full(SPEC.shape, FREE, dtype=np.int8)
    states[:, 101:] = UNKNOWN
    states[:, 100] = OCCUPIED
    states[40:, 90] = OCCUPIED
    states[[0, -1], :100] = OCCUPIED
    states[:, 0] = OCCUPIED
    snapping = replace(PARAMS, planners=tuple(replace(p, snap_radius=1.0) for p in PARAMS.planners))
    path = Navigator(SPEC, lambda: states, snapping).plan((4.8, 5.0), (4.78, 9.0))
    assert math.dist(path[0], (4.8, 5.0)) < 0.1
    assert np.all((path[:, 0] > 4.5) & (path[:, 0] < 5.0)), path
