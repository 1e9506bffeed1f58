from __future__ import annotations

import math

import numpy as np

from sg_search.planning.follower import FollowerParams, FollowStatus, PathFollower

PATH = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0]])


def _drive(follower: PathFollower, pose: list[float], dt: float, steps: int, moves: bool = True):  # type: ignore[no-untyped-def]
    """Integrate a unicycle base (a test double for the robot's base) under the follower."""
    statuses = []
    for k in range(steps):
        cmd = follower.command((pose[0], pose[1], pose[2]), k * dt)
        statuses.append(cmd.status)
        assert abs(cmd.linear) <= follower.params.max_linear + 1e-9
        assert abs(cmd.angular) <= follower.params.max_angular + 1e-9
        if cmd.status in (FollowStatus.ARRIVED, FollowStatus.STUCK):
            break
        if cmd.status == FollowStatus.REPLAN:
            follower.set_path(PATH, keep_recoveries=True)
        if moves:
            pose[0] += cmd.linear * math.cos(pose[2]) * dt
            pose[1] += cmd.linear * math.sin(pose[2]) * dt
            pose[2] += cmd.angular * dt
    return statuses


def test_follows_an_l_shaped_path_to_the_goal() -> None:
    follower = PathFollower()
    follower.set_path(PATH)
    pose = [0.0, 0.0, math.pi / 2]  # facing away from the first leg: must rotate first
    statuses = _drive(follower, pose, 0.05, 2000)
    assert statuses[-1] == FollowStatus.ARRIVED
    assert math.hypot(pose[0] - 2.0, pose[1] - 2.0) <= follower.params.goal_tolerance
    assert follower.recoveries == 0


def test_blocked_robot_recovers_then_gives_up() -> None:
    params = FollowerParams(stuck_window_s=1.0, backoff_s=0.2, rotate_s=0.2, max_recoveries=2)
    follower = PathFollower(params)
    follower.set_path(PATH)
    statuses = _drive(follower, [0.0, 0.0, 0.0], 0.05, 2000, moves=False)
    assert FollowStatus.RECOVERING in statuses and FollowStatus.REPLAN in statuses
    assert statuses[-1] == FollowStatus.STUCK and follower.recoveries == 2


def test_a_base_that_replans_after_every_blocked_step_is_still_stuck() -> None:
    # what the navigator does when the bumper fires: the map changed, so it re-plans at once;
    # the re-plan must not restart the progress window, or the base pushes forever
    params = FollowerParams(stuck_window_s=1.0, backoff_s=0.2, rotate_s=0.2, max_recoveries=2)
    follower = PathFollower(params)
    follower.set_path(PATH)
    statuses = []
    for k in range(200):
        cmd = follower.command((0.0, 0.0, 0.0), k * 0.25)
        statuses.append(cmd.status)
        if cmd.status == FollowStatus.STUCK:
            break
        follower.set_path(PATH + np.array([0.0, 0.01 * k]), keep_recoveries=True)  # a slightly other plan
    assert statuses[-1] == FollowStatus.STUCK and follower.recoveries == 2
    assert len(statuses) < 40  # two windows and two recoveries, not the 200 steps


def test_a_replan_onto_a_longer_path_is_not_lost_progress() -> None:
    # a wall seen on the way makes the new plan longer than what was left of the old one
    params = FollowerParams(stuck_window_s=1.0)
    follower = PathFollower(params)
    follower.set_path(np.array([[0.0, 0.0], [3.0, 0.0]]))
    x = 0.0
    for k in range(30):  # 0.25 s per step at 0.3 m/s; every step re-plans a longer way round
        cmd = follower.command((x, 0.0, 0.0), k * 0.25)
        assert cmd.status == FollowStatus.ACTIVE
        x += cmd.linear * 0.25
        longer = np.array([[x, 0.0], [3.0 + k, 0.0], [3.0 + k, 0.5], [3.0, 0.5], [3.0, 0.0]])
        follower.set_path(longer, keep_recoveries=True)
    assert follower.recoveries == 0


def test_two_replans_between_commands_are_measured_against_the_path_the_window_was_on() -> None:
    # a blocked base re-planned twice before its next command: to a shorter way, then back to the
    # same one; measured against the intermediate plan, the return would look like progress
    params = FollowerParams(stuck_window_s=1.0, backoff_s=0.2, rotate_s=0.2, max_recoveries=2)
    follower = PathFollower(params)
    follower.set_path(PATH)
    statuses = []
    for k in range(200):
        cmd = follower.command((0.0, 0.0, 0.0), k * 0.25)
        statuses.append(cmd.status)
        if cmd.status == FollowStatus.STUCK:
            break
        follower.set_path(np.array([[0.0, 0.0], [1.0, 0.0]]), keep_recoveries=True)
        follower.set_path(PATH, keep_recoveries=True)
    assert statuses[-1] == FollowStatus.STUCK


def test_a_new_goal_starts_the_progress_window_afresh() -> None:
    params = FollowerParams(stuck_window_s=1.0)
    follower = PathFollower(params)
    for k in range(40):  # standing still, but every step is a new goal (keep_recoveries=False)
        follower.set_path(PATH)
        assert follower.command((0.0, 0.0, 0.0), k * 0.25).status == FollowStatus.ACTIVE
