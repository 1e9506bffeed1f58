from __future__ import annotations

import numpy as np
from box_room import INTRINSICS, camera_pose, render_box_room

from sg_search.mapping.frontier_extraction import FrontierExtractor, FrontierSegment, seen_beyond
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, OCCUPIED, UNKNOWN, OccupancyMap, OccupancyParams
from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable

SPEC = GridSpec(resolution=0.05, width=160, height=120, origin_x=-1.0, origin_y=-1.0)


def _state_at(states: np.ndarray, x: float, y: float) -> int:
    r, c = SPEC.to_cells(np.array([[x, y]]))[0]
    return int(states[r, c])


def test_one_view_marks_wall_free_space_and_leaves_the_back_unknown(box_room_view) -> None:  # type: ignore[no-untyped-def]
    depth, pose = box_room_view
    grid = OccupancyMap(SPEC)
    assert grid.integrate_depth(depth, INTRINSICS, pose) > 0
    states = grid.states()
    assert _state_at(states, 6.0 + 0.01, 2.0) == OCCUPIED  # far wall straight ahead
    assert _state_at(states, 3.5, 2.0) == FREE  # floor in between
    assert _state_at(states, 0.2, 2.0) == UNKNOWN  # behind the camera
    assert _state_at(states, 5.0, 2.0) == FREE


def test_a_bumped_cell_the_camera_sees_through_stays_occupied_for_contact_frames(box_room_view) -> None:  # type: ignore[no-untyped-def]
    """A glass pillar at (3.5, 2.0): the camera sees the floor and the far wall through it."""
    depth, pose = box_room_view
    grid = OccupancyMap(SPEC, OccupancyParams(contact_frames=20))
    grid.integrate_depth(depth, INTRINSICS, pose)
    grid.mark_occupied(np.array([[3.5, 2.0]]))
    for _ in range(19):
        grid.integrate_depth(depth, INTRINSICS, pose)
        assert _state_at(grid.states(), 3.5, 2.0) == OCCUPIED
    assert (
        grid.log_odds[tuple(SPEC.to_cells(np.array([[3.5, 2.0]]))[0])] < 0
    )  # the camera's evidence alone: free
    grid.integrate_depth(depth, INTRINSICS, pose)
    assert _state_at(grid.states(), 3.5, 2.0) == FREE and not grid.contacts  # then the camera rules


def test_empty_or_invalid_depth_changes_nothing(box_room_view) -> None:  # type: ignore[no-untyped-def]
    _, pose = box_room_view
    grid = OccupancyMap(SPEC)
    empty = np.zeros((120, 160), dtype=np.float32)
    assert grid.integrate_depth(empty, INTRINSICS, pose) == 0
    assert grid.integrate_depth(np.full((120, 160), np.nan, dtype=np.float32), INTRINSICS, pose) == 0
    assert (grid.states() == UNKNOWN).all() and grid.frames == 0


def test_frontiers_are_reachable_and_keep_their_ids(box_room_view) -> None:  # type: ignore[no-untyped-def]
    depth, pose = box_room_view
    grid = OccupancyMap(SPEC)
    grid.integrate_depth(depth, INTRINSICS, pose)
    states = grid.states()
    free = traversable(states, SPEC, PlannerParams(robot_radius=0.2))
    field = DistanceField(free, SPEC, (1.5, 2.0), PlannerParams(robot_radius=0.2))
    extractor = FrontierExtractor(min_cells=5)
    first = extractor.extract(states, SPEC, field.distance)
    assert first, "a single 90 deg view must leave frontiers at the edges of its view"
    for f in first:
        assert np.isfinite(field.distance_to(f.goal))
        assert _state_at(states, *f.goal) == FREE
    second = extractor.extract(states, SPEC, field.distance)
    assert [f.frontier_id for f in second] == [f.frontier_id for f in first]
    # looking back as well closes the frontiers behind the camera
    grid.integrate_depth(
        render_box_room(camera_pose(1.0, 2.0, np.pi)), INTRINSICS, camera_pose(1.0, 2.0, np.pi)
    )
    grid.integrate_depth(
        render_box_room(camera_pose(1.0, 2.0, np.pi / 2)), INTRINSICS, camera_pose(1.0, 2.0, np.pi / 2)
    )
    grid.integrate_depth(
        render_box_room(camera_pose(1.0, 2.0, -np.pi / 2)), INTRINSICS, camera_pose(1.0, 2.0, -np.pi / 2)
    )
    states = grid.states()
    assert _state_at(states, 0.5, 2.0) == FREE
    free_fraction = (states[SPEC.to_cells(np.array([[0.3, 0.3]]))[0][0] :, :] == FREE).mean()
    assert free_fraction > 0.3


def test_a_frontier_is_seen_beyond_once_no_frontier_goal_stays_near_its_goal() -> None:
    near = FrontierSegment("frontier_1", (1.0, 0.0), (0.9, 0.0), 10, 0.5)
    far = FrontierSegment("frontier_2", (5.0, 0.0), (1.1, 0.0), 10, 0.5)
    assert not seen_beyond((0.0, 0.0), [far, near], 1.0)  # one still lies within 1 m
    assert seen_beyond((0.0, 0.0), [far], 1.0)
    assert seen_beyond((0.0, 0.0), [], 1.0)
