"""The affordance executor: what to do with a chosen node, in terms of the robot's skills.

A reasoner picks (node, affordance); the executor turns that into skills and keeps the
graph's node states honest: NAVIGATE drives to a frontier or into a room (the room becomes
EXPLORED; a drive to a frontier that succeeds without a metre driven is a failure, so that the
search does not choose it forever: the base stood at it, or saw beyond it while turning), or
within reach of an object, facing it (how a search ends: ObjectNav's success region with the
object in view; reasoners do not choose it; a drive that falls short still ends facing it,
since verification re-observes it from there and may accept it); OPEN approaches within
reach, opens, marks the container OPEN and looks inside; INSPECT approaches the best viewpoint
and looks (the surface becomes EXPLORED); CLOSE closes from where the base stands (where it
opened it), approaching first only if that is refused, and marks it EXPLORED (the search
closes only what it opened and looked into: it is not opened again). Navigation is retried
``navigation_retries`` times when the skill says a retry is safe (a re-plan); an open is tried
again only where the skill says another side of the container is left (its estimated front was
refused), from that side, ``open_sides`` sides in all. LOOK_AROUND (no node) turns the base a
full turn in place: a search's first action, so that the first map is all around the base;
LOOK_AROUND on a room drives into the room and turns there with the head aimed over the room
(what a search does before it gives up: the walls and what hangs high on them, which a camera
pitched at the floor passes under).

The skills themselves are injected: the in-process simulator world's
(:mod:`sg_search.bench.embodied_world`) or the ROS node's (planner action, simulator services
or the HSR driver). Result codes equal the ExecuteAffordance action's constants.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

from sg_search.planning.navigator import NavError
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode
from sg_search.search.reports import ExecutionReport


class ExecutorError(IntEnum):
    """Result codes; the values equal ExecuteAffordance's constants."""

    NONE = 0
    UNKNOWN = 1
    UNKNOWN_NODE = 2
    NOT_AFFORDED = 3
    NAVIGATION_FAILED = 4
    MANIPULATION_FAILED = 5
    TIMEOUT = 6
    CANCELED = 7
    UNAVAILABLE = 8
    NO_PATH = 9  # the planner found no way over the map: none, or it grew into a detour


@dataclass(frozen=True)
class SkillResult:
    """One skill's outcome; ``path_length`` in metres; ``retryable``: trying again is safe."""

    success: bool
    path_length: float = 0.0
    message: str = ""
    retryable: bool = False
    code: ExecutorError = ExecutorError.NONE


def navigated(
    code: NavError, path_length: float, node: SceneNode, purpose: str, why: str = ""
) -> SkillResult:
    """A navigation's end as the navigate skill's result, the same in both hosts (the in-process
    world and the executor node, which reads the planner's NavigateTo result): ``code`` NONE is
    an arrival, and so is UNKNOWN_NODE for a frontier (mapped since the graph listed it: the
    executor then counts the 0 m drive as a failure); NO_VALID_PATH (no way over the map, or a
    way that grew into a detour) is NO_PATH, which the search does not count as a fault;
    CANCELED stays CANCELED; any other code is NAVIGATION_FAILED. Only a drive that got STUCK
    is safe to retry: a re-plan goes round what stopped it, while no way, a detour or a drive
    out of time is the same again over the same map. ``path_length``: metres driven; ``why``:
    the planner's words for a failure."""
    if code == NavError.NONE:
        return SkillResult(True, path_length, f"at {node.id}")
    if code == NavError.UNKNOWN_NODE and node.kind == "frontier":
        return SkillResult(True, path_length, f"{node.id} is gone: mapped since the graph listed it")
    error = {NavError.NO_VALID_PATH: ExecutorError.NO_PATH, NavError.CANCELED: ExecutorError.CANCELED}
    message = f"navigation to {node.id} ({purpose}): {why or code.name.lower()}"
    return SkillResult(
        False, path_length, message, code == NavError.STUCK, error.get(code, ExecutorError.NAVIGATION_FAILED)
    )


class Skills(Protocol):
    """What a robot (or simulator) offers the executor. ``purpose`` of a navigation:
    "explore" (a frontier or room), "view" (the best viewpoint of an object), "reach"
    (close enough to manipulate it)."""

    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        """Drive for ``purpose`` to ``node``."""
        ...

    def open(self, node: SceneNode) -> SkillResult:
        """Open a container within reach."""
        ...

    def close(self, node: SceneNode) -> SkillResult:
        """Close a container within reach."""
        ...

    def look(self, node: SceneNode) -> SkillResult:
        """Point the camera at the node and let perception observe it."""
        ...

    def look_around(self, level: bool = False) -> SkillResult:
        """Turn a full turn in place where the base stands, perception observing; ``level``:
        with the head aimed over the room (at a point ``level_look_ahead_m`` ahead and
        ``level_look_height_m`` high), not pitched at the floor."""
        ...

    def set_state(self, node: SceneNode, state: NodeState) -> None:
        """Record the new state of ``node`` (as it was chosen) in the scene graph, on the unit
        the graph holds now (:func:`~sg_search.scene_graph.observations.current_unit`):
        perception may have merged or replaced the node while the robot drove to it."""
        ...


class AffordanceExecutor:
    """Runs one candidate's affordance through :class:`Skills` (module docstring)."""

    def __init__(self, skills: Skills, navigation_retries: int = 0, open_sides: int = 1) -> None:
        self.skills = skills
        self.navigation_retries = navigation_retries
        self.open_sides = open_sides

    def execute(self, candidate: Candidate, graph: SceneGraph) -> ExecutionReport:
        """Do ``candidate.affordance`` on its node; the report says what failed."""
        if candidate.affordance == SkillAffordance.LOOK_AROUND and not candidate.node_id:  # here
            return _report(self.skills.look_around(), ExecutorError.NAVIGATION_FAILED)
        node = graph.get(candidate.node_id)
        if node is None:
            return _failed(ExecutorError.UNKNOWN_NODE, f"no node {candidate.node_id!r} in the scene graph")
        affordance = candidate.affordance
        if affordance == SkillAffordance.LOOK_AROUND:
            return self._look_around_in(node)
        if affordance == SkillAffordance.NAVIGATE:
            return self._go_to(node)
        if affordance == SkillAffordance.CLOSE:
            done = self.skills.close(node)  # from where it was opened
            if done.success or done.code == ExecutorError.NOT_AFFORDED:
                return self._manipulated(node, SkillResult(True), done, NodeState.EXPLORED)
        if affordance in (SkillAffordance.OPEN, SkillAffordance.CLOSE):
            opening = affordance == SkillAffordance.OPEN
            travelled = 0.0
            for _ in range(self.open_sides if opening else 1):  # a refused side: the next one
                reach = self._navigate(node, "reach")
                travelled += reach.path_length
                if not reach.success:
                    return _report(reach, ExecutorError.NAVIGATION_FAILED, travelled - reach.path_length)
                done = self.skills.open(node) if opening else self.skills.close(node)
                if done.success or not done.retryable:
                    break
            state = NodeState.OPEN if opening else NodeState.EXPLORED
            return self._manipulated(node, SkillResult(True, travelled), done, state)
        if affordance == SkillAffordance.INSPECT:
            view = self._navigate(node, "view")
            if not view.success:
                return _report(view, ExecutorError.NAVIGATION_FAILED)
            looked = self.skills.look(node)
            self.skills.set_state(node, NodeState.EXPLORED)
            return ExecutionReport(True, view.path_length + looked.path_length, looked.message)
        return _failed(ExecutorError.NOT_AFFORDED, f"affordance {affordance!r} is not supported")

    def _go_to(self, node: SceneNode) -> ExecutionReport:
        """NAVIGATE: to a frontier or into a room, or within reach of an object, facing it."""
        if node.kind != "frontier" and node.layer != Layer.ROOM:
            return self._reach_and_face(node)
        result = self._navigate(node, "explore")
        if result.success and node.kind == "frontier" and result.path_length == 0.0:
            # the base stood at its goal, or saw beyond it while turning towards it: either way
            # choosing it again would show nothing new
            message = (
                f"0 m driven to frontier {node.id}: the base stood at it, or the map saw beyond it "
                "as the base turned towards it"
            )
            return _failed(ExecutorError.NAVIGATION_FAILED, message)
        if result.success and node.layer == Layer.ROOM:
            self.skills.set_state(node, NodeState.EXPLORED)
        return _report(result, ExecutorError.NAVIGATION_FAILED)

    def _look_around_in(self, room: SceneNode) -> ExecutionReport:
        """Into ``room``, then a full turn there with the head level (module docstring)."""
        if room.layer != Layer.ROOM:
            message = f"a look around is in a room; {room.id} is a {room.kind}"
            return _failed(ExecutorError.NOT_AFFORDED, message)
        drive = self._navigate(room, "explore")
        if not drive.success:
            return _report(drive, ExecutorError.NAVIGATION_FAILED)
        turn = self.skills.look_around(level=True)
        return _report(turn, ExecutorError.NAVIGATION_FAILED, drive.path_length)

    def _reach_and_face(self, node: SceneNode) -> ExecutionReport:
        """Within reach of an object, then look at it; after a drive that fell short too (module
        docstring), unless it was cancelled or its server is gone."""
        reach = self._navigate(node, "reach")
        if not reach.success and reach.code in (ExecutorError.CANCELED, ExecutorError.UNAVAILABLE):
            return _report(reach, ExecutorError.NAVIGATION_FAILED)
        looked = self.skills.look(node)
        if not reach.success:
            return _report(reach, ExecutorError.NAVIGATION_FAILED)
        return ExecutionReport(True, reach.path_length + looked.path_length, looked.message)

    def _manipulated(
        self, node: SceneNode, reach: SkillResult, done: SkillResult, state: NodeState
    ) -> ExecutionReport:
        """After an open or close within reach: the node's new ``state`` (an opened container is
        looked into), or the manipulation's failure."""
        if not done.success:
            return _report(done, ExecutorError.MANIPULATION_FAILED, reach.path_length)
        self.skills.set_state(node, state)
        if state == NodeState.OPEN:
            self.skills.look(node)
        return ExecutionReport(True, reach.path_length + done.path_length, done.message)

    def _navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        travelled = 0.0
        for _ in range(self.navigation_retries + 1):
            result = self.skills.navigate(node, purpose)
            travelled += result.path_length
            if result.success or not result.retryable:
                break
        return SkillResult(result.success, travelled, result.message, result.retryable, result.code)


def _report(result: SkillResult, default: ExecutorError, before_m: float = 0.0) -> ExecutionReport:
    if result.success:
        return ExecutionReport(True, before_m + result.path_length, result.message)
    code = result.code if result.code != ExecutorError.NONE else default
    return ExecutionReport(False, before_m + result.path_length, result.message, int(code))


def _failed(code: ExecutorError, message: str) -> ExecutionReport:
    return ExecutionReport(False, 0.0, message, int(code))
