from __future__ import annotations

import itertools

import pytest
from world_doubles import ScriptedWorld, WatchedWorld

from sg_search.reasoning import Candidate, create_reasoner
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.observations import IntegrationParams, ObjectInstance, integrate_instances
from sg_search.scene_graph.prior import add_prior
from sg_search.search import ExecutionReport, SearchError, SearchParams, Verifier, run_search
from sg_search.search.verification import CredibilityParams


def _house() -> SceneGraph:
    return add_prior(
        {
            "rooms": [
                {"id": "k", "category": "kitchen", "center": [0, 0, 1], "size": [4, 4, 2]},
                {
                    "id": "b",
                    "category": "bedroom",
                    "center": [4, 0, 1],
                    "size": [4, 4, 2],
                    "state": "unexplored",
                },
            ],
            "furniture": [
                {
                    "id": "drawer",
                    "category": "drawer",
                    "room": "k",
                    "center": [1, 1, 0.4],
                    "size": [0.5, 0.5, 0.8],
                    "affordances": ["openable"],
                    "state": "closed",
                }
            ],
        },
        SceneGraph(),
    )


def _no_sleep(_: float) -> None:
    pass


def test_observe_only_search_finds_object_when_perception_reports_it() -> None:
    graph = _house()
    calls = itertools.count()

    def read_graph() -> SceneGraph:
        if next(calls) == 3:
            integrate_instances(graph, 1, [ObjectInstance("p", "passport", 0.8, (1.0, 1.0, 0.2))])
        return graph

    steps = []
    outcome = run_search(
        "find the passport",
        create_reasoner("random"),
        WatchedWorld(read_graph),
        params=SearchParams(max_steps=10),
        on_step=steps.append,
        sleep=_no_sleep,
    )
    assert outcome.success and outcome.found is not None and outcome.found.id == "p"
    assert outcome.steps == 4
    assert "inside drawer" in outcome.explanation
    assert [s.phase for s in steps] == ["reason", "reason", "reason", "verify", "found"]
    assert {s.target_node_id for s in steps[:3]} <= {"drawer", "b"}


def test_low_confidence_detection_is_not_a_find() -> None:
    graph = _house()
    integrate_instances(graph, 1, [ObjectInstance("p", "passport", 0.3, (1.0, 1.0, 0.2))])
    outcome = run_search(
        "passport",
        create_reasoner("random"),
        WatchedWorld(lambda: graph),
        params=SearchParams(max_steps=3, min_confidence=0.5),
        sleep=_no_sleep,
    )
    assert outcome.error == SearchError.NOT_FOUND and outcome.steps == 3


def test_failed_nodes_are_retried_once_then_no_targets_left() -> None:
    graph = _house()
    tried: list[str] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        tried.append(candidate.node_id)
        return ExecutionReport(False, 1.5, "door jammed")

    outcome = run_search(
        "passport",
        create_reasoner("random"),
        ScriptedWorld(lambda: graph, execute),
        params=SearchParams(max_steps=10),
        sleep=_no_sleep,
    )
    assert sorted(tried) == ["b", "b", "drawer", "drawer"]  # each failed node gets one more try
    assert outcome.error == SearchError.NO_REACHABLE_TARGETS
    assert outcome.path_length == 6.0


def test_invalid_query_cancel_timeout_and_missing_graph() -> None:
    reasoner = create_reasoner("random")
    graph = _house()
    world = WatchedWorld(lambda: graph)
    assert run_search("find the", reasoner, world).error == SearchError.INVALID_QUERY
    assert run_search("mug", reasoner, world, should_stop=lambda: True).error == SearchError.CANCELED
    assert run_search("mug", reasoner, WatchedWorld(lambda: None)).error == SearchError.GRAPH_UNAVAILABLE
    clock = itertools.count(0.0, 10.0)
    timed = run_search(
        "mug",
        reasoner,
        world,
        params=SearchParams(timeout_s=25.0),
        clock=lambda: next(clock),
        sleep=_no_sleep,
    )
    assert timed.error == SearchError.TIMEOUT


def test_random_reasoner_is_reproducible_and_unknown_names_are_listed() -> None:
    graph = _house()
    from sg_search.reasoning import ReasonerInput

    a = create_reasoner("random", {"seed": 5}).decide(ReasonerInput(graph, "mug"))
    b = create_reasoner("random", {"seed": 5}).decide(ReasonerInput(graph, "mug"))
    assert a == b and {c.node_id for c in a.ranked} == {"b", "drawer"}
    with pytest.raises(KeyError, match=r"available: .*random"):
        create_reasoner("oracle")


def test_verification_rejects_a_false_candidate_and_accepts_the_real_one() -> None:
    graph = _house()
    integrate_instances(graph, 1, [ObjectInstance("fake", "passport", 0.9, (-1.0, -1.0, 0.2))])
    checked: list[str] = []

    def execute(candidate: Candidate) -> ExecutionReport:  # opening the drawer reveals the passport
        integrate_instances(graph, 2, [ObjectInstance("p", "passport", 0.9, (1.0, 1.0, 0.2))])
        return ExecutionReport(True, 2.0)

    def seen(node: SceneNode) -> bool:  # the fake one is not seen again from close by
        checked.append(node.id)
        return node.id == "p"

    world = ScriptedWorld(lambda: graph, execute, seen)
    no_context = Verifier(world, CredibilityParams(), lambda labels, goal: [0.0] * len(labels))
    outcome = run_search("passport", create_reasoner("random"), world, verifier=no_context, sleep=_no_sleep)
    assert outcome.success and outcome.found is not None and outcome.found.id == "p"
    # 0.9 x the context floor 0.3 per observation: three observations of p reach 0.8; the fake
    # one, never seen again, is rejected after 10
    assert checked == ["fake"] * 10 + ["p"] * 3 and outcome.rejected_candidates == ["fake"]
    assert outcome.path_length == 3.0  # two approaches and one execution
    assert "credibility 0.81/0.80 after 3 observations" in outcome.explanation
    assert "rejected passport fake" in outcome.story[0]


def test_a_fatal_executor_report_ends_the_search_at_once() -> None:
    calls: list[str] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        calls.append(candidate.node_id)
        return ExecutionReport(False, message="planner is not running", code=8, fatal=True)

    outcome = run_search(
        "passport", create_reasoner("random"), ScriptedWorld(_house, execute), sleep=_no_sleep
    )
    assert outcome.error == SearchError.EXECUTION_FAILED and len(calls) == 1
    assert "planner is not running" in outcome.message


def test_consecutive_failures_end_the_search_and_decisions_are_recorded() -> None:
    graph = _house()
    drawers = [ObjectInstance(f"d{k}", "drawer", 0.9, (float(k), 5.0, 0.4)) for k in range(6)]
    integrate_instances(graph, 1, drawers, params=IntegrationParams(openable_categories=("drawer",)))
    outcome = run_search(
        "passport",
        create_reasoner("random"),
        ScriptedWorld(lambda: graph, lambda c: ExecutionReport(False, message="blocked")),
        params=SearchParams(max_failures=3),
        sleep=_no_sleep,
    )
    assert outcome.error == SearchError.EXECUTION_FAILED and outcome.steps == 3
    assert [d.step for d in outcome.decisions] == [1, 2, 3]
    assert all(d.top and d.top[0][0] == d.chosen for d in outcome.decisions)
