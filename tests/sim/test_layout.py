from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from sg_search.config import default_params_file
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.invariants import check_invariants
from sg_search.scene_graph.prior import add_prior
from sg_search.sim.bddl_scenes import SceneError, load_house, scene_names, split_of
from sg_search.sim.layout import HouseLayout, RoomRect, layout_house, planner_grid_params

EPS = 1e-6


def _overlap(a: RoomRect, b: RoomRect) -> bool:
    return min(a.x1, b.x1) - max(a.x0, b.x0) > EPS and min(a.y1, b.y1) - max(a.y0, b.y0) > EPS


def _check(layout: HouseLayout) -> None:
    for a, b in itertools.combinations(layout.rooms, 2):
        assert not _overlap(a, b), f"{layout.scene}: rooms {a.room_id} and {b.room_id} overlap"
    doors = nx.Graph()
    doors.add_nodes_from(r.room_id for r in layout.rooms)
    doors.add_edges_from((d.room_a, d.room_b) for d in layout.doors)
    unreached = set(layout.metadata.get("disconnected_rooms", []))
    connected = max(nx.connected_components(doors), key=len)
    assert set(doors) - connected == unreached, f"{layout.scene}: unreported disconnected rooms"
    for f in layout.furniture:
        room = layout.room(f.room_id)
        assert room.x0 - EPS <= f.center[0] - f.size[0] / 2 and f.center[0] + f.size[0] / 2 <= room.x1 + EPS
        assert room.y0 - EPS <= f.center[1] - f.size[1] / 2 and f.center[1] + f.size[1] / 2 <= room.y1 + EPS
    for a, b in itertools.combinations(layout.furniture, 2):  # a wall unit hangs above, never in
        gaps = [abs(a.center[i] - b.center[i]) - (a.size[i] + b.size[i]) / 2 for i in range(3)]
        assert max(gaps) > -EPS, f"{layout.scene}: {a.furniture_id} overlaps {b.furniture_id}"


def test_every_scene_lays_out_into_a_consistent_graph() -> None:
    names = scene_names()
    assert len(names) == 51
    placed = total = 0
    for name in names:
        layout = layout_house(load_house(name), seed=0)
        _check(layout)
        if {"bedroom", "kitchen"} <= {r.room_type for r in layout.rooms}:
            assert not layout.unplaced, f"{name}: a home must fit all its furniture, left {layout.unplaced}"
        assert layout.metadata["synthetic_adjacency"] is True
        graph = add_prior(layout.to_prior(), SceneGraph())
        check_invariants(graph)
        placed += len(layout.furniture)
        total += len(layout.furniture) + sum(layout.unplaced.values())
    assert placed / total > 0.9, f"only {placed} of {total} furniture items placed"


def test_layouts_are_deterministic_per_seed() -> None:
    house = load_house("Merom_1_int")
    assert layout_house(house, 3).to_prior() == layout_house(house, 3).to_prior()
    assert layout_house(house, 3).to_prior() != layout_house(house, 4).to_prior()


def test_corridor_house_has_a_hub_and_furniture_knows_affordances() -> None:
    layout = layout_house(load_house("Merom_1_int"), 0)
    hub = next(r for r in layout.rooms if r.room_type == "corridor")
    assert all(hub.room_id in (d.room_a, d.room_b) for d in layout.doors)
    fridge = next(f for f in layout.furniture if f.category == "fridge")
    bed = next(f for f in layout.furniture if f.category == "bed")
    assert fridge.openable and fridge.receptacle and not bed.openable and bed.surface


def test_splits_keep_buildings_together_and_unknown_scenes_are_named() -> None:
    assert split_of("Beechwood_0_int") == split_of("Beechwood_0_garden") == split_of("Beechwood_1_int")
    assert {split_of(n) for n in scene_names()} == {"train", "val", "test"}
    with pytest.raises(SceneError, match=r"unknown scene 'Merom_9'.*Merom_0_int"):
        load_house("Merom_9")


def test_the_planner_node_maps_the_whole_house_the_simulator_lays_out() -> None:
    """house_single_floor (test) reaches x = 41 m, past the planner's shipped 40 m grid around
    the origin: the grid the demo and sim.launch.py give the node covers every room, cell for
    cell the in-process robot's map."""
    layout = layout_house(load_house("house_single_floor"), 0)
    shipped = FrontierPlannerConfig().grid()
    x1 = max(r.x1 for r in layout.rooms)
    assert x1 > shipped.origin_x + shipped.width * shipped.resolution  # the case this is for
    grid = FrontierPlannerConfig(**planner_grid_params("house_single_floor", 0, default_params_file())).grid()
    assert grid == layout.map_grid(FrontierPlannerConfig().resolution)
    for room in layout.rooms:
        corners = [(room.x0, room.y0), (room.x1 - EPS, room.y1 - EPS)]
        assert all(grid.inside(grid.to_cells(np.array([c])))[0] for c in corners), room.room_id
