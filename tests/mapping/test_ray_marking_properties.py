"""Property tests of the occupancy map's free-space marking: the vectorised form marks exactly
the cells that casting each ray alone marks."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sg_search.mapping.grid import GridSpec, distinct_cells
from sg_search.mapping.occupancy import OccupancyMap, OccupancyParams

SPEC = GridSpec(resolution=0.05, width=60, height=40, origin_x=-1.0, origin_y=-0.5)
PARAMS = OccupancyParams()

cells_arrays = arrays(
    np.int64, st.tuples(st.integers(0, 60), st.just(2)), elements=st.integers(-(10**6), 10**6)
)  # on the grid and far off it


@given(cells_arrays)
def test_distinct_cells_are_numpys_unique_rows(cells: np.ndarray) -> None:
    assert np.array_equal(distinct_cells(cells), np.unique(cells, axis=0).reshape(-1, 2))


def _marked_ray_by_ray(origin: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The reference: each distinct end cell's ray walked alone, with the same half-cell samples."""
    marked = np.zeros(SPEC.shape, dtype=bool)
    targets = SPEC.to_metres(np.unique(SPEC.to_cells(ends), axis=0))
    steps = int(np.ceil(np.linalg.norm(targets - origin, axis=1).max() / (SPEC.resolution * 0.5)))
    t = np.linspace(0.0, 1.0, steps, endpoint=False)  # none when every end cell's centre is the origin
    for end in targets:
        for row, col in SPEC.to_cells(origin + (end - origin)[None, :] * t[:, None]):
            if 0 <= row < SPEC.height and 0 <= col < SPEC.width:
                marked[row, col] = True
    return marked


points = st.tuples(st.floats(-2.5, 2.5), st.floats(-1.5, 2.5))  # on the grid and off it [m]


@settings(max_examples=60, deadline=None)
@given(points, st.lists(points, min_size=1, max_size=12))
def test_a_frame_marks_every_cell_its_rays_pass_and_no_other(origin: tuple, ends: list) -> None:
    grid = OccupancyMap(SPEC, PARAMS)
    origin_xy, ends_xy = np.array(origin), np.array(ends)
    grid._mark_free(origin_xy, ends_xy)
    expected = _marked_ray_by_ray(origin_xy, ends_xy)
    assert np.array_equal(grid.observed, expected)
    assert np.array_equal(grid.log_odds < 0, expected)  # one miss each, however many rays pass
    assert np.allclose(grid.log_odds[expected], PARAMS.miss_log_odds)
