"""The discrete base (forward 0.25 m, turn 30 degrees) follows a path that lies between two of
its headings without chattering, and stays near the path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sg_search.geometry import Pose2D
from sg_search.planning.discrete import DiscreteBase, DiscreteParams
from sg_search.planning.follower import Command, FollowerParams, FollowStatus, PathFollower


class OpenFloor:
    """A kinematic actuator on an empty floor (every move succeeds)."""

    def __init__(self) -> None:
        self.xyyaw = [0.0, 0.0, 0.0]
        self.actions: list[tuple[float, float]] = []

    def pose(self) -> Pose2D:
        return (self.xyyaw[0], self.xyyaw[1], self.xyyaw[2])

    def act(self, forward_m: float, turn_rad: float) -> bool:
        x, y, yaw = self.xyyaw
        yaw += turn_rad
        self.xyyaw = [x + forward_m * math.cos(yaw), y + forward_m * math.sin(yaw), yaw]
        self.actions.append((forward_m, turn_rad))
        return True


def _follow(angle_deg: float, params: DiscreteParams) -> tuple[OpenFloor, float, FollowStatus]:
    """Follow a 5 m straight path at ``angle_deg`` from the base's heading; (actuator, largest
    distance [m] from the path, how it ended)."""
    floor, follower = OpenFloor(), PathFollower()
    direction = np.array([math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))])
    follower.set_path(np.array([[0.0, 0.0], 5.0 * direction]))
    base = DiscreteBase(floor, FollowerParams(), params)
    off_path = 0.0
    while len(floor.actions) < 100:
        command = follower.command(floor.pose(), base.now())
        if command.status in (FollowStatus.ARRIVED, FollowStatus.STUCK):
            return floor, off_path, command.status
        base.command(command)
        x, y = floor.xyyaw[:2]
        off_path = max(off_path, abs(direction[0] * y - direction[1] * x))
    return floor, off_path, FollowStatus.ACTIVE


def _turns(floor: OpenFloor) -> int:
    return sum(1 for forward, _ in floor.actions if forward == 0.0)


@pytest.mark.parametrize("angle_deg", [5.0, 10.0, 20.0, 25.0, 40.0])
def test_a_path_between_two_headings_is_followed_with_fewer_turns_and_no_farther_off(
    angle_deg: float,
) -> None:
    """Against turning whenever the error exceeds half a turn step (7-15 turns here)."""
    floor, off_path, status = _follow(angle_deg, DiscreteParams())
    plain, plain_off_path, plain_status = _follow(angle_deg, DiscreteParams(turn_hysteresis_rad=0.0))
    assert status == plain_status == FollowStatus.ARRIVED
    assert _turns(floor) < _turns(plain) and len(floor.actions) < len(plain.actions)
    assert off_path <= plain_off_path + 1e-9


def test_turning_at_half_a_turn_step_chatters_on_a_path_between_headings() -> None:
    """Why the base has a hysteresis: without it, 15 degrees off is turn left, turn right, ..."""
    floor, _, status = _follow(15.0, DiscreteParams(turn_hysteresis_rad=0.0))
    assert status != FollowStatus.ARRIVED and all(forward == 0.0 for forward, _ in floor.actions)
    floor, _, status = _follow(15.0, DiscreteParams())
    assert status == FollowStatus.ARRIVED and _turns(floor) <= 5


def test_a_wait_takes_a_period_a_stop_takes_no_time_and_neither_acts() -> None:
    """A zero command while the navigator waits (for a pose) lets simulated time pass; the stop
    it sends when a navigation ends does not: the discrete base stands still between actions."""
    floor = OpenFloor()
    base = DiscreteBase(floor, FollowerParams())
    assert base.command(Command(0.0, 0.0, FollowStatus.ACTIVE, "waiting for the pose"))
    waited = base.now()
    assert waited > 0.0
    assert base.command(Command(0.0, 0.0, FollowStatus.STOP, "stop"))
    assert base.now() == waited and floor.actions == []
