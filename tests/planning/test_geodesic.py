from __future__ import annotations

import itertools

import numpy as np
import pytest
from floor_maps import SPEC, wall_floor

from sg_search.mapping.occupancy import OCCUPIED, UNKNOWN
from sg_search.planning.geodesic import (
    DistanceField,
    PlannerParams,
    PlanningError,
    dijkstra_field,
    line_is_free,
    path_length,
    traversable,
)

PARAMS = PlannerParams(robot_radius=0.2)


def test_distance_around_a_wall_matches_geometry() -> None:
    free = traversable(wall_floor(), SPEC, PARAMS)
    field = DistanceField(free, SPEC, (2.0, 2.0), PARAMS)
    # shortest path hugs the wall's end: (2,2) -> (5, 8 + clearance) -> (8, 2)
    corner = np.array([5.0, 8.0 + PARAMS.robot_radius + 0.05])
    expected = np.linalg.norm(corner - [2.0, 2.0]) + np.linalg.norm(corner - [8.0, 2.0])
    measured = field.distance_to((8.0, 2.0))
    assert measured == pytest.approx(expected, rel=0.04)
    assert field.distance_to((3.0, 2.0)) == pytest.approx(1.0, abs=0.06)


def test_path_avoids_the_wall_and_is_smooth() -> None:
    free = traversable(wall_floor(), SPEC, PARAMS)
    field = DistanceField(free, SPEC, (2.0, 2.0), PARAMS)
    path = field.path_to((8.0, 2.0))
    assert np.allclose(path[0], (2.0, 2.0), atol=0.05) and np.allclose(path[-1], (8.0, 2.0), atol=0.05)
    assert all(line_is_free(free, SPEC, a, b) for a, b in itertools.pairwise(path))
    assert len(path) <= 6, "shortcutting should leave a handful of waypoints"
    assert path_length(path) == pytest.approx(field.distance_to((8.0, 2.0)), rel=0.05)


def test_fmm_and_dijkstra_agree_within_metrication_error() -> None:
    free = traversable(wall_floor(), SPEC, PARAMS)
    field = DistanceField(free, SPEC, (2.0, 2.0), PARAMS)
    dijkstra = dijkstra_field(free, SPEC, field.start)
    both = np.isfinite(field.distance) & np.isfinite(dijkstra) & (field.distance > 1.0)
    ratio = dijkstra[both] / field.distance[both]
    # 8-connected grid paths are never shorter than the Euclidean-consistent FMM distance and at
    # most 1/cos(22.5 deg) - 1 = 8.2 % longer
    assert np.percentile(ratio, 1) > 0.99 and np.percentile(ratio, 99) < 1.09
    assert (np.isfinite(field.distance) == np.isfinite(dijkstra)).all()


def test_bad_goals_give_clear_errors() -> None:
    states = wall_floor()
    states[50:90, 140:180] = UNKNOWN  # an unknown 2 m x 2 m island around (8, 3.5)
    free = traversable(states, SPEC, PARAMS)
    field = DistanceField(free, SPEC, (2.0, 2.0), PARAMS)
    with pytest.raises(PlanningError, match="outside the map"):
        field.path_to((12.0, 2.0))
    with pytest.raises(PlanningError, match="obstacle or unknown"):
        field.path_to((8.0, 3.5))  # centre of the unknown island, > snap radius from free space
    assert field.distance_to((12.0, 2.0)) == float("inf")
    assert np.isfinite(field.distance_to((5.0, 4.0)))  # inside the wall: snapped to a free cell nearby
    enclosed = wall_floor()
    enclosed[100:140, 140] = OCCUPIED
    enclosed[100:140, 180] = OCCUPIED
    enclosed[100, 140:181] = OCCUPIED
    enclosed[140, 140:181] = OCCUPIED
    field = DistanceField(traversable(enclosed, SPEC, PARAMS), SPEC, (2.0, 2.0), PARAMS)
    with pytest.raises(PlanningError, match="not reachable"):
        field.path_to((8.0, 6.0))
    with pytest.raises(PlanningError, match="start"):
        DistanceField(traversable(enclosed, SPEC, PARAMS), SPEC, (-3.0, 2.0), PARAMS)
