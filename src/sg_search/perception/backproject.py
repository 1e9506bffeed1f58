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
        cluster_min_fraction: clusters this fraction of the main one's size (holding inner
            pixels too) survive as well.
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
    """Sorted ``map`` voxel keys of one object's mask (empty if too little of it survives).

    The object is the cluster holding the mask's innermost pixels: background bleed lies at
    a mask's border, and around a thin object it can be the larger cluster."""
    rows, cols = np.nonzero(mask)
    if not len(rows):
        return np.empty(0, dtype=np.int64)
    # distance to the mask's border, on its bounding box only (a fraction of the image)
    r0, c0 = int(rows.min()), int(cols.min())
    crop = np.pad(mask[r0 : rows.max() + 1, c0 : cols.max() + 1], 1)
    inside = ndimage.distance_transform_cdt(crop, metric="taxicab")[1:-1, 1:-1]
    rows, cols = np.nonzero(inside > params.erode_px)
    border = inside[rows, cols]
    rows, cols = rows + r0, cols + c0
    z = depth[rows, cols].astype(np.float64)
    valid = np.isfinite(z) & (z >= params.min_depth) & (z <= params.max_depth)
    if int(valid.sum()) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    rows, cols, z, border = rows[valid], cols[valid], z[valid], border[valid]
    fx, fy, cx, cy = intrinsics
    camera = np.stack([(cols - cx) / fx * z, (rows - cy) / fy * z, z], axis=1)
    points = camera @ t_map_camera[:3, :3].T + t_map_camera[:3, 3]
    above = points[:, 2] >= params.floor_z + params.floor_clearance
    points, border = points[above], border[above]
    if len(points) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    keys = voxel_keys(points, params.voxel)
    core = voxel_keys(points[border >= border.max() - 1], params.voxel)  # the innermost two rings
    if params.outlier_neighbours:
        centres = remove_statistical_outliers(
            key_centres(keys, params.voxel), params.outlier_neighbours, params.outlier_std_ratio
        )
        keys = voxel_keys(centres, params.voxel)
    keys = main_clusters(keys, params.voxel, params.cluster_radius, params.cluster_min_fraction, core)
    if len(keys) < params.min_voxels:
        return np.empty(0, dtype=np.int64)
    return keys
