"""Habitat conventions -> ROS (REP 103).

Habitat's world is Y-up with the agent looking along -Z and X to its right; ROS ``map`` is
Z-up, X forward, Y left. A Habitat vector (x, y, z) is the ROS vector (-z, -x, y): the
constant rotation :data:`HABITAT_TO_ROS`. Habitat's sensors use the OpenGL camera frame
(X right, Y up, looking along -Z); ROS cameras use the optical frame (X right, Y down, Z
forward): ``R_optical = R_gl @ diag(1, -1, -1)``. Quaternions here are (x, y, z, w).
Distances are metres, angles radians (degrees where the name says so).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sg_search.geometry.transforms import quat_from_matrix, quat_to_matrix

HABITAT_TO_ROS = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
GL_TO_OPTICAL = np.diag([1.0, -1.0, -1.0])


def position_to_ros(p: Any) -> np.ndarray:
    """A Habitat point (3,) or points (N, 3) in ROS ``map`` coordinates."""
    result: np.ndarray = np.asarray(p, dtype=float) @ HABITAT_TO_ROS.T
    return result


def rotation_to_ros(q_xyzw: Any) -> np.ndarray:
    """A Habitat orientation (x, y, z, w) as the ROS quaternion (x, y, z, w) of the same body."""
    matrix = HABITAT_TO_ROS @ quat_to_matrix(np.asarray(q_xyzw, dtype=float)) @ HABITAT_TO_ROS.T
    return quat_from_matrix(matrix)


def yaw_of(q_ros_xyzw: Any) -> float:
    """Heading [rad] about ROS +z of a ROS quaternion."""
    x, y, z, w = (float(v) for v in q_ros_xyzw)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def camera_pose_to_ros(position: Any, q_xyzw: Any) -> np.ndarray:
    """4x4 pose in ``map`` of the ROS optical frame of a Habitat sensor at ``position`` with
    orientation ``q_xyzw`` (both in Habitat's world)."""
    pose = np.eye(4)
    pose[:3, :3] = HABITAT_TO_ROS @ quat_to_matrix(np.asarray(q_xyzw, dtype=float)) @ GL_TO_OPTICAL
    pose[:3, 3] = position_to_ros(position)
    return pose


def intrinsics_from_hfov(width: int, height: int, hfov_deg: float) -> tuple[float, float, float, float]:
    """(fx, fy, cx, cy) [px] of a Habitat pinhole sensor: fx = fy = (W/2)/tan(hfov/2) (square
    pixels; Habitat's hfov is horizontal), principal point at the pixel centre (W-1)/2, (H-1)/2."""
    if not 0.0 < hfov_deg < 180.0 or width <= 0 or height <= 0:
        raise ValueError(f"bad sensor: {width}x{height}, hfov {hfov_deg} deg")
    f = (width / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
    return f, f, (width - 1) / 2.0, (height - 1) / 2.0


def semantic_to_instances(
    semantic: np.ndarray, categories: dict[int, str], lookup: dict[int, int] | None = None
) -> tuple[np.ndarray, dict[int, tuple[str, str]]]:
    """Habitat's uint32 semantic ids -> dense int32 instance ids (0 = none / unknown id) and a
    table id -> (scene-graph id ``habitat_<semantic id>``, category), for the ids seen.

    Dense ids are numbered in order of appearance in this image, or taken from ``lookup``
    (semantic id -> dense id, e.g. :func:`stable_lookup`) so that they stay the same across frames.
    """
    semantic = np.asarray(semantic)
    seen = [
        int(s) for s in np.unique(semantic) if int(s) in categories and (lookup is None or int(s) in lookup)
    ]
    lookup = lookup if lookup is not None else {sid: k + 1 for k, sid in enumerate(seen)}
    dense = np.zeros(semantic.shape, dtype=np.int32)
    for sid, instance in lookup.items():
        dense[semantic == sid] = instance
    return dense, {lookup[s]: (f"habitat_{s}", categories[s]) for s in seen}


def stable_lookup(categories: dict[int, str]) -> dict[int, int]:
    """Semantic id -> dense instance id (1..n, by semantic id) for every object of a scene."""
    return {sid: k + 1 for k, sid in enumerate(sorted(categories))}


@dataclass(frozen=True)
class ObjectNavEpisode:
    """One ObjectNav episode in ROS coordinates: start (x, y, yaw) and the goal category's
    view points (N, 3) [m]."""

    episode_id: str
    scene_id: str
    category: str
    start_xy_yaw: tuple[float, float, float]
    view_points: np.ndarray = field(repr=False)
    geodesic_distance: float = math.nan


def parse_objectnav(text: str) -> list[ObjectNavEpisode]:
    """Episodes of an ObjectNav dataset file (HM3D/MP3D v1 layout: ``episodes`` with
    ``start_position``/``start_rotation``/``object_category``, goals in ``goals_by_category``
    keyed "<scene file>_<category>"). ValueError naming the episode for missing goals."""
    data = json.loads(text)
    goals = data.get("goals_by_category", {})
    out = []
    for raw in data.get("episodes", []):
        scene_file = str(raw["scene_id"]).rsplit("/", 1)[-1]
        key = f"{scene_file}_{raw['object_category']}"
        targets = goals.get(key)
        if not targets:
            raise ValueError(f"episode {raw.get('episode_id')}: no goals under {key!r}")
        points = [vp["agent_state"]["position"] for goal in targets for vp in goal.get("view_points", [])]
        points = points or [goal["position"] for goal in targets]
        start = position_to_ros(raw["start_position"])
        out.append(
            ObjectNavEpisode(
                episode_id=str(raw["episode_id"]),
                scene_id=str(raw["scene_id"]),
                category=str(raw["object_category"]),
                start_xy_yaw=(
                    float(start[0]),
                    float(start[1]),
                    yaw_of(rotation_to_ros(raw["start_rotation"])),
                ),
                view_points=position_to_ros(np.array(points, dtype=float)),
                geodesic_distance=float(raw.get("info", {}).get("geodesic_distance", math.nan)),
            )
        )
    return out
