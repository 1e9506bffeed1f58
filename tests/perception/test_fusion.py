"""Back-projection and instance fusion on synthetic frames with exact geometry."""

from __future__ import annotations

import numpy as np
import pytest

from sg_search.perception.backproject import BackprojectionParams, mask_voxels
from sg_search.perception.cloud import key_centres, main_clusters, neighbourhood_hits, voxel_keys
from sg_search.perception.detection import Detection
from sg_search.perception.fusion import FusionParams, InstanceMap

K = (100.0, 100.0, 49.5, 39.5)  # fx, fy, cx, cy for 100x80 images


def camera_at(x: float, y: float, height: float = 1.0) -> np.ndarray:
    """Optical frame at (x, y, height) looking along +x of the map (z forward = map x)."""
    pose = np.eye(4)
    pose[:3, :3] = np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]], dtype=float)
    pose[:3, 3] = (x, y, height)
    return pose


def square(rows: slice, cols: slice) -> np.ndarray:
    mask = np.zeros((80, 100), dtype=bool)
    mask[rows, cols] = True
    return mask


def test_voxel_keys_round_trip_and_neighbourhood() -> None:
    points = np.array([[0.01, 0.01, 0.01], [1.0, -2.0, 0.5], [-3.2, 4.1, 1.9]])
    keys = voxel_keys(points, 0.03)
    assert np.allclose(np.sort(np.linalg.norm(key_centres(keys, 0.03), axis=1)),
                       np.sort(np.linalg.norm(np.floor(points / 0.03) * 0.03 + 0.015, axis=1)))  # fmt: skip
    shifted = voxel_keys(points + 0.03, 0.03)
    assert neighbourhood_hits(keys, shifted).all()  # one voxel away counts
    assert not neighbourhood_hits(keys, voxel_keys(points + 0.07, 0.03)).any()


def test_main_clusters_drop_the_far_cluster_and_bridge_small_gaps() -> None:
    near = voxel_keys(np.random.default_rng(0).normal(0, 0.05, (400, 3)), 0.03)
    far = voxel_keys(key_centres(near[:30], 0.03) + np.array([1.0, 0, 0]), 0.03)
    kept = main_clusters(np.union1d(near, far), 0.03, 0.08, 0.3)
    assert np.array_equal(kept, near) or len(kept) >= len(near) - 5  # a stray near voxel may go
    assert key_centres(kept, 0.03)[:, 0].max() < 0.5
    plank = voxel_keys(np.array([[x, 0.0, 0.0] for x in np.arange(0, 0.6, 0.03) if not 0.25 < x < 0.3]), 0.03)
    assert len(main_clusters(plank, 0.03, 0.08, 1.0)) == len(plank)  # a one-voxel gap is bridged


def test_a_plane_backprojects_to_its_true_position() -> None:
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    keys = mask_voxels(
        depth, K, camera_at(0.0, 0.0), square(slice(30, 50), slice(40, 60)), BackprojectionParams()
    )
    centres = key_centres(keys, 0.03)
    assert np.allclose(centres[:, 0], 2.0, atol=0.03)  # 2 m ahead along map x
    assert abs(centres[:, 1].mean()) < 0.03 and abs(centres[:, 2].mean() - 1.0) < 0.03


def test_background_bleed_and_bad_depth_are_removed() -> None:
    depth = np.full((80, 100), 4.0, dtype=np.float32)  # the wall behind
    depth[30:50, 40:60] = 2.0  # the object
    depth[35, 45] = np.nan
    depth[36, 46] = np.inf
    bleeding = square(slice(28, 52), slice(38, 62))  # 2 px onto the wall
    keys = mask_voxels(depth, K, camera_at(0.0, 0.0), bleeding, BackprojectionParams())
    assert key_centres(keys, 0.03)[:, 0].max() < 2.1
    pole = np.full((80, 100), 4.0, dtype=np.float32)
    pole[10:70, 48:51] = 2.0  # 3 px wide
    wide_bleed = square(slice(6, 74), slice(44, 55))  # 4 px onto the wall: more wall than pole
    keys = mask_voxels(pole, K, camera_at(0.0, 0.0), wide_bleed, BackprojectionParams())
    assert len(keys) and key_centres(keys, 0.03)[:, 0].max() < 2.1  # the pole, not the wall
    too_far = np.full((80, 100), 9.0, dtype=np.float32)
    assert len(mask_voxels(too_far, K, camera_at(0.0, 0.0), bleeding, BackprojectionParams())) == 0


def test_repeated_views_fuse_into_one_instance_with_evidence() -> None:
    instances = InstanceMap()
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    mask = square(slice(30, 50), slice(40, 60))
    for frame, (dy, label) in enumerate([(0.0, "mug"), (0.02, "mug"), (0.04, "cup"), (0.0, "mug")], start=1):
        result = instances.integrate([Detection(mask, label, 0.8)], depth, K, camera_at(0.0, dy), frame)
        assert len(result.updated) == 1
    assert len(instances.instances) == 1
    (instance,) = instances.instances.values()
    assert instance.category == "mug" and instance.observations == 4 and list(instance.frames) == [1, 2, 3, 4]
    assert instance.votes["cup"] == pytest.approx(0.8) and instance.confidence_max == pytest.approx(0.8)
    assert [i.instance_id for i in instances.confirmed()] == [instance.instance_id]


def test_neighbours_of_one_category_stay_apart_and_one_frame_is_unconfirmed() -> None:
    instances = InstanceMap(FusionParams(min_observations=2))
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    left, right = square(slice(30, 50), slice(10, 30)), square(slice(30, 50), slice(60, 80))
    instances.integrate(
        [Detection(left, "chair", 0.9), Detection(right, "chair", 0.9)], depth, K, camera_at(0, 0), 1
    )
    assert len(instances.instances) == 2 and not instances.confirmed()
    instances.integrate([Detection(left, "chair", 0.9)], depth, K, camera_at(0, 0), 2)
    assert len(instances.confirmed()) == 1


def test_touching_neighbours_one_frame_showed_apart_are_not_merged() -> None:
    """Two fridges side by side touch along an edge as two faces of one cabinet do; a frame
    that showed them as two detections tells them apart, a frame per face does not."""
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    left, right = square(slice(20, 60), slice(20, 53)), square(slice(20, 60), slice(47, 80))
    params = FusionParams(merge_every=1, min_overlap_same=0.9)  # only the periodic merge may join them
    together, one_by_one = InstanceMap(params), InstanceMap(params)
    both = [Detection(left, "fridge", 0.9), Detection(right, "fridge", 0.9)]
    for frame in (1, 2):
        together.integrate(both, depth, K, camera_at(0, 0), frame)
    one_by_one.integrate([Detection(left, "fridge", 0.9)], depth, K, camera_at(0, 0), 1)
    one_by_one.integrate([Detection(right, "fridge", 0.9)], depth, K, camera_at(0, 0), 2)
    a, b = together.instances.values()
    assert neighbourhood_hits(a.keys, b.keys).sum() >= params.merge_contact  # they do touch
    assert len(together.instances) == 2
    assert len(one_by_one.instances) == 1


def test_a_view_over_two_neighbours_shown_apart_does_not_bridge_them() -> None:
    instances = InstanceMap()
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    left, right = square(slice(30, 50), slice(10, 40)), square(slice(30, 50), slice(60, 90))
    instances.integrate(
        [Detection(left, "counter", 0.9), Detection(right, "counter", 0.9)], depth, K, camera_at(0, 0), 1
    )
    instances.integrate(
        [Detection(square(slice(30, 50), slice(10, 90)), "counter", 0.9)], depth, K, camera_at(0, 0), 2
    )
    assert len(instances.instances) == 2


def test_a_view_that_bridges_two_pieces_merges_them() -> None:
    instances = InstanceMap()
    depth = np.full((80, 100), 2.0, dtype=np.float32)
    instances.integrate(
        [Detection(square(slice(30, 50), slice(10, 40)), "counter", 0.9)], depth, K, camera_at(0, 0), 1
    )
    instances.integrate(
        [Detection(square(slice(30, 50), slice(60, 90)), "counter", 0.9)], depth, K, camera_at(0, 0), 2
    )
    assert len(instances.instances) == 2
    result = instances.integrate(
        [Detection(square(slice(30, 50), slice(10, 90)), "counter", 0.9)], depth, K, camera_at(0, 0), 3
    )
    assert len(instances.instances) == 1 and len(result.removed) == 1
    (instance,) = instances.instances.values()
    assert instance.observations == 3 and list(instance.frames) == [1, 2, 3]
