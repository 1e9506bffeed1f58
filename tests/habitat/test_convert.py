"""Habitat -> ROS conventions, checked without habitat-sim (it cannot be installed here)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sg_search.geometry.transforms import quat_multiply
from sg_search.habitat.convert import (
    camera_pose_to_ros,
    intrinsics_from_hfov,
    parse_objectnav,
    position_to_ros,
    rotation_to_ros,
    semantic_to_instances,
    yaw_of,
)


def about(axis: str, angle: float) -> np.ndarray:
    """A quaternion (x, y, z, w) rotating by ``angle`` about a Habitat axis."""
    q = np.zeros(4)
    q["xyz".index(axis)] = math.sin(angle / 2)
    q[3] = math.cos(angle / 2)
    return q


def test_points_and_headings_map_to_rep103() -> None:
    assert position_to_ros([1.0, 2.0, 3.0]) == pytest.approx([-3.0, -1.0, 2.0])
    # Habitat agents look along -Z; turning by +θ about +Y is a +θ yaw about ROS +z.
    assert yaw_of(rotation_to_ros(about("y", 0.7))) == pytest.approx(0.7)
    assert yaw_of(rotation_to_ros(about("y", -2.5))) == pytest.approx(-2.5)


def test_intrinsics_use_the_horizontal_field_of_view() -> None:
    fx, fy, cx, cy = intrinsics_from_hfov(640, 480, 79.0)
    assert fx == fy == pytest.approx(320 / math.tan(math.radians(39.5)))
    assert (cx, cy) == (319.5, 239.5)
    with pytest.raises(ValueError, match="hfov"):
        intrinsics_from_hfov(640, 480, 0.0)


def test_a_recorded_habitat_frame_back_projects_onto_the_true_surface() -> None:
    """Depth rendered analytically in Habitat's conventions (OpenGL camera, Y-up world) for a
    tilted plane; the ROS back-projection with our intrinsics and pose lands on that plane."""
    width, height = 160, 120
    fx, fy, cx, cy = intrinsics_from_hfov(width, height, 79.0)
    position = np.array([1.0, 0.9, 2.0])
    orientation = quat_multiply(about("y", 0.6), about("x", -0.35))  # turned left, pitched down
    normal_hab, offset = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8]), -2.0  # n·x = d
    v, u = np.mgrid[0:height, 0:width]
    rays_gl = np.stack([(u - cx) / fx, -(v - cy) / fy, -np.ones_like(u, dtype=float)], axis=-1)
    from sg_search.geometry.transforms import quat_to_matrix

    rays_world = rays_gl @ quat_to_matrix(orientation).T
    t = (offset - position @ normal_hab) / (rays_world @ normal_hab)
    depth = np.where(t > 0, t, 0.0).astype(np.float32)  # z-depth: the GL ray has unit -z
    assert (depth > 0).mean() > 0.5

    pose = camera_pose_to_ros(position, orientation)
    valid = depth > 0
    z = depth[valid].astype(float)
    optical = np.stack([(u[valid] - cx) / fx * z, (v[valid] - cy) / fy * z, z], axis=1)
    points = optical @ pose[:3, :3].T + pose[:3, 3]
    normal_ros = position_to_ros(normal_hab)
    errors = np.abs(points @ normal_ros - offset)
    assert np.max(errors) < 1e-3
    assert pose[:3, 3] == pytest.approx([-2.0, -1.0, 0.9])


def test_semantic_ids_become_dense_instances_with_categories() -> None:
    semantic = np.array([[5, 5, 9], [7, 0, 9]], dtype=np.uint32)
    dense, table = semantic_to_instances(semantic, {5: "chair", 9: "bed", 0: "wall"})
    assert dense.dtype == np.int32 and dense[1, 0] == 0  # id 7 is unknown
    assert {table[int(dense[0, 0])], table[int(dense[0, 2])]} == {
        ("habitat_5", "chair"),
        ("habitat_9", "bed"),
    }
    assert len(table) == 3 and dense[1, 1] != 0


def test_objectnav_episodes_parse_into_ros_coordinates() -> None:
    text = json.dumps(
        {
            "episodes": [
                {
                    "episode_id": "0",
                    "scene_id": "hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb",
                    "start_position": [1.0, 0.1, -2.0],
                    "start_rotation": list(about("y", math.pi / 2)),
                    "object_category": "bed",
                    "info": {"geodesic_distance": 4.2},
                }
            ],
            "goals_by_category": {
                "TEEsavR23oF.basis.glb_bed": [
                    {"object_id": 12, "position": [3.0, 0.5, -4.0],
                     "view_points": [{"agent_state": {"position": [2.0, 0.1, -3.0]}}]},
                ]
            },
        }
    )  # fmt: skip
    (episode,) = parse_objectnav(text)
    assert episode.category == "bed" and episode.geodesic_distance == 4.2
    assert episode.start_xy_yaw == pytest.approx((2.0, -1.0, math.pi / 2))
    assert np.allclose(episode.view_points, [[3.0, -2.0, 0.1]])  # the view point, not the object
    broken = json.loads(text)
    broken["goals_by_category"] = {}
    with pytest.raises(ValueError, match="episode 0: no goals"):
        parse_objectnav(json.dumps(broken))
