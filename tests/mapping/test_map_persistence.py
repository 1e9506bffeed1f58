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
    grid.stamp_s = 1_800_000_000.125  # a wall clock's seconds, with a fraction that int storage loses
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
    assert loaded.stamp_s == saved.stamp_s == 1_800_000_000.125  # contacts above: expiries to the fraction
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


def test_a_map_saved_when_contacts_were_counted_in_frames_loads_without_them(tmp_path: Path) -> None:
    """Before session 85 a contact's expiry was a frame count, which is no time: the map loads,
    its bumps do not (the camera's evidence of those cells stays)."""
    spec = GridSpec(0.1, 60, 40, -3.0, -2.0)
    saved = _mapped(spec)
    np.savez_compressed(
        tmp_path / "old.npz", log_odds=saved.log_odds, observed=saved.observed, frames=7,
        contacts=np.array([[k, 57] for k in saved.contacts], dtype=np.int64),
        grid=np.array([spec.resolution, spec.width, spec.height, spec.origin_x, spec.origin_y]),
    )  # fmt: skip
    loaded = OccupancyMap(spec)
    loaded.load(tmp_path / "old.npz")
    assert not loaded.contacts and loaded.frames == 7
    assert np.array_equal(loaded.log_odds, saved.log_odds) and np.array_equal(loaded.observed, saved.observed)
