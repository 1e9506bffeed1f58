"""The bumper from odometry: pushing forward without moving is a blockage; moving, turning in
place or stopping is not."""

from __future__ import annotations

import pytest

from sg_search.planning.stall import StallDetector, point_ahead


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
