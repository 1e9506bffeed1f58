"""Test doubles of the search's world (:mod:`sg_search.search.world`): a robot cannot run in a
unit test, so these script what the real worlds (the in-process simulator, ROS) would report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from sg_search.reasoning import Candidate
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.search import ExecutionReport


class WatchedWorld:
    """Test double of a world the search can only watch (no robot in a unit test): the graph
    comes from ``read``."""

    def __init__(self, read: Callable[[], SceneGraph | None]) -> None:
        self.read = read

    def graph(self) -> SceneGraph | None:
        return self.read()

    def pose(self) -> None:
        return None

    def recent_images(self) -> dict[int, object]:
        return {}

    def distances(self) -> dict[str, float]:
        return {}


class ScriptedWorld(WatchedWorld):
    """Test double of a world the search acts in: scripted execution; a re-observation sees
    the candidate again when ``seen(node)`` says so."""

    def __init__(
        self,
        read: Callable[[], SceneGraph | None],
        execute: Callable[[Candidate], ExecutionReport],
        seen: Callable[[SceneNode], bool] = lambda _: True,
    ) -> None:
        super().__init__(read)
        self.run, self.seen, self.frame = execute, seen, 100

    def execute(self, candidate: Candidate) -> ExecutionReport:
        return self.run(candidate)

    def stop(self) -> None:
        pass

    def approach(self, node: SceneNode) -> ExecutionReport:
        return ExecutionReport(True, 0.5)

    def reobserve(self, node: SceneNode, after_frame: int) -> SceneNode | None:
        self.frame += 1
        graph = self.read()
        current = graph.get(node.id) if graph is not None else None
        if current is None or not self.seen(current):
            return None
        return replace(current, frame_ids=(*current.frame_ids, self.frame))
