"""Point-cloud operations on (N, 3) float arrays in metres: voxel keys, outliers, clusters.

Implemented with numpy and scipy (cKDTree, connected components on the voxel grid) rather than
open3d: the handful of operations fusion needs is short here, and open3d's wheel needs a
system library (libusb) that a plain machine lacks.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage
from scipy.spatial import cKDTree

_BITS = 21
_OFFSET = 1 << (_BITS - 1)  # voxel indices in [-2^20, 2^20): +-31 km at 3 cm voxels
_MASK = (1 << _BITS) - 1
# the 27 key offsets of a voxel's 3x3x3 neighbourhood
_NEIGHBOURS = np.array(
    [(dx << (2 * _BITS)) + (dy << _BITS) + dz for dx in (-1, 0, 1) for dy in (-1, 0, 1) for dz in (-1, 0, 1)],
    dtype=np.int64,
)


def voxel_keys(points: NDArray[np.float64], voxel: float) -> NDArray[np.int64]:
    """Sorted unique int64 keys of the voxels [edge ``voxel`` m] that hold ``points``."""
    index = np.floor(points / voxel).astype(np.int64) + _OFFSET
    keys = (index[:, 0] << (2 * _BITS)) | (index[:, 1] << _BITS) | index[:, 2]
    return np.unique(keys)


def key_centres(keys: NDArray[np.int64], voxel: float) -> NDArray[np.float64]:
    """(N, 3) voxel centres [m] of ``keys``."""
    index = np.stack([(keys >> (2 * _BITS)) & _MASK, (keys >> _BITS) & _MASK, keys & _MASK], axis=1)
    return (index - _OFFSET + 0.5) * voxel


def neighbourhood_hits(keys: NDArray[np.int64], others: NDArray[np.int64]) -> NDArray[np.bool_]:
    """For each key, whether its voxel or one of its 26 neighbours is in sorted ``others``."""
    if not len(keys) or not len(others):
        return np.zeros(len(keys), dtype=bool)
    candidates = (keys[:, None] + _NEIGHBOURS[None, :]).ravel()
    position = np.searchsorted(others, candidates).clip(max=len(others) - 1)
    hits: NDArray[np.bool_] = (others[position] == candidates).reshape(len(keys), -1).any(axis=1)
    return hits


def remove_statistical_outliers(
    points: NDArray[np.float64], neighbours: int, std_ratio: float
) -> NDArray[np.float64]:
    """Drop points whose mean distance to their ``neighbours`` nearest is above mean + ratio * std."""
    if len(points) <= neighbours:
        return points
    distances, _ = cKDTree(points).query(points, k=neighbours + 1)
    mean = distances[:, 1:].mean(axis=1)
    inliers: NDArray[np.float64] = points[mean <= mean.mean() + std_ratio * mean.std()]
    return inliers


def main_clusters(
    keys: NDArray[np.int64],
    voxel: float,
    radius: float,
    min_fraction: float,
    core: NDArray[np.int64] | None = None,
) -> NDArray[np.int64]:
    """Keys of the main cluster of occupied voxels, plus every cluster at least
    ``min_fraction`` of its size (DBSCAN-like, min_samples 1, on the voxel grid: voxels join
    when the empty gap between them is at most about ``radius`` m). The main cluster is the
    one holding most ``core`` keys, or the largest when none is given or none falls in one;
    the others kept must hold core keys too."""
    if len(keys) < 2:
        return keys
    index = np.stack([(keys >> (2 * _BITS)) & _MASK, (keys >> _BITS) & _MASK, keys & _MASK], axis=1)
    index -= index.min(axis=0)
    grid = np.zeros(tuple(index.max(axis=0) + 1), dtype=bool)
    grid[index[:, 0], index[:, 1], index[:, 2]] = True
    bridge = int(radius / voxel / 2)  # each dilation closes a one-voxel gap from both sides
    joined = ndimage.binary_dilation(grid, np.ones((3, 3, 3)), iterations=bridge) if bridge else grid
    labels, count = ndimage.label(joined, structure=np.ones((3, 3, 3)))
    if count <= 1:
        return keys
    of_key = labels[index[:, 0], index[:, 1], index[:, 2]]
    sizes = np.bincount(of_key)
    votes = np.bincount(of_key[np.isin(keys, core)], minlength=len(sizes)) if core is not None else sizes
    if not votes[1:].any():
        votes = sizes
    main = int(np.argmax(votes[1:])) + 1
    keep = (np.arange(len(sizes)) == main) | ((sizes >= min_fraction * sizes[main]) & (votes > 0))
    kept: NDArray[np.int64] = keys[keep[of_key]]
    return kept
