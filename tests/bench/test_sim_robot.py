"""The simulated robot's drives stop at their budgets: actions, and metres driven (what an
approach's shared detour limit hands a drive)."""

from __future__ import annotations

from sg_search.bench.embodied_world import EmbodiedEpisode
from sg_search.planning.discrete import DiscreteParams
from sg_search.planning.navigator import NavError
from sg_search.sim.episodes import make_episodes


def test_a_drive_stops_once_it_has_driven_max_travel_m() -> None:
    episode = make_episodes("test", 1, seed=0)[0][0]
    with EmbodiedEpisode(episode) as env:
        env.look_around()
        field = env.robot.frontier_field()
        assert field is not None
        goal = max((s.goal for s in env.robot.open_frontiers()), key=field.distance_to)
        assert field.distance_to(goal) > 3.0  # far enough that the cap, not the goal, ends the drive
        start = env.world.travelled
        capped = env.robot.drive_to(goal, 0.3, 200, max_travel_m=1.0)
        assert not capped.success and capped.code == NavError.CANCELED
        assert 1.0 < env.world.travelled - start <= 1.0 + DiscreteParams().forward_step_m + 1e-6
        assert env.robot.drive_to(goal, 0.3, 200).success  # the goal was reachable all along
