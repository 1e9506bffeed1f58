"""Before a search gives up with nothing left to do it looks around once in each room, the
best first (``SearchParams.sweep_rooms``; the executor drives in and turns with the head
level): what that shows is searched as usual."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from world_doubles import ScriptedWorld

from sg_search.reasoning import Candidate, SkillAffordance, create_reasoner
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.observations import ObjectInstance, integrate_instances
from sg_search.scene_graph.prior import add_prior
from sg_search.search import ExecutionReport, SearchError, SearchParams, run_search

ROOMS = [
    {"id": "k", "category": "kitchen", "center": [8, 0, 1], "size": [4, 4, 2]},
    {"id": "b", "category": "bedroom", "center": [0, 0, 1], "size": [4, 4, 2]},
    {"id": "h", "category": "bathroom", "center": [0, 8, 1], "size": [4, 4, 2]},
]
CABINET = {
    "id": "cabinet", "category": "cabinet", "room": "k", "center": [9, 1, 1.8], "size": [0.8, 0.35, 0.7],
    "affordances": ["openable", "receptacle"], "state": "closed",
}  # fmt: skip
DISTANCES = {"k": 5.0, "b": 2.0, "h": 9.0}  # [m] from the base


class RoomsWorld(ScriptedWorld):
    """Three explored rooms and nothing to act on; the script decides what each action does."""

    def __init__(self, graph: SceneGraph, execute: Callable[[Candidate], ExecutionReport]) -> None:
        super().__init__(lambda: graph, execute)

    def distances(self) -> dict[str, float]:
        return dict(DISTANCES)


def _done(candidate: Candidate) -> tuple[str, str]:
    return SkillAffordance(candidate.affordance).name, candidate.node_id


def test_each_room_is_swept_once_nearest_first_then_the_search_gives_up() -> None:
    graph = add_prior({"rooms": ROOMS}, SceneGraph())
    done: list[tuple[str, str]] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        done.append(_done(candidate))
        return ExecutionReport(
            candidate.node_id != "h", 1.0, "no way into h" if candidate.node_id == "h" else ""
        )

    steps: list[Any] = []
    outcome = run_search(
        "passport", create_reasoner("random"), RoomsWorld(graph, execute),
        params=SearchParams(max_steps=20, sweep_rooms=True), on_step=steps.append,
    )  # fmt: skip
    assert outcome.error == SearchError.NO_REACHABLE_TARGETS
    # a reasoner with no opinion on rooms: nearest first; one that could not be got into is not tried again
    assert done == [("LOOK_AROUND", "b"), ("LOOK_AROUND", "k"), ("LOOK_AROUND", "h")]
    assert [s.phase for s in steps if s.phase in ("sweep", "recover")] == [
        "sweep",
        "sweep",
        "sweep",
        "recover",
    ]
    assert outcome.path_length == 3.0

    done.clear()
    outcome = run_search("passport", create_reasoner("random"), RoomsWorld(graph, execute),
                         params=SearchParams(max_steps=20, sweep_rooms=False))  # fmt: skip
    assert outcome.error == SearchError.NO_REACHABLE_TARGETS and done == []


def test_scout_turns_first_in_the_likeliest_room_and_opens_what_the_turn_showed() -> None:
    graph = add_prior({"rooms": ROOMS}, SceneGraph())
    cabinet = add_prior({"rooms": ROOMS, "furniture": [CABINET]}, SceneGraph()).get("cabinet")
    assert cabinet is not None
    done: list[tuple[str, str]] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        done.append(_done(candidate))
        if candidate.affordance == SkillAffordance.LOOK_AROUND and candidate.node_id == "k":
            graph.upsert_node(cabinet)  # the wall cabinet the camera, pitched at the floor, did not show
        elif candidate.affordance == SkillAffordance.OPEN:
            integrate_instances(graph, 7, [ObjectInstance("pan", "frying pan", 0.9, (9.0, 1.0, 1.7))])
        return ExecutionReport(True, 1.0)

    outcome = run_search("frying pan", create_reasoner("scout"), RoomsWorld(graph, execute),
                         params=SearchParams(max_steps=20, sweep_rooms=True))  # fmt: skip
    assert outcome.success and outcome.found is not None and outcome.found.id == "pan"
    # the kitchen, though the bedroom is nearer; nothing more once the pan was found
    assert done == [("LOOK_AROUND", "k"), ("OPEN", "cabinet")]


def test_a_look_around_that_finds_the_executor_gone_ends_the_search_so() -> None:
    graph = add_prior({"rooms": ROOMS}, SceneGraph())
    done: list[tuple[str, str]] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        done.append(_done(candidate))
        return ExecutionReport(False, 0.0, "the affordance executor is gone", fatal=True)

    outcome = run_search("passport", create_reasoner("random"), RoomsWorld(graph, execute),
                         params=SearchParams(max_steps=20, sweep_rooms=True))  # fmt: skip
    assert outcome.error == SearchError.EXECUTION_FAILED and "gone" in outcome.message
    assert done == [("LOOK_AROUND", "b")]  # not one more room
