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


def test_a_bumped_cell_the_camera_sees_through_stays_occupied_for_contact_s(box_room_view) -> None:  # type: ignore[no-untyped-def]
    """Counted in the frames' stamps, whatever the camera's rate: 20 s are 20 frames a second
    apart or 200 a tenth apart; a frame without a stamp does not age the contact."""
    depth, pose = box_room_view
    for period_s in (1.0, 0.1):
        grid = OccupancyMap(SPEC, OccupancyParams(contact_s=20.0))
        grid.integrate_depth(depth, INTRINSICS, pose, 100.0)
        grid.mark_occupied(np.array([[3.5, 2.0]]))
        grid.integrate_depth(depth, INTRINSICS, pose)  # no stamp
        frames = round(20.0 / period_s)
        for k in range(1, frames):
            grid.integrate_depth(depth, INTRINSICS, pose, 100.0 + k * period_s)
            assert _state_at(grid.states(), 3.5, 2.0) == OCCUPIED, (period_s, k)
        assert (
            grid.log_odds[tuple(SPEC.to_cells(np.array([[3.5, 2.0]]))[0])] < 0
        )  # the camera's evidence alone: free
        grid.integrate_depth(depth, INTRINSICS, pose, 100.0 + frames * period_s + 1e-6)
        assert _state_at(grid.states(), 3.5, 2.0) == FREE and not grid.contacts  # then the camera rules


def test_a_stamp_older_than_the_newest_restarts_a_contacts_lifetime(box_room_view) -> None:  # type: ignore[no-untyped-def]
    """Time went back (a simulator restarted at 0): the contact lasts ``contact_s`` from the
    older stamp, not until the clock is back where it was."""
    depth, pose = box_room_view
    grid = OccupancyMap(SPEC, OccupancyParams(contact_s=20.0))
    grid.integrate_depth(depth, INTRINSICS, pose, 1000.0)
    grid.mark_occupied(np.array([[3.5, 2.0]]))
    for stamp_s in range(20):  # the camera sees through it all along
        grid.integrate_depth(depth, INTRINSICS, pose, float(stamp_s))
        assert _state_at(grid.states(), 3.5, 2.0) == OCCUPIED
    grid.integrate_depth(depth, INTRINSICS, pose, 20.0)
    assert _state_at(grid.states(), 3.5, 2.0) == FREE


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
