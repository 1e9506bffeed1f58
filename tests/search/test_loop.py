from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import pytest
from world_doubles import ScriptedWorld, WatchedWorld

from sg_search.reasoning import Candidate, SkillAffordance, create_reasoner
from sg_search.scene_graph import Box3D, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.observations import (
    IntegrationParams,
    ObjectInstance,
    current_unit,
    integrate_instances,
)
from sg_search.scene_graph.prior import add_prior
from sg_search.search import ExecutionReport, SearchError, SearchParams, Verifier, run_search
from sg_search.search.executor import AffordanceExecutor, ExecutorError, SkillResult
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

    a = create_reasoner("random", {"seed": 3}).decide(ReasonerInput(graph, "mug"))
    b = create_reasoner("random", {"seed": 3}).decide(ReasonerInput(graph, "mug"))
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


@pytest.mark.parametrize("turned", [True, False])
def test_an_acting_search_begins_with_a_full_turn_and_goes_on_when_it_fails(turned: bool) -> None:
    calls: list[Candidate] = []

    def execute(candidate: Candidate) -> ExecutionReport:
        calls.append(candidate)
        return ExecutionReport(
            turned or candidate.affordance != SkillAffordance.LOOK_AROUND, message="no odometry"
        )

    outcome = run_search(
        "passport",
        create_reasoner("nearest"),
        ScriptedWorld(_house, execute),
        params=SearchParams(max_steps=2, look_around=True),
        sleep=_no_sleep,
    )
    assert calls[0] == Candidate("", SkillAffordance.LOOK_AROUND)
    assert [c.affordance for c in calls[1:]] == [SkillAffordance.NAVIGATE] * 2  # the search went on
    assert outcome.trace[0].phase == "look-around"
    assert (outcome.trace[1].phase == "recover") == (not turned)
    world = ScriptedWorld(_house, execute)
    plain = run_search(
        "passport", create_reasoner("nearest"), world, params=SearchParams(max_steps=1), sleep=_no_sleep
    )
    assert SkillAffordance.LOOK_AROUND not in [c.affordance for c in calls[3:]] and plain.steps == 1


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


@pytest.mark.parametrize(
    ("code", "driven_m", "ends"),
    [
        (ExecutorError.NAVIGATION_FAILED, 4.0, SearchError.NO_REACHABLE_TARGETS),  # the map's fault
        (ExecutorError.NO_PATH, 0.0, SearchError.NO_REACHABLE_TARGETS),  # no way on the map
        (ExecutorError.NAVIGATION_FAILED, 0.5, SearchError.EXECUTION_FAILED),  # barely moved: stuck
        (ExecutorError.MANIPULATION_FAILED, 4.0, SearchError.EXECUTION_FAILED),  # the arm's fault
    ],
)
def test_failed_drives_that_got_somewhere_do_not_end_the_search_as_a_fault(
    code: ExecutorError, driven_m: float, ends: SearchError
) -> None:
    """Six drawers, each out of reach: a base that drove 4 m towards each works, and a planner
    that found no way to any is the map's verdict, so the search tries all six (and each once
    more from where it ends) before "nothing reachable"; a base that moves under
    ``unreachable_after_m`` or an open that fails is a fault after three."""
    graph = _house()
    drawers = [ObjectInstance(f"d{k}", "drawer", 0.9, (float(k), 5.0, 0.4)) for k in range(6)]
    integrate_instances(graph, 1, drawers, params=IntegrationParams(openable_categories=("drawer",)))
    tried: list[str] = []

    def fail(candidate: Candidate) -> ExecutionReport:
        tried.append(candidate.node_id)
        return ExecutionReport(False, driven_m, f"could not reach {candidate.node_id}", int(code))

    outcome = run_search(
        "passport", create_reasoner("random"), ScriptedWorld(lambda: graph, fail),
        params=SearchParams(max_steps=50, max_failures=3, unreachable_after_m=1.0), sleep=_no_sleep,
    )  # fmt: skip
    assert outcome.error == ends, outcome.message
    if ends == SearchError.NO_REACHABLE_TARGETS:
        assert len(tried) == 2 * len(set(tried)) and len(set(tried)) >= 6
    else:
        assert len(tried) == 3


class CabinetSkills:
    """Test double of a robot's skills (no robot in a unit test) over ``graph``: every skill
    succeeds except closing when ``can_close`` is False; the ``holder``-th opening (1 = the
    first) shows the passport."""

    def __init__(self, graph: SceneGraph, holder: int, can_close: bool = True) -> None:
        self.graph, self.holder, self.can_close = graph, holder, can_close
        self.calls: list[str] = []

    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        return SkillResult(True, 1.0)

    def open(self, node: SceneNode) -> SkillResult:
        self.calls.append(f"open {node.id}")
        if sum(c.startswith("open") for c in self.calls) == self.holder:
            integrate_instances(self.graph, 1, [ObjectInstance("p", "passport", 0.9, (1.0, 1.0, 0.2))])
        return SkillResult(True)

    def close(self, node: SceneNode) -> SkillResult:
        self.calls.append(f"close {node.id}")
        if not self.can_close:
            return SkillResult(False, message="no closing skill", code=ExecutorError.NOT_AFFORDED)
        return SkillResult(True)

    def look(self, node: SceneNode) -> SkillResult:
        return SkillResult(True)

    def look_around(self, level: bool = False) -> SkillResult:
        self.calls.append("look around")
        return SkillResult(True)

    def set_state(self, node: SceneNode, state: NodeState) -> None:
        now = current_unit(self.graph, node)  # as the worlds do
        if now is not None:
            self.graph.upsert_node(replace(now, state=state))


def _three_drawers() -> SceneGraph:
    graph = _house()
    for name, x in (("drawer2", 2.0), ("drawer3", -1.0)):
        drawer = graph.node("drawer")
        graph.upsert_node(replace(drawer, id=name, position=(x, 1.0, 0.4), bbox=None))
    return graph


@pytest.mark.parametrize("holder", [1, 2, 3])
def test_a_container_opened_in_vain_is_closed_again_and_never_reopened(holder: int) -> None:
    graph = _three_drawers()
    skills = CabinetSkills(graph, holder)
    world = ScriptedWorld(lambda: graph, lambda c: AffordanceExecutor(skills).execute(c, graph))
    outcome = run_search("passport", create_reasoner("random", {"seed": 3}), world,
                         params=SearchParams(max_steps=20), sleep=_no_sleep)  # fmt: skip
    assert outcome.success and outcome.found is not None and outcome.found.id == "p"
    opened = [c.split()[1] for c in skills.calls if c.startswith("open")]
    assert len(opened) == len(set(opened)) == holder  # none opened twice
    tidy = [f"{verb} {d}" for d in opened[:-1] for verb in ("open", "close")]
    assert skills.calls == [*tidy, f"open {opened[-1]}"]  # the holder stays open
    assert all(graph.node(d).state == NodeState.EXPLORED for d in opened[:-1])


def test_a_robot_that_cannot_close_leaves_doors_open_and_searches_on() -> None:
    graph = _three_drawers()
    skills = CabinetSkills(graph, 3, can_close=False)
    world = ScriptedWorld(lambda: graph, lambda c: AffordanceExecutor(skills).execute(c, graph))
    outcome = run_search("passport", create_reasoner("random", {"seed": 3}), world,
                         params=SearchParams(max_steps=20, max_failures=1), sleep=_no_sleep)  # fmt: skip
    assert outcome.success  # a failed close is no failure of the search (max_failures 1)
    vain = [c.split()[1] for c in skills.calls if c.startswith("close")]
    assert len(vain) == 2 and all(graph.node(d).state == NodeState.OPEN for d in vain)
    off = CabinetSkills(graph := _three_drawers(), 3)
    world = ScriptedWorld(lambda: graph, lambda c: AffordanceExecutor(off).execute(c, graph))
    assert run_search("passport", create_reasoner("random", {"seed": 3}), world,
                      params=SearchParams(close_after_search=False), sleep=_no_sleep).success  # fmt: skip
    assert not [c for c in off.calls if c.startswith("close")]


class ReshapingSkills(CabinetSkills):
    """As :class:`CabinetSkills`, but an opened drawer comes back from perception as a new
    node ``<id>_open`` whose box has grown by its open front (the old node is gone)."""

    def open(self, node: SceneNode) -> SkillResult:
        result = super().open(node)
        assert node.bbox is not None
        grown = Box3D(node.bbox.center, (node.bbox.size[0], node.bbox.size[1] + 0.4, node.bbox.size[2]))
        self.graph.remove_node(node.id)
        self.graph.upsert_node(replace(node, id=f"{node.id}_open", bbox=grown, state=NodeState.CLOSED))
        return result


def test_a_container_perception_reported_anew_once_open_is_the_one_closed() -> None:
    graph = _house()
    skills = ReshapingSkills(graph, holder=2)  # the only drawer holds nothing
    world = ScriptedWorld(lambda: graph, lambda c: AffordanceExecutor(skills).execute(c, graph))
    outcome = run_search("passport", create_reasoner("random"), world,
                         params=SearchParams(max_steps=5), sleep=_no_sleep)  # fmt: skip
    assert not outcome.success
    assert skills.calls[:2] == ["open drawer", "close drawer_open"] and "open drawer_open" not in skills.calls
    assert graph.node("drawer_open").state == NodeState.EXPLORED


class FarWorld(ScriptedWorld):
    """Approaches to the candidate fail ``failures`` times (the base never got within reach),
    then arrive; every other execution succeeds after 1 m of driving. With ``seen_from_afar``
    false, re-observations see the candidate only once an approach arrived."""

    def __init__(self, graph: SceneGraph, failures: int, seen_from_afar: bool = True) -> None:
        super().__init__(lambda: graph, self._act, lambda _: seen_from_afar or self.arrived)
        self.failures, self.approaches = failures, 0

    @property
    def arrived(self) -> bool:
        return self.approaches > self.failures

    def _act(self, candidate: Candidate) -> ExecutionReport:
        return ExecutionReport(True, 1.0)

    def approach(self, node: SceneNode) -> ExecutionReport:
        self.approaches += 1
        return ExecutionReport(self.arrived, 0.5)


def _kitchen_only() -> SceneGraph:
    """An explored kitchen and nothing else to act on."""
    room = {"id": "k", "category": "kitchen", "center": [0, 0, 1], "size": [4, 4, 2]}
    return add_prior({"rooms": [room], "furniture": []}, SceneGraph())


@pytest.mark.parametrize(
    ("house", "failures", "retried_at"),
    [(_house, 1, 5), (_house, 5, 5), (_kitchen_only, 1, 3)],
    ids=["arrives-the-second-time", "never-arrives", "nothing-else-to-do"],
)
def test_a_find_verified_out_of_reach_is_approached_again_before_the_search_ends(
    house: Callable[[], SceneGraph], failures: int, retried_at: int
) -> None:
    graph = house()
    integrate_instances(graph, 1, [ObjectInstance("p", "passport", 0.9, (-1.0, -1.0, 0.2))])
    world = FarWorld(graph, failures)
    verifier = Verifier(world, CredibilityParams(), lambda labels, goal: [0.0] * len(labels))
    params = SearchParams(unreached_retry_m=3.0)
    outcome = run_search(
        "passport", create_reasoner("random"), world, params=params, verifier=verifier, sleep=_no_sleep
    )
    assert outcome.success and outcome.found is not None and outcome.found.id == "p"
    # the first acceptance, out of reach, did not end the search: it went on (to the unexplored
    # bedroom, where there is one) and approached the passport again once the base had driven
    # 3 m more, or at the next step when nothing else was left; the second acceptance ends it,
    # arrived or not
    assert world.approaches == 2
    assert [s.step for s in outcome.trace if s.phase == "verify"] == [1, retried_at]
    assert outcome.story[0] == "saw passport p out of reach"
    assert "not within reach" in outcome.trace[1].explanation


@pytest.mark.parametrize("failures", [1, 5], ids=["arrives-the-second-time", "never-arrives"])
def test_a_candidate_unseen_from_where_its_approach_failed_is_not_rejected_there(failures: int) -> None:
    """Not seen again from where the base could not get within reach (the far side of a
    sofa) is no evidence against it: it is approached again, as an acceptance out of reach
    is, and only the second judgment stands."""
    graph = _house()
    integrate_instances(graph, 1, [ObjectInstance("p", "passport", 0.9, (-1.0, -1.0, 0.2))])
    world = FarWorld(graph, failures, seen_from_afar=False)
    verifier = Verifier(world, CredibilityParams(), lambda labels, goal: [0.0] * len(labels))
    outcome = run_search(
        "passport", create_reasoner("random"), world, params=SearchParams(unreached_retry_m=3.0),
        verifier=verifier, sleep=_no_sleep,
    )  # fmt: skip
    assert world.approaches == 2
    assert [s.step for s in outcome.trace if s.phase == "verify"] == [1, 5]
    assert "not within reach" in outcome.trace[1].explanation
    if failures == 1:
        assert outcome.success and outcome.found is not None and outcome.found.id == "p"
    else:
        assert not outcome.success and outcome.rejected_candidates == ["p"]
