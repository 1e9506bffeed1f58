"""The whole pipeline on one simulated episode, in one process (what bench closed-loop runs)."""

from __future__ import annotations

from sg_search.bench.closed_loop import PHASES, search_episode
from sg_search.bench.embodied_world import EmbodiedEpisode
from sg_search.bench.failures import EndCause, classify
from sg_search.scene_graph import Layer
from sg_search.sim.episodes import make_episodes
from sg_search.sim.metrics import EpisodeRun


def test_an_episode_is_found_verified_and_counted_as_objectnav_success() -> None:
    episode = make_episodes("test", 2, seed=0)[0][0]  # a sack on the kitchen floor, from the garage
    with EmbodiedEpisode(episode) as env:
        run = EpisodeRun(env.world, "target")
        outcome = search_episode(env, "scout")
        metrics = run.result()
        assert outcome.success, outcome.message
        assert outcome.found is not None and outcome.found.category == episode.query
        phases = [s.phase for s in outcome.trace]
        assert phases[-2:] == ["verify", "found"] and "credibility" in outcome.explanation
        assert metrics["success"] == 1.0 and 0.0 < metrics["SPL"] <= 1.0
        rooms = env.scene_graph.nodes(Layer.ROOM)
        assert rooms and any(r.category == "kitchen" for r in rooms)
        assert env.scene_graph.node(outcome.found.id).room_id in {r.id for r in rooms}
        assert not env.robot.out_of_actions
        facts = env.facts(outcome, metrics["success"] > 0, env.robot.out_of_actions)
        assert facts.entered_room and facts.detected and facts.fused and facts.found_target
        assert classify(facts) == EndCause.FOUND
        spent = env.robot.actions_by_phase
        assert set(spent) <= set(PHASES) and sum(spent.values()) == env.robot.steps
        assert spent["look-around"] == 12 and spent["verification"] > 0
