"""Synthetic posed depth: a camera inside an empty box room, rendered analytically (test helper)."""

from __future__ import annotations

import numpy as np

from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_matrix
from sg_search.mapping.occupancy import CameraIntrinsics

WIDTH, HEIGHT = 160, 120
INTRINSICS = CameraIntrinsics(fx=80.0, fy=80.0, cx=80.0, cy=60.0)  # 90 deg horizontal FOV


def camera_pose(x: float, y: float, yaw: float, height: float = 0.9) -> Transform:
    """T_map_camera for an optical frame (z forward, x right, y down) looking along ``yaw``."""
    forward = np.array([np.cos(yaw), np.sin(yaw), 0.0])
    right = np.array([np.sin(yaw), -np.cos(yaw), 0.0])
    down = np.array([0.0, 0.0, -1.0])
    rotation = np.stack([right, down, forward], axis=1)
    return Transform(np.array([x, y, height]), quat_from_matrix(rotation))


def render_box_room(
    pose: Transform, room: tuple[float, float, float, float] = (0.0, 0.0, 6.0, 4.0), ceiling: float = 2.5
) -> np.ndarray:
    """Depth [m] seen from ``pose`` inside the room x0..x1, y0..y1 (floor z=0, ceiling)."""
    x0, y0, x1, y1 = room
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH]
    rays_cam = np.stack(
        [
            (u - INTRINSICS.cx) / INTRINSICS.fx,
            (v - INTRINSICS.cy) / INTRINSICS.fy,
            np.ones_like(u, dtype=float),
        ],
        axis=-1,
    ).reshape(-1, 3)
    rot = pose.as_matrix()[:3, :3]
    dirs = rays_cam @ rot.T
    origin = pose.translation
    t = np.full(len(dirs), np.inf)
    for axis, lo, hi in ((0, x0, x1), (1, y0, y1), (2, 0.0, ceiling)):
        d = dirs[:, axis]
        with np.errstate(divide="ignore"):
            t_hi = np.where(d > 0, (hi - origin[axis]) / d, np.inf)
            t_lo = np.where(d < 0, (lo - origin[axis]) / d, np.inf)
        t = np.minimum(t, np.minimum(t_hi, t_lo))
    return (t * rays_cam[:, 2]).reshape(HEIGHT, WIDTH).astype(np.float32)
