"""The simulated robot's drives stop at their budgets: actions, and metres driven (what an
approach's shared detour limit hands a drive); a drive to a frontier stops once the map sees
beyond it; the actions of drives that failed are counted, by how each ended (the benchmark's
table)."""

from __future__ import annotations

import math
from dataclasses import replace

from sg_search.bench.embodied_world import EmbodiedEpisode
from sg_search.bench.sim_robot import FAILED_DRIVE_ENDS, drive_end
from sg_search.planning.discrete import DiscreteParams
from sg_search.planning.navigator import NavError, NavResult
from sg_search.sim.episodes import make_episodes


def _farthest_frontier(env: EmbodiedEpisode) -> tuple[tuple[float, float], float]:
    """After a look around the first test episode's start: the farthest open frontier's goal
    and its geodesic distance [m]."""
    env.look_around()
    field = env.robot.frontier_field()
    assert field is not None
    goal = max((s.goal for s in env.robot.open_frontiers()), key=field.distance_to)
    return goal, field.distance_to(goal)


def test_a_drive_stops_once_it_has_driven_max_travel_m() -> None:
    episode = make_episodes("test", 1, seed=0)[0][0]
    with EmbodiedEpisode(episode) as env:
        goal, distance = _farthest_frontier(env)
        assert distance > 3.0  # far enough that the cap, not the goal, ends the drive
        start = env.world.travelled
        capped = env.robot.drive_to(goal, 0.3, 200, max_travel_m=1.0)
        assert not capped.success and capped.code == NavError.CANCELED
        assert 1.0 < env.world.travelled - start <= 1.0 + DiscreteParams().forward_step_m + 1e-6
        assert env.robot.drive_to(goal, 0.3, 200).success  # the goal was reachable all along


def test_a_drive_to_a_frontier_ends_once_the_map_sees_beyond_it() -> None:
    """Driving to the farthest frontier, the map sees past it before the base gets there: the
    drive ends there (the reasoner chooses again) with the frontier no longer open."""
    episode = make_episodes("test", 1, seed=0)[0][0]
    with EmbodiedEpisode(episode) as env:
        goal, _ = _farthest_frontier(env)
        drive = env.robot.drive_to(goal, 0.3, 200, until=lambda: env.robot.frontier_seen(goal, every=1))
        assert drive.code == NavError.CANCELED and not env.robot.out_of_actions
        assert math.dist(env.world.pose[:2], goal) > 0.3  # short of the goal
        near = env.config.planner.frontier_seen_m
        assert not any(math.dist(s.goal, goal) <= near for s in env.robot.open_frontiers())


def test_the_actions_of_a_failed_drive_are_counted_and_a_stopped_one_is_not() -> None:
    """A drive cut short by its metres (stopped: CANCELED) adds nothing; one that runs out of
    the navigator's time adds exactly the actions it took, under "out of time"."""
    episode = make_episodes("test", 1, seed=0)[0][0]
    with EmbodiedEpisode(episode) as env:
        goal, _ = _farthest_frontier(env)
        assert not env.robot.drive_to(goal, 0.3, 200, max_travel_m=0.5).success
        assert env.robot.failed_drive_actions == 0 and not env.robot.failed_drive_ends
        navigator = env.robot.navigator
        navigator.params = replace(navigator.params, timeout_s=3.0)  # [s] of simulated time
        before = env.robot.steps
        timed_out = env.robot.drive_to(goal, 0.3, 200)
        assert timed_out.code == NavError.TIMEOUT
        assert env.robot.failed_drive_actions == env.robot.steps - before > 0
        assert env.robot.failed_drive_ends == {"out of time": env.robot.failed_drive_actions}


def test_a_failed_drive_is_named_by_how_it_ended_and_the_table_lists_each_end_once() -> None:
    cases = [
        (NavResult(NavError.NO_VALID_PATH, "a detour", detour=True), "detour"),
        (NavResult(NavError.NO_VALID_PATH, "no path"), "no way"),
        (NavResult(NavError.INVALID_GOAL, "off the map"), "no way"),
        (NavResult(NavError.STUCK, "no progress"), "stuck"),
        (NavResult(NavError.TIMEOUT, "not there"), "out of time"),
    ]
    for result, end in cases:
        assert drive_end(result) == end, result
    assert FAILED_DRIVE_ENDS == ("detour", "no way", "stuck", "out of time")
