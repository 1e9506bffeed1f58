"""Occupancy grids of simple floors for the planning tests: (row, column) = (y, x) cells of
``SPEC``, 5 cm each, in ``map``."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, OCCUPIED

SPEC = GridSpec(resolution=0.05, width=200, height=200, origin_x=0.0, origin_y=0.0)  # 10 m x 10 m


def walled_floor() -> NDArray[np.int8]:
    """SPEC's 10 m x 10 m of free floor, walled round."""
    states = np.full(SPEC.shape, FREE, dtype=np.int8)
    states[:, [0, -1]] = OCCUPIED
    states[[0, -1], :] = OCCUPIED
    return states


def wall_floor(gap: bool = True) -> NDArray[np.int8]:
    """:func:`walled_floor` with a wall at x = 5 m from y = 0 up to 8 m (a 2 m gap above it), or
    all the way across (``gap`` False: two halves with no way between)."""
    states = walled_floor()
    states[: 160 if gap else SPEC.height, 100] = OCCUPIED
    return states


def doorway_floor(doorway_m: float) -> NDArray[np.int8]:
    """:func:`walled_floor` parted by a wall at x = 3 m with a doorway ``doorway_m`` [m] wide
    from y = 5 m: a room of 3 m x 10 m beside one of 7 m x 10 m."""
    states = walled_floor()
    states[:, 60] = OCCUPIED
    states[100 : 100 + round(doorway_m / SPEC.resolution), 60] = FREE
    return states
