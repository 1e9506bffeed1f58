"""Masks to 3D points in ``map``: depth limits, border erosion, voxel grid, outliers, bleed.

Frames: depth in the camera optical frame (x right, y down, z forward, metres along z);
``T_map_camera`` (4x4) poses it in ``map``. Intrinsics are (fx, fy, cx, cy) in pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from sg_search.perception.cloud import key_centres, main_clusters, remove_statistical_outliers, voxel_keys


@dataclass(frozen=True)
class BackprojectionParams:
    """How a mask becomes points (see config/sg_search.yaml, ``perception``, for the reasons).

    Attributes:
        min_depth: nearer returns are dropped [m].
        max_depth: farther returns are dropped [m].
        erode_px: mask erosion before back-projection [pixels] (depth edges mix surfaces).
        voxel: voxel edge of the fused clouds [m].
        outlier_neighbours: neighbours for statistical outlier removal (0 = off).
        outlier_std_ratio: points beyond mean + ratio * std of neighbour distance are outliers.
        cluster_radius: single-linkage radius that separates an object from background bleed [m].
        cluster_min_fraction: clusters this fraction of the largest one survive too.
        min_voxels: detections with fewer voxels left are discarded.
        floor_z: height of the floor in ``map`` [m].
        floor_clearance: points less than this above the floor are dropped [m] (a mask that
            bleeds onto the floor at an object's foot would join it to its neighbours).
    """

    min_depth: float = 0.2
    max_depth: float = 5.0
    erode_px: int = 1
    voxel: float = 0.03
    outlier_neighbours: int = 0
    outlier_std_ratio: float = 2.0
    cluster_radius: float = 0.08
    cluster_min_fraction: float = 1.0
    min_voxels: int = 8
    floor_z: float = 0.0
    floor_clearance: float = 0.02


def mask_voxels(
    depth: NDArray[np.float32],
    intrinsics: tuple[float, float, float, float],
    t_map_camera: NDArray[np.float64],
    mask: NDArray[np.bool_],
    params: BackprojectionParams,
) -> NDArray[np.int64]:
    """Sorted ``map`` voxel keys of one object's mask (empty if too little of it survives)."""
    rows, cols = np.nonzero(mask)
    if params.erode_px and len(rows):  # erode the mask's bounding box only (a fraction of the image)
        pad = params.erode_px + 1
        r0, c0 = max(int(rows.min()) - pad, 0), max(int(cols.min()) - pad, 0)
        crop = ndimage.binary_erosion(
            mask[r0 : rows.max() + pad + 1, c0 : cols.max() + pad + 1], iterations=params.erode_px
        )
        rows, cols = np.nonzero(crop)
        rows, cols = rows + r0, cols + c0
    z = depth[rows, cols].astype(np.float64)
    valid = np.isfinite(z) & (z >= params.min_depth) & (z <= params.max_depth)
    if int(valid.sum()) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    rows, cols, z = rows[valid], cols[valid], z[valid]
    fx, fy, cx, cy = intrinsics
    camera = np.stack([(cols - cx) / fx * z, (rows - cy) / fy * z, z], axis=1)
    points = camera @ t_map_camera[:3, :3].T + t_map_camera[:3, 3]
    points = points[points[:, 2] >= params.floor_z + params.floor_clearance]
    if len(points) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    keys = voxel_keys(points, params.voxel)
    if params.outlier_neighbours:
        centres = remove_statistical_outliers(
            key_centres(keys, params.voxel), params.outlier_neighbours, params.outlier_std_ratio
        )
        keys = voxel_keys(centres, params.voxel)
    keys = main_clusters(keys, params.voxel, params.cluster_radius, params.cluster_min_fraction)
    if len(keys) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    return keys
