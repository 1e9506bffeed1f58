from __future__ import annotations

import numpy as np
import pytest

from sg_search.geometry import Transform, TransformBuffer, TransformError
from sg_search.geometry.transforms import quat_from_yaw


def test_compose_inverse_and_apply() -> None:
    t_map_base = Transform([1.0, 2.0, 0.0], quat_from_yaw(np.pi / 2))
    point_in_base = np.array([1.0, 0.0, 0.5])
    np.testing.assert_allclose(t_map_base.apply(point_in_base), [1.0, 3.0, 0.5], atol=1e-12)
    identity = t_map_base * t_map_base.inverse()
    np.testing.assert_allclose(identity.as_matrix(), np.eye(4), atol=1e-12)


def test_invalid_quaternion_is_refused() -> None:
    with pytest.raises(ValueError, match="quaternion"):
        Transform([0, 0, 0], [0, 0, 0, 2])


def test_lookup_through_tree_with_interpolation() -> None:
    buffer = TransformBuffer()
    buffer.set_transform("map", "odom", 0.0, Transform([10.0, 0.0, 0.0]), static=True)
    buffer.set_transform("odom", "base_link", 1.0, Transform([0.0, 0.0, 0.0]))
    buffer.set_transform("odom", "base_link", 2.0, Transform([2.0, 0.0, 0.0], quat_from_yaw(np.pi / 2)))
    buffer.set_transform("base_link", "camera", 0.0, Transform([0.0, 0.0, 1.0]), static=True)
    mid = buffer.lookup("map", "camera", 1.5)
    np.testing.assert_allclose(mid.translation, [11.0, 0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(mid.rotation, quat_from_yaw(np.pi / 4), atol=1e-9)
    # camera -> map is the inverse of map -> camera
    back = buffer.lookup("camera", "map", 1.5) * mid
    np.testing.assert_allclose(back.as_matrix(), np.eye(4), atol=1e-9)


def test_lookup_errors_name_frames_and_times() -> None:
    buffer = TransformBuffer(extrapolation_s=0.1)
    buffer.set_transform("odom", "base_link", 5.0, Transform())
    with pytest.raises(TransformError, match="after the newest"):
        buffer.lookup("odom", "base_link", 6.0)
    with pytest.raises(TransformError, match="not connected"):
        buffer.lookup("map", "base_link")
    with pytest.raises(TransformError, match="already has parent"):
        buffer.set_transform("map", "base_link", 5.0, Transform())
    with pytest.raises(TransformError, match="loop"):
        buffer.set_transform("base_link", "odom", 5.0, Transform())


def test_cache_window_drops_old_samples() -> None:
    buffer = TransformBuffer(cache_time_s=1.0)
    for i in range(30):
        buffer.set_transform("odom", "base_link", i * 0.1, Transform([i * 0.1, 0.0, 0.0]))
    with pytest.raises(TransformError, match="before the oldest"):
        buffer.lookup("odom", "base_link", 0.5)
    np.testing.assert_allclose(buffer.lookup("odom", "base_link", 2.55).translation, [2.55, 0, 0], atol=1e-9)


def test_a_clock_that_went_back_restarts_the_edge_instead_of_losing_every_new_sample() -> None:
    """A simulator restarted: /clock starts again at 0 while the buffer holds 60 s of the old run."""
    buffer = TransformBuffer(cache_time_s=10.0)
    for i in range(61):
        buffer.set_transform("odom", "base_link", float(i), Transform([float(i), 0.0, 0.0]))
    assert not buffer.set_transform("odom", "base_link", 55.5, Transform([55.5, 0.0, 0.0]))  # late, kept
    assert buffer.set_transform("odom", "base_link", 1.0, Transform([-1.0, 0.0, 0.0]))
    buffer.set_transform("odom", "base_link", 2.0, Transform([-2.0, 0.0, 0.0]))
    np.testing.assert_allclose(buffer.lookup("odom", "base_link").translation, [-2.0, 0, 0])
    np.testing.assert_allclose(buffer.lookup("odom", "base_link", 1.5).translation, [-1.5, 0, 0], atol=1e-9)
    with pytest.raises(TransformError, match="after the newest"):
        buffer.lookup("odom", "base_link", 50.0)
