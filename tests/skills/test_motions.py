"""Opening-motion geometry and the motions file."""

from __future__ import annotations

import math

import pytest

from sg_search.skills.motions import (
    MotionError,
    OpeningMotion,
    base_pose_for_hand,
    base_twist_towards,
    head_angles,
    hinge_position,
    load_motions,
    pull_hand_target,
)


def test_a_drawer_comes_straight_out() -> None:
    motion = OpeningMotion(opening="drawer", pull_m=0.3)
    (x, y), yaw = pull_hand_target((1.0, 2.0, 0.5), math.pi / 2, motion, 1.0)
    assert (x, y, yaw) == pytest.approx((1.0, 2.3, math.pi / 2))


@pytest.mark.parametrize("side", [1, -1])
def test_a_door_swings_out_around_its_hinge(side: int) -> None:
    motion = OpeningMotion(opening="hinge", hinge_radius_m=0.5, open_angle_rad=math.pi / 2, hinge_side=side)
    handle = (0.0, 0.0, 0.8)  # front faces +x
    hinge = hinge_position(handle, 0.0, motion)
    assert hinge == pytest.approx((0.0, -0.5 * side))  # facing the front (looking along -x), left is -y
    (x, y), yaw = pull_hand_target(handle, 0.0, motion, 1.0)
    assert math.dist((x, y), hinge) == pytest.approx(0.5)
    assert (x, y) == pytest.approx((0.5, -0.5 * side))  # a quarter turn brings the handle out in front
    (hx, _), _ = pull_hand_target(handle, 0.0, motion, 0.5)
    assert hx > 0  # always out, never into the cabinet
    assert yaw == pytest.approx(-side * math.pi / 2)


def test_base_pose_puts_the_hand_on_the_handle_and_controller_converges() -> None:
    x, y, heading = base_pose_for_hand((2.0, 0.0), 0.0, reach=0.6)
    assert (x, y) == pytest.approx((2.6, 0.0)) and abs(abs(heading) - math.pi) < 1e-9
    pose = (3.5, 1.0, 0.0)
    for _ in range(400):
        vx, vy, wz = base_twist_towards(pose, (x, y, heading), 0.3, 0.5)
        assert math.hypot(vx, vy) <= 0.3 + 1e-9 and abs(wz) <= 0.5 + 1e-9
        c, s = math.cos(pose[2]), math.sin(pose[2])
        pose = (pose[0] + 0.05 * (c * vx - s * vy), pose[1] + 0.05 * (s * vx + c * vy), pose[2] + 0.05 * wz)
    assert math.dist(pose[:2], (x, y)) < 0.01 and abs(math.sin(pose[2] - heading)) < 0.01


def test_translation_and_rotation_finish_together_so_a_held_handle_stays_on_its_arc() -> None:
    motion = OpeningMotion(opening="hinge", hinge_radius_m=0.45, open_angle_rad=math.radians(75))
    handle, reach = (0.0, 0.0, 0.8), 0.6
    hinge = hinge_position(handle, 0.0, motion)
    pose = base_pose_for_hand(handle[:2], 0.0, reach)
    worst = 0.0
    for k in range(1, 11):
        hand, front = pull_hand_target(handle, 0.0, motion, k / 10)
        goal = base_pose_for_hand(hand, front, reach)
        for _ in range(200):
            vx, vy, wz = base_twist_towards(pose, goal, 0.4, 1.0)
            c, s = math.cos(pose[2]), math.sin(pose[2])
            pose = (
                pose[0] + 0.02 * (c * vx - s * vy),
                pose[1] + 0.02 * (s * vx + c * vy),
                pose[2] + 0.02 * wz,
            )
            held = (pose[0] + reach * math.cos(pose[2]), pose[1] + reach * math.sin(pose[2]))
            worst = max(worst, abs(math.dist(held, hinge) - 0.45))
    assert worst < 0.01  # the fake HSR (and a real door) refuses more than a few centimetres


def test_head_angles() -> None:
    pan, tilt = head_angles((1.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    assert pan == pytest.approx(math.pi / 4) and tilt == pytest.approx(-math.atan2(1, math.sqrt(2)))


def test_motions_file_and_its_errors(tmp_path) -> None:
    good = tmp_path / "m.yaml"
    good.write_text(
        "default: {open_angle_deg: 80}\ncategories:\n  dresser: {opening: drawer, pull_m: 0.25}\n"
    )
    default, categories = load_motions(good)
    assert default.open_angle_rad == pytest.approx(math.radians(80))
    assert (
        categories["dresser"].opening == "drawer"
        and categories["dresser"].open_angle_rad == default.open_angle_rad
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("categories:\n  fridge: {pull: 0.3}\n")
    with pytest.raises(MotionError, match=r"categories.fridge: unknown keys \['pull'\]"):
        load_motions(bad)
    bad.write_text("categories:\n  fridge: {pull_m: 3.0, opening: drawer}\n")
    with pytest.raises(MotionError, match="pull_m must lie"):
        load_motions(bad)
