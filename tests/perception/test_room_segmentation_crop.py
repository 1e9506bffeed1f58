"""Room segmentation works on the explored part of the grid only (the map's box): the same
labels as over the whole grid, wherever the explored part lies, up against the grid's edge too."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from sg_search.mapping.grid import GridSpec
from sg_search.perception.room_segmentation import (
    RoomSegmentationParams,
    _grow,
    _grow_all,
    _segment,
    segment_rooms,
)

SHAPE = (48, 64)


@st.composite
def free_space(draw: st.DrawFn) -> NDArray[np.bool_]:
    """A few rectangular rooms, a door or two between them, anywhere on a small grid."""
    free = np.zeros(SHAPE, dtype=bool)
    for _ in range(draw(st.integers(1, 4))):
        r0, c0 = draw(st.integers(0, SHAPE[0] - 4)), draw(st.integers(0, SHAPE[1] - 4))
        h, w = draw(st.integers(3, 30)), draw(st.integers(3, 40))
        free[r0 : r0 + h, c0 : c0 + w] = True
    for _ in range(draw(st.integers(0, 6))):  # walls with gaps
        r = draw(st.integers(0, SHAPE[0] - 1))
        free[r, : draw(st.integers(0, SHAPE[1]))] = False
    return free


PARAMS = RoomSegmentationParams(door_width=0.3, core_margin=0.05, min_core_area=0.05)


@settings(max_examples=60, deadline=None)
@given(free_space())
def test_the_explored_box_segments_as_the_whole_grid(free: NDArray[np.bool_]) -> None:
    spec = GridSpec(0.05, SHAPE[1], SHAPE[0], 0.0, 0.0)
    assert np.array_equal(segment_rooms(free, spec, PARAMS).labels, _segment(free, 0.05, PARAMS))


@settings(max_examples=60, deadline=None)
@given(free_space(), st.integers(0, 5), st.one_of(st.none(), st.integers(1, 8)), st.booleans())
def test_growing_within_the_box_grows_as_over_the_whole_grid(
    free: NDArray[np.bool_], seed: int, passes: int | None, everywhere: bool
) -> None:
    rng = np.random.default_rng(seed)
    labels = np.where(free & (rng.random(SHAPE) < 0.02), rng.integers(1, 4, SHAPE), 0).astype(np.int32)
    allowed = np.ones(SHAPE, dtype=bool) if everywhere else free
    assert np.array_equal(_grow(labels, allowed, passes), _grow_all(labels, allowed, passes))
