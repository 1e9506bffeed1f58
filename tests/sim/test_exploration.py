"""Frontier exploration in the rendered world, and the pieces it relies on."""

from __future__ import annotations

import numpy as np

from sg_search.bench.exploration import explore_house
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import OCCUPIED, OccupancyMap
from sg_search.planning.geodesic import DistanceField, PlannerParams
from sg_search.sim.mujoco.collision import collision_raster
from sg_search.sim.mujoco.scene import layout_for


def test_exploring_a_small_house_maps_it_and_distances_agree() -> None:
    result = explore_house("Rs_int")
    assert result["coverage"] >= 0.9, result["curve"]
    assert result["curve"][0][1] < result["coverage"]  # the first turn did not already see it all
    assert result["geodesic_rel_err_median"] < 0.05 and result["geodesic_pairs"] >= 50


def test_the_collision_raster_matches_the_drawn_house() -> None:
    layout = layout_for("Rs_int", 0)
    free, grid = collision_raster(layout)

    def at(x: float, y: float) -> bool:
        ((row, col),) = grid.to_cells(np.array([[x, y]]))
        return bool(free[row, col])

    door = layout.doors[0]
    assert at(door.x, door.y), "a door's centre must be passable"
    fridge = next(f for f in layout.furniture if f.category == "fridge")
    assert not at(fridge.center[0], fridge.center[1])
    room = layout.rooms[0]
    assert not at(room.x0 - 0.3, room.y0 - 0.3)  # outside every room
    assert all(at(d.x, d.y) for d in layout.doors)  # every door, not only the first


def test_bumper_marks_and_a_lone_start_cell() -> None:
    spec = GridSpec(0.05, 40, 40, 0.0, 0.0)
    grid = OccupancyMap(spec)
    grid.mark_occupied(np.array([[1.0, 1.0]]))
    assert grid.states()[20, 20] == OCCUPIED
    free = np.zeros(spec.shape, dtype=bool)
    free[10, 10] = free[11, 11] = True  # only a diagonal neighbour: no front for FMM
    field = DistanceField(free, spec, (0.525, 0.525), PlannerParams(robot_radius=0.0, snap_radius=0.1))
    assert field.distance[10, 10] == 0.0 and 0.05 < field.distance[11, 11] < 0.15  # reached by Dijkstra
