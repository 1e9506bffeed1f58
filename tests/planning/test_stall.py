"""The bumper from odometry: pushing forward without moving is a blockage; moving, turning in
place or stopping is not."""

from __future__ import annotations

import math

import numpy as np
import pytest
from floor_maps import SPEC, doorway_floor, walled_floor

from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.navigator import Navigator
from sg_search.planning.stall import StallDetector, disc_points, point_ahead


def _navigator(config: FrontierPlannerConfig, doorway_m: float | None = None) -> Navigator:
    """Open floor (``floor_maps.walled_floor``), or two rooms joined by a doorway this wide."""
    states = walled_floor() if doorway_m is None else doorway_floor(doorway_m)
    return Navigator(SPEC, lambda: states, config.navigator())


def _push(
    detector: StallDetector, poses: list[tuple[float, float, float]], linear: float = 0.3
) -> list[bool]:
    return [detector.update(0.1 * i, pose, linear) for i, pose in enumerate(poses)]


def test_pushing_without_moving_is_reported_once_per_window() -> None:
    detector = StallDetector(window_s=1.0, min_progress_m=0.03)
    said = _push(detector, [(1.0, 2.0, 0.0)] * 25)
    assert [i for i, blocked in enumerate(said) if blocked] == [10, 20]


def test_a_base_that_moves_or_only_turns_is_not_blocked() -> None:
    moving = StallDetector(window_s=1.0)
    assert not any(_push(moving, [(0.03 * i, 0.0, 0.0) for i in range(30)]))
    turning = StallDetector(window_s=1.0)
    assert not any(_push(turning, [(1.0, 2.0, 0.1 * i) for i in range(30)], linear=0.0))


def test_stopping_starts_the_window_afresh() -> None:
    detector = StallDetector(window_s=1.0)
    pose = (1.0, 2.0, 0.0)
    said = [detector.update(0.1 * i, pose, 0.0 if i == 8 else 0.3) for i in range(18)]
    assert not any(said)  # 0.8 s, a stop, then 0.9 s


def test_the_point_ahead_lies_along_the_heading() -> None:
    assert point_ahead((1.0, 2.0, 1.5707963267948966), 0.25) == pytest.approx((1.0, 2.25))
    with pytest.raises(ValueError, match="window_s"):
        StallDetector(window_s=0.0)


def test_a_bump_marks_a_disc_beyond_the_front_that_covers_a_post_met_head_on() -> None:
    """A glass post 0.1 m in radius met head-on (the pillar of the frontier planner's DDS test):
    the base stops with its centre 0.3 m from the post's. The marks start at the first cell
    beyond the base's radius and cover the post's far side too (one cell left it free, and the
    planner sent the base to viewpoints inside the post); none lies under the base."""
    config = FrontierPlannerConfig(robot_radius=0.2, resolution=0.05, bump_size_m=0.1)
    pose = (2.9, 2.0, 0.0)
    post = np.array([3.2, 2.0])
    marks = config.bump_marks(pose, _navigator(config))
    from_base = np.hypot(*(marks - np.array(pose[:2])).T)
    assert from_base.min() == pytest.approx(0.25) and from_base.max() == pytest.approx(0.45)
    far_side = post + 0.1 * np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0]])  # the post's outline
    assert all(np.min(np.hypot(*(marks - point).T)) <= 0.05 for point in far_side)
    one_cell = FrontierPlannerConfig(robot_radius=0.2, resolution=0.05, bump_size_m=0.0)
    assert np.allclose(one_cell.bump_marks(pose, _navigator(one_cell)), [point_ahead(pose, 0.25)])


@pytest.mark.parametrize(("doorway_m", "marked"), [(0.6, 0), (0.9, 1), (1.0, 1), (1.2, 13)])
def test_a_bump_in_a_doorway_never_leaves_the_base_in_the_smaller_room(doorway_m: float, marked: int) -> None:
    """Test 13 (session 83): a disc marked in a doorway left the base 10.8 of the 532 m^2 it could
    reach, and the search ended "nothing reachable". Facing the doorway from the smaller room the
    marks shrink to the one cell ahead, or to none where that would close it too; a doorway wide
    enough keeps the disc. From the larger room the disc may close off the smaller one (val 19:
    a pocket of 6.4 m^2 behind what the base ran into, beside the 153 m^2 it kept)."""
    config = FrontierPlannerConfig(robot_radius=0.2, resolution=0.05, bump_size_m=0.1)
    navigator = _navigator(config, doorway_m)
    y = 5.0 + doorway_m / 2
    from_the_small_room = (2.65, y, 0.0)
    marks = config.bump_marks(from_the_small_room, navigator)
    assert len(marks) == marked
    assert not navigator.parted_by(from_the_small_room[:2], marks, config.bump_shut_in_m2)
    assert len(config.bump_marks((3.35, y, math.pi), navigator)) == 13  # from the large room
    assert len(config.bump_marks((6.0, 5.0, 0.0), navigator)) == 13  # in the open


def test_disc_points_are_the_lattice_points_within_the_radius() -> None:
    points = disc_points((1.0, 2.0), 0.1, 0.05)
    assert len(points) == 13  # 1 + 4 at 0.05 + 4 at 0.07 + 4 at 0.1
    assert np.all(np.hypot(points[:, 0] - 1.0, points[:, 1] - 2.0) <= 0.1 + 1e-9)
    assert math.isclose(points[:, 0].mean(), 1.0) and math.isclose(points[:, 1].mean(), 2.0)
