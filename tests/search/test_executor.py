"""The affordance executor's policy over a recording stand-in for the robot's skills."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from sg_search.planning.navigator import NavError
from sg_search.reasoning import Candidate
from sg_search.reasoning.base import SkillAffordance
from sg_search.scene_graph import Affordance, Layer, NodeState, SceneGraph, SceneNode
from sg_search.search.executor import AffordanceExecutor, ExecutorError, SkillResult, navigated


@dataclass
class RecordingSkills:
    """Test double of a robot: records calls; results scripted per skill."""

    navigation: list[SkillResult] = field(default_factory=lambda: [SkillResult(True, 2.0)])
    manipulation: SkillResult = field(default_factory=lambda: SkillResult(True, message="opened"))
    calls: list[str] = field(default_factory=list)
    states: dict[str, NodeState] = field(default_factory=dict)

    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        self.calls.append(f"navigate {node.id} {purpose}")
        return self.navigation.pop(0) if len(self.navigation) > 1 else self.navigation[0]

    def open(self, node: SceneNode) -> SkillResult:
        self.calls.append(f"open {node.id}")
        return self.manipulation

    def close(self, node: SceneNode) -> SkillResult:
        self.calls.append(f"close {node.id}")
        return self.manipulation

    def look(self, node: SceneNode) -> SkillResult:
        self.calls.append(f"look {node.id}")
        return SkillResult(True)

    def look_around(self, level: bool = False) -> SkillResult:
        self.calls.append("look around" + (" level" if level else ""))
        return self.navigation[-1]

    def set_state(self, node: SceneNode, state: NodeState) -> None:
        self.states[node.id] = state


def _graph() -> SceneGraph:
    graph = SceneGraph()
    graph.upsert_node(SceneNode("kitchen", Layer.ROOM, "room", "kitchen", state=NodeState.UNEXPLORED))
    flags = Affordance.OPENABLE | Affordance.RECEPTACLE | Affordance.INSPECTABLE
    graph.upsert_node(
        SceneNode("cab", Layer.OBJECT, "container", "cabinet", affordances=flags, state=NodeState.CLOSED)
    )
    return graph


def test_open_reaches_opens_records_and_looks_inside() -> None:
    skills = RecordingSkills()
    report = AffordanceExecutor(skills).execute(Candidate("cab", SkillAffordance.OPEN), _graph())
    assert report.success and report.path_length == 2.0
    assert skills.calls == ["navigate cab reach", "open cab", "look cab"]
    assert skills.states == {"cab": NodeState.OPEN}


def test_navigating_to_an_object_ends_within_reach_facing_it() -> None:
    skills = RecordingSkills()
    report = AffordanceExecutor(skills).execute(Candidate("cab", SkillAffordance.NAVIGATE), _graph())
    assert report.success and report.path_length == 2.0
    assert skills.calls == ["navigate cab reach", "look cab"] and skills.states == {}


@pytest.mark.parametrize(
    ("code", "looks"),
    [(ExecutorError.NONE, True), (ExecutorError.TIMEOUT, True), (ExecutorError.CANCELED, False),
     (ExecutorError.UNAVAILABLE, False)],
)  # fmt: skip
def test_a_drive_to_an_object_that_falls_short_still_ends_facing_it(code: ExecutorError, looks: bool) -> None:
    short = SkillResult(False, 1.5, "no progress after 3 recoveries", code=code)
    skills = RecordingSkills(navigation=[short])
    report = AffordanceExecutor(skills).execute(Candidate("cab", SkillAffordance.NAVIGATE), _graph())
    assert not report.success and report.path_length == 1.5
    assert report.code == (ExecutorError.NAVIGATION_FAILED if code == ExecutorError.NONE else code)
    assert skills.calls == ["navigate cab reach"] + (["look cab"] if looks else [])


def test_navigation_is_retried_once_when_safe_and_then_reported() -> None:
    skills = RecordingSkills(navigation=[SkillResult(False, 1.0, "stuck", retryable=True)])
    report = AffordanceExecutor(skills, navigation_retries=1).execute(
        Candidate("kitchen", SkillAffordance.NAVIGATE), _graph()
    )
    assert not report.success and report.code == ExecutorError.NAVIGATION_FAILED
    assert skills.calls == ["navigate kitchen explore"] * 2 and report.path_length == 2.0
    assert "kitchen" not in skills.states


def test_a_failed_opening_is_not_retried_and_keeps_the_state() -> None:
    skills = RecordingSkills(manipulation=SkillResult(False, message="locked"))
    report = AffordanceExecutor(skills).execute(Candidate("cab", SkillAffordance.OPEN), _graph())
    assert report.code == ExecutorError.MANIPULATION_FAILED and report.message == "locked"
    assert skills.calls == ["navigate cab reach", "open cab"] and not skills.states


def test_an_open_refused_from_the_wrong_side_is_tried_from_the_next_side_only() -> None:
    """The skill says another side is left (retryable): approach and open again, up to
    ``open_sides`` sides; a locked door (not retryable) is not tried again."""
    wrong = SkillResult(False, message="wrong side", retryable=True, code=ExecutorError.MANIPULATION_FAILED)
    skills = RecordingSkills(navigation=[SkillResult(True, 2.0), SkillResult(True, 3.0)], manipulation=wrong)
    report = AffordanceExecutor(skills, open_sides=2).execute(
        Candidate("cab", SkillAffordance.OPEN), _graph()
    )
    assert not report.success and report.code == ExecutorError.MANIPULATION_FAILED
    assert skills.calls == ["navigate cab reach", "open cab"] * 2 and report.path_length == 5.0
    assert not skills.states

    class SecondSideOpens(RecordingSkills):
        def open(self, node: SceneNode) -> SkillResult:
            super().open(node)
            return wrong if self.calls.count(f"open {node.id}") == 1 else SkillResult(True, message="opened")

    skills = SecondSideOpens(navigation=[SkillResult(True, 2.0), SkillResult(True, 3.0)])
    report = AffordanceExecutor(skills, open_sides=3).execute(
        Candidate("cab", SkillAffordance.OPEN), _graph()
    )
    assert report.success and report.path_length == 5.0
    assert skills.calls == ["navigate cab reach", "open cab"] * 2 + ["look cab"]
    assert skills.states == {"cab": NodeState.OPEN}


def test_an_unavailable_skill_server_keeps_its_code() -> None:
    down = SkillResult(False, message="planner is not running", code=ExecutorError.UNAVAILABLE)
    skills = RecordingSkills(navigation=[down])
    report = AffordanceExecutor(skills).execute(Candidate("kitchen", SkillAffordance.NAVIGATE), _graph())
    assert report.code == ExecutorError.UNAVAILABLE and skills.calls == ["navigate kitchen explore"]


def test_unknown_node_and_room_exploration() -> None:
    skills = RecordingSkills()
    executor = AffordanceExecutor(skills)
    missing = executor.execute(Candidate("nope", SkillAffordance.INSPECT), _graph())
    assert missing.code == ExecutorError.UNKNOWN_NODE and not skills.calls
    assert executor.execute(Candidate("kitchen", SkillAffordance.NAVIGATE), _graph()).success
    assert skills.states == {"kitchen": NodeState.EXPLORED}


def test_a_frontier_reached_without_driving_is_a_failure_not_an_endless_success() -> None:
    graph = _graph()
    graph.upsert_node(SceneNode("frontier_0", Layer.REGION, "frontier", position=(1.0, 0.0, 0.0)))
    there = AffordanceExecutor(RecordingSkills(navigation=[SkillResult(True, 0.0, "at frontier_0")]))
    report = there.execute(Candidate("frontier_0", SkillAffordance.NAVIGATE), graph)
    assert (
        not report.success
        and report.code == ExecutorError.NAVIGATION_FAILED
        and report.message.startswith("0 m driven to frontier frontier_0")
    )
    moved = AffordanceExecutor(RecordingSkills(navigation=[SkillResult(True, 1.5)]))
    assert moved.execute(Candidate("frontier_0", SkillAffordance.NAVIGATE), graph).success


def test_close_is_tried_where_the_base_stands_and_approaches_only_when_refused() -> None:
    opened = _graph()
    opened.upsert_node(replace(opened.node("cab"), state=NodeState.OPEN))
    here = RecordingSkills(manipulation=SkillResult(True, message="closed"))
    assert AffordanceExecutor(here).execute(Candidate("cab", SkillAffordance.CLOSE), opened).success
    assert here.calls == ["close cab"] and here.states == {"cab": NodeState.EXPLORED}  # not opened again
    refused = RecordingSkills(manipulation=SkillResult(False, message="not in front of it"))
    report = AffordanceExecutor(refused).execute(Candidate("cab", SkillAffordance.CLOSE), opened)
    assert not report.success and refused.calls == ["close cab", "navigate cab reach", "close cab"]
    cannot = RecordingSkills(manipulation=SkillResult(False, code=ExecutorError.NOT_AFFORDED))
    AffordanceExecutor(cannot).execute(Candidate("cab", SkillAffordance.CLOSE), opened)
    assert cannot.calls == ["close cab"] and not cannot.states  # no drive for a skill the robot lacks


def test_look_around_needs_no_node_and_a_failed_turn_is_a_failed_navigation() -> None:
    skills = RecordingSkills(navigation=[SkillResult(True)])
    report = AffordanceExecutor(skills).execute(Candidate("", SkillAffordance.LOOK_AROUND), SceneGraph())
    assert report.success and skills.calls == ["look around"] and not skills.states
    stuck = RecordingSkills(navigation=[SkillResult(False, message="no transform")])
    failed = AffordanceExecutor(stuck).execute(Candidate("", SkillAffordance.LOOK_AROUND), SceneGraph())
    assert not failed.success and failed.code == ExecutorError.NAVIGATION_FAILED
    assert failed.message == "no transform"


def test_a_look_around_in_a_room_drives_in_then_turns_with_the_head_level() -> None:
    skills = RecordingSkills(navigation=[SkillResult(True, 4.0), SkillResult(True, 0.0)])
    report = AffordanceExecutor(skills).execute(Candidate("kitchen", SkillAffordance.LOOK_AROUND), _graph())
    assert report.success and report.path_length == 4.0
    assert skills.calls == ["navigate kitchen explore", "look around level"] and not skills.states
    shut = RecordingSkills(navigation=[SkillResult(False, 1.0, "no way over the map"), SkillResult(True)])
    failed = AffordanceExecutor(shut).execute(Candidate("kitchen", SkillAffordance.LOOK_AROUND), _graph())
    assert not failed.success and failed.code == ExecutorError.NAVIGATION_FAILED and failed.path_length == 1.0
    assert shut.calls == ["navigate kitchen explore"]  # no turn where the base could not get in
    refused = AffordanceExecutor(skills).execute(Candidate("cab", SkillAffordance.LOOK_AROUND), _graph())
    assert not refused.success and refused.code == ExecutorError.NOT_AFFORDED


@pytest.mark.parametrize(
    ("code", "success", "error", "retryable"),
    [
        (NavError.NONE, True, ExecutorError.NONE, False),
        (NavError.NO_VALID_PATH, False, ExecutorError.NO_PATH, False),  # the same over the same map
        (NavError.STUCK, False, ExecutorError.NAVIGATION_FAILED, True),  # a re-plan goes round it
        (NavError.TIMEOUT, False, ExecutorError.NAVIGATION_FAILED, False),
        (NavError.CANCELED, False, ExecutorError.CANCELED, False),
        (NavError.UNKNOWN_NODE, False, ExecutorError.NAVIGATION_FAILED, False),  # an object: a fault
        (NavError.UNKNOWN, False, ExecutorError.NAVIGATION_FAILED, False),
    ],
)
def test_a_navigations_end_is_one_skill_result_in_both_wirings(
    code: NavError, success: bool, error: ExecutorError, retryable: bool
) -> None:
    mug = SceneNode("mug_1", Layer.OBJECT, "object", "mug")
    result = navigated(code, 1.5, mug, "reach", "the planner's words")
    assert (result.success, result.code, result.retryable) == (success, error, retryable)
    assert result.path_length == 1.5
    assert success or result.message == "navigation to mug_1 (reach): the planner's words"


def test_a_frontier_mapped_since_the_graph_listed_it_is_an_arrival() -> None:
    """The executor then counts its 0 m drive as a failure (the search does not choose it again)."""
    frontier = SceneNode("frontier_3", Layer.OBJECT, "frontier", "frontier")
    gone = navigated(NavError.UNKNOWN_NODE, 0.0, frontier, "explore")
    assert gone.success and "gone" in gone.message
    skills = RecordingSkills(navigation=[gone])
    graph = SceneGraph()
    graph.upsert_node(frontier)
    report = AffordanceExecutor(skills).execute(Candidate("frontier_3", SkillAffordance.NAVIGATE), graph)
    assert not report.success and report.code == ExecutorError.NAVIGATION_FAILED
