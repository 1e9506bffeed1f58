from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from sg_search.mapping.grid import GridSpec
from sg_search.planning.viewpoints import ViewpointParams, select_viewpoints, visibility_score

SPEC = GridSpec(resolution=0.05, width=200, height=200, origin_x=0.0, origin_y=0.0)


def _target() -> np.ndarray:
    """Points on a 20 cm cube standing on the floor at (5, 5)."""
    g = np.linspace(-0.1, 0.1, 5)
    xs, ys, zs = np.meshgrid(g, g, g + 0.4)
    return np.stack([xs.ravel() + 5.0, ys.ravel() + 5.0, zs.ravel()], axis=1)


def _wall() -> np.ndarray:
    """A wall at x = 4.3 from y = 4 to 6, 0 to 2 m high, sampled every 5 cm."""
    ys, zs = np.meshgrid(np.arange(4.0, 6.0, 0.05), np.arange(0.0, 2.0, 0.05))
    return np.stack([np.full(ys.size, 4.3), ys.ravel(), zs.ravel()], axis=1)


def test_occluded_viewpoint_scores_low_open_one_high() -> None:
    tree = cKDTree(_wall())
    behind_wall = visibility_score(np.array([3.6, 5.0, 0.9]), _target(), tree, 0.1)
    in_the_open = visibility_score(np.array([5.0, 6.2, 0.9]), _target(), tree, 0.1)
    assert behind_wall < 0.2
    assert in_the_open > 0.8


def test_selection_prefers_visible_reachable_viewpoints() -> None:
    free = np.ones(SPEC.shape, dtype=bool)
    free[:, 85:87] = False  # the wall's cells at x = 4.25..4.35 are not traversable
    best = select_viewpoints(_target(), _wall(), free, SPEC, ViewpointParams())
    assert best[0].score > 0.8
    assert best[0].xy[0] > 4.3, "the best viewpoint is on the open side of the wall"
    assert all(vp.score <= best[0].score for vp in best)
    facing = np.array([np.cos(best[0].yaw), np.sin(best[0].yaw)])
    to_target = np.array([5.0, 5.0]) - np.array(best[0].xy)
    assert np.dot(facing, to_target / np.linalg.norm(to_target)) > 0.99
    wall_side = [vp for vp in best if vp.xy[0] < 4.2]
    assert wall_side and max(vp.score for vp in wall_side) < best[0].score


def test_a_better_view_far_round_an_obstacle_loses_to_a_good_one_near_the_base() -> None:
    """The base stands on the wall's side (x < 4.3): the open side sees the cube whole, but the
    way there is long (a made-up 12 m, as round a counter); at 0.1 per metre it is not worth it."""
    free = np.ones(SPEC.shape, dtype=bool)
    free[:, 85:87] = False
    xs = SPEC.origin_x + (np.arange(SPEC.width) + 0.5) * SPEC.resolution
    distance = np.where(xs[None, :] < 4.3, 1.0, 12.0) * np.ones(SPEC.shape)
    ignoring = select_viewpoints(_target(), _wall(), free, SPEC, ViewpointParams(), distance)
    assert ignoring[0].xy[0] > 4.3 and ignoring[0].distance == 12.0
    costing = select_viewpoints(_target(), _wall(), free, SPEC, ViewpointParams(path_cost=0.1), distance)
    assert costing[0].xy[0] < 4.3 and costing[0].distance == 1.0
    assert costing[0].score < ignoring[0].score  # it sees less, from where the base can get cheaply
    # a short way round still buys the better view
    near = np.where(xs[None, :] < 4.3, 1.0, 2.0) * np.ones(SPEC.shape)
    assert (
        select_viewpoints(_target(), _wall(), free, SPEC, ViewpointParams(path_cost=0.1), near)[0].xy[0] > 4.3
    )


def test_reach_points_stand_nearest_the_object_when_no_circle_fits() -> None:
    from sg_search.mapping.grid import GridSpec
    from sg_search.planning.geodesic import DistanceField, PlannerParams
    from sg_search.planning.viewpoints import reach_points

    spec = GridSpec(0.05, 80, 80, 0.0, 0.0)  # 4 m x 4 m, all free but a 1.6 m x 1.6 m bed in the middle
    free = np.ones(spec.shape, dtype=bool)
    free[12:68, 12:68] = False  # 0.6..3.4 m: the bed with the base's clearance around it
    field = DistanceField(free, spec, (0.2, 0.2), PlannerParams(robot_radius=0.0))
    points = reach_points((2.0, 2.0), free, spec, field.distance, reach_m=1.45)
    assert points, "cells 1.4 m from the centre are free"
    gaps = [np.hypot(x - 2.0, y - 2.0) for x, y in points]
    assert all(g <= 1.45 for g in gaps) and gaps == sorted(gaps)  # nearest to the object first
    assert reach_points((2.0, 2.0), free, spec, field.distance, reach_m=1.3) == []  # none that close


def test_a_container_is_approached_from_the_side_it_opens_towards() -> None:
    """A fridge with its back to the wall between two rooms, the base in the other room: the
    nearest viewpoints lie behind the wall; with the side it opens towards (away from its
    room's nearest edge) the goal lies in front of its door, through the doorway."""
    from sg_search.mapping.occupancy import FREE, OCCUPIED
    from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable
    from sg_search.planning.viewpoints import Face, approach_goal, in_front, opening_sides

    spec = GridSpec(0.05, 120, 120, 0.0, 0.0)  # 6 m x 6 m
    states = np.full(spec.shape, FREE, dtype=np.int8)
    states[59, :100] = OCCUPIED  # the wall at y = 2.95..3.0, a doorway at x = 5..6 m
    centre, size = np.array([2.0, 3.4, 0.9]), np.array([0.8, 0.75, 1.8])
    states[61:75, 32:48] = OCCUPIED  # the fridge seen from its room: y = 3.05..3.75, x = 1.6..2.4
    sides = opening_sides(centre, size, room_min=(0.0, 3.0), room_max=(6.0, 6.0))
    assert sides[0] == (0.0, 1.0)
    front, face = sides[0], Face(sides[:1], centre, size)
    params = PlannerParams(robot_radius=0.25)
    free = traversable(states, spec, params)
    fields = [(free, DistanceField(free, spec, (2.0, 1.5), params))]
    args = (centre, size, states, fields, spec, ViewpointParams(radii=(0.6, 0.7, 0.8)), (0.1, 1.5), 0.9)
    anywhere = approach_goal(*args)
    assert anywhere is not None and anywhere[1] < 3.0  # behind the wall: nearer, and within reach
    goal = approach_goal(*args, face=face)
    assert goal is not None and in_front(goal, centre, size, front) and goal[1] > 3.775
    states[59, 100:] = OCCUPIED  # the doorway shut: the front cannot be reached, the rest is tried
    free = traversable(states, spec, params)
    shut = (centre, size, states, [(free, DistanceField(free, spec, (2.0, 1.5), params))], *args[4:])
    assert approach_goal(*shut, face=face) == anywhere


def test_a_container_is_opened_from_within_the_width_of_its_front_not_off_to_a_side() -> None:
    """A fridge in the open, its front towards +y, the base up and to the left: the nearest
    goals ahead of the front lie off to its left, where an opened door hinged on that side
    stands between the camera and the shelves; the goal chosen lies within the face's width."""
    from sg_search.mapping.occupancy import FREE, OCCUPIED
    from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable
    from sg_search.planning.viewpoints import Face, approach_goal, facing_square, in_front

    spec = GridSpec(0.05, 120, 120, 0.0, 0.0)  # 6 m x 6 m
    states = np.full(spec.shape, FREE, dtype=np.int8)
    centre, size, front = np.array([3.0, 3.0, 0.9]), np.array([0.8, 0.75, 1.8]), (0.0, 1.0)
    states[53:68, 52:68] = OCCUPIED  # the fridge: x = 2.6..3.4, y = 2.65..3.4
    params = PlannerParams(robot_radius=0.25)
    free = traversable(states, spec, params)
    fields = [(free, DistanceField(free, spec, (0.5, 5.5), params))]
    args = (centre, size, states, fields, spec, ViewpointParams(), (0.1, 1.5), 1.0)
    goal = approach_goal(*args, face=Face((front,), centre, size))
    assert goal is not None and facing_square(goal, centre, size, front) and abs(goal[0] - 3.0) <= 0.4
    diagonal = (2.2, 3.9)  # ahead of the front, off its left edge
    assert in_front(diagonal, centre, size, front) and not facing_square(diagonal, centre, size, front)


def test_a_front_with_no_room_to_stand_gives_way_to_the_next_likeliest_side() -> None:
    """The same fridge with a counter along its +y face (the room box's estimate): nowhere to
    stand squarely before that face, and a corner goal would open the door from beside it; the
    goal is square before the next likeliest face (-x) instead."""
    from sg_search.mapping.occupancy import FREE, OCCUPIED
    from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable
    from sg_search.planning.viewpoints import Face, approach_goal, facing_square

    spec = GridSpec(0.05, 120, 120, 0.0, 0.0)
    states = np.full(spec.shape, FREE, dtype=np.int8)
    centre, size = np.array([3.0, 3.0, 0.9]), np.array([0.8, 0.75, 1.8])
    states[53:68, 52:68] = OCCUPIED  # the fridge
    states[68:80, 50:90] = OCCUPIED  # a counter: x = 2.5..4.5, y = 3.4..4.0
    params = PlannerParams(robot_radius=0.25)
    free = traversable(states, spec, params)
    fields = [(free, DistanceField(free, spec, (0.5, 5.5), params))]
    face = Face(((0.0, 1.0), (-1.0, 0.0)), centre, size)
    reach = ViewpointParams(radii=(0.6, 0.7, 0.8))  # within reach, as for opening
    goal = approach_goal(centre, size, states, fields, spec, reach, (0.1, 1.5), 1.0, face=face)
    assert goal is not None and facing_square(goal, centre, size, (-1.0, 0.0)), goal


def _fridge_blocked_in_front() -> tuple[tuple, np.ndarray, np.ndarray]:
    """A fridge in the open (front +y) with a counter across its front: no room to stand
    squarely before it, goals beside and behind it. Returns approach_goal's arguments before
    ``face``, the fridge's centre and size."""
    from sg_search.mapping.occupancy import FREE, OCCUPIED
    from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable

    spec = GridSpec(0.05, 120, 120, 0.0, 0.0)
    states = np.full(spec.shape, FREE, dtype=np.int8)
    centre, size = np.array([3.0, 3.0, 0.9]), np.array([0.8, 0.75, 1.8])
    states[53:68, 52:68] = OCCUPIED  # the fridge: x = 2.6..3.4, y = 2.65..3.4
    states[68:80, 40:80] = OCCUPIED  # the counter: x = 2.0..4.0, y = 3.4..4.0
    params = PlannerParams(robot_radius=0.25)
    free = traversable(states, spec, params)
    fields = [(free, DistanceField(free, spec, (0.5, 0.5), params))]
    reach = ViewpointParams(radii=(0.6, 0.7, 0.8))
    return (centre, size, states, fields, spec, reach, (0.1, 1.5), 0.9), centre, size


def test_goals_outside_the_containers_room_come_after_those_in_it() -> None:
    """Square before the fridge's -x face is the first goal; with a room box that ends at
    x = 2.5 (a wall along that side, say), a goal in the room is taken instead; with a room no
    goal lies in, the best goal beyond it still is."""
    from sg_search.geometry.box import Box3D
    from sg_search.planning.viewpoints import Face, approach_goal

    args, centre, size = _fridge_blocked_in_front()
    sides = ((0.0, 1.0), (-1.0, 0.0), (1.0, 0.0), (0.0, -1.0))
    anywhere = approach_goal(*args, face=Face(sides, centre, size))
    assert anywhere is not None and anywhere[0] < 2.5
    inside = approach_goal(*args, face=Face(sides, centre, size, Box3D((4.25, 3.0, 1.25), (3.5, 6.0, 2.5))))
    assert inside is not None and inside[0] >= 2.5
    beyond = approach_goal(*args, face=Face(sides, centre, size, Box3D((3.0, 5.05, 1.25), (6.0, 1.9, 2.5))))
    assert beyond == anywhere


def test_no_goal_is_taken_before_a_side_the_container_refused() -> None:
    """Refused from -x and +x, the fridge is approached only from -y (the one side left with
    room); refused from -y as well, from nowhere."""
    from sg_search.planning.viewpoints import Face, approach_goal, side_towards

    args, centre, size = _fridge_blocked_in_front()
    refused = ((-1.0, 0.0), (1.0, 0.0))
    face = Face(((0.0, 1.0), (0.0, -1.0)), centre, size, refused=refused)
    goal = approach_goal(*args, face=face)
    assert goal is not None and side_towards(centre, size, goal) == (0.0, -1.0)
    shut = Face(((0.0, 1.0),), centre, size, refused=(*refused, (0.0, -1.0)))
    assert approach_goal(*args, face=shut) is None
    assert approach_goal(*args, face=Face(((0.0, 1.0),), centre, size)) is not None
