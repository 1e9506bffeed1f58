"""An occupancy map saved and loaded again is the same map; a file that is not one, or was made
for another grid, is refused and leaves the map as it was."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import OccupancyMap


def _mapped(spec: GridSpec) -> OccupancyMap:
    grid = OccupancyMap(spec)
    grid.mark_occupied(np.array([[0.5, 0.5], [1.0, -1.0]]))
    grid.log_odds[10:20, 10:30] = -2.0
    grid.observed[10:20, 10:30] = True
    grid.frames = 7
    return grid


def test_a_saved_map_loads_back_the_same(tmp_path: Path) -> None:
    spec = GridSpec(0.1, 60, 40, -3.0, -2.0)
    saved = _mapped(spec)
    saved.save(tmp_path / "map.npz")
    loaded = OccupancyMap(spec)
    loaded.load(tmp_path / "map.npz")
    assert np.array_equal(loaded.states(), saved.states()) and loaded.frames == 7
    assert loaded.contacts == saved.contacts and len(saved.contacts) == 2  # bumps stay remembered
    assert [p.name for p in tmp_path.iterdir()] == ["map.npz"]  # no temporary file left


def test_a_map_of_another_grid_or_a_damaged_file_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    _mapped(GridSpec(0.1, 60, 40, -3.0, -2.0)).save(tmp_path / "map.npz")
    other = _mapped(GridSpec(0.05, 60, 40, -3.0, -2.0))
    before = other.states().copy()
    with pytest.raises(ValueError, match="holds a map of grid"):
        other.load(tmp_path / "map.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a map")
    with pytest.raises(ValueError, match="is not a saved occupancy map"):
        other.load(tmp_path / "bad.npz")
    assert np.array_equal(other.states(), before)
