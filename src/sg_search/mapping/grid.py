"""Grid geometry: metres in ``map`` <-> cell indices.

Cell (row, col) = (i, j) covers x in [origin_x + j*res, origin_x + (j+1)*res) and
y in [origin_y + i*res, ...): rows grow with +y, columns with +x, as in a ROS
OccupancyGrid whose origin is the lower-left corner with identity orientation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class GridSpec:
    """``width`` x ``height`` cells of ``resolution`` metres; ``origin`` = lower-left corner [m]."""

    resolution: float = 0.05
    width: int = 800
    height: int = 800
    origin_x: float = -20.0
    origin_y: float = -20.0

    def __post_init__(self) -> None:
        if self.resolution <= 0 or self.width <= 0 or self.height <= 0:
            raise ValueError(f"bad grid: {self}")

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) = (height, width)."""
        return (self.height, self.width)

    def to_cells(self, xy: NDArray[np.float64]) -> NDArray[np.int64]:
        """(N, 2) metres -> (N, 2) integer (row, col); may lie outside the grid."""
        xy = np.asarray(xy, dtype=float).reshape(-1, 2)
        cols = np.floor((xy[:, 0] - self.origin_x) / self.resolution)
        rows = np.floor((xy[:, 1] - self.origin_y) / self.resolution)
        return np.stack([rows, cols], axis=1).astype(np.int64)

    def to_metres(self, cells: NDArray[np.int64]) -> NDArray[np.float64]:
        """(N, 2) (row, col) -> (N, 2) cell centres in metres."""
        cells = np.asarray(cells).reshape(-1, 2)
        x = self.origin_x + (cells[:, 1] + 0.5) * self.resolution
        y = self.origin_y + (cells[:, 0] + 0.5) * self.resolution
        return np.stack([x, y], axis=1)

    def inside(self, cells: NDArray[np.int64]) -> NDArray[np.bool_]:
        """Which (row, col) lie on the grid."""
        cells = np.asarray(cells).reshape(-1, 2)
        return (
            (cells[:, 0] >= 0) & (cells[:, 0] < self.height) & (cells[:, 1] >= 0) & (cells[:, 1] < self.width)
        )


def distinct_cells(cells: NDArray[np.int64]) -> NDArray[np.int64]:
    """The distinct rows of (N, 2) integer (row, col) cells, on the grid or off it, sorted by row
    then column, as ``np.unique(cells, axis=0)`` gives them, but with one sort of a flat array
    (each cell packed into one integer) instead of a sort of rows."""
    cells = np.asarray(cells, dtype=np.int64).reshape(-1, 2)
    if len(cells) == 0:
        return cells
    low = cells.min(axis=0)
    span = int(cells[:, 1].max() - low[1]) + 1
    packed = np.unique((cells[:, 0] - low[0]) * span + (cells[:, 1] - low[1]))
    return np.stack([packed // span + low[0], packed % span + low[1]], axis=1)
