"""The reasoner interface shared by the learned-utility, LLM and baseline reasoners.

Distances are geodesic metres from the robot along the occupancy map (or straight-line
when no map is available); positions are in ``map``.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from sg_search.scene_graph import Affordance, Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.model import Vec3


class SkillAffordance(IntEnum):
    """What the executor does with a chosen node (values = ExecuteAffordance constants)."""

    NAVIGATE = 1
    OPEN = 2
    INSPECT = 3
    CLOSE = 4
    LOOK_AROUND = 5  # a full turn, in place (no node) or in a room (rank_rooms); never decided


@dataclass(frozen=True)
class Candidate:
    """An actionable node with the reasoner's utility in [0, 1] and a one-line reason."""

    node_id: str
    affordance: SkillAffordance
    utility: float = 0.0
    distance: float = -1.0
    reason: str = ""


@dataclass(frozen=True)
class Decision:
    """Candidates best first, and why the first is best."""

    ranked: tuple[Candidate, ...]
    explanation: str = ""

    @property
    def best(self) -> Candidate | None:
        """The chosen candidate, or None if nothing is actionable."""
        return self.ranked[0] if self.ranked else None


@dataclass(frozen=True)
class ReasonerInput:
    """What a reasoner sees at one decision step."""

    graph: SceneGraph
    query: str
    distances: Mapping[str, float] = field(default_factory=dict)
    robot_position: Vec3 | None = None
    rejected: frozenset[str] = frozenset()
    images: Mapping[int, Any] = field(default_factory=dict)
    """RGB frames (H x W x 3 uint8) by frame id, for VLM reasoners; nodes list theirs in
    ``SceneNode.frame_ids``. Empty where no frames are kept (the symbolic benchmark)."""


class Reasoner(abc.ABC):
    """Ranks actionable nodes for a query. Implementations must be deterministic given a seed."""

    name: str = "abstract"

    @abc.abstractmethod
    def decide(self, observation: ReasonerInput) -> Decision:
        """Rank :func:`actionable_candidates` of the graph, best first."""

    def rank_rooms(self, observation: ReasonerInput) -> tuple[Candidate, ...]:
        """The graph's rooms as LOOK_AROUND candidates, best first, for a search that has
        nothing left to do and looks around once more (``SearchParams.sweep_rooms``). This default
        knows no room better than another: nearest first (the graph's distances [m], else
        straight-line from the robot)."""
        here = observation.robot_position

        def distance(room: SceneNode) -> float:
            if room.id in observation.distances:
                return observation.distances[room.id]
            return math.dist(room.position[:2], here[:2]) if here is not None else math.inf

        nearest = sorted((distance(r), r.id) for r in observation.graph.rooms())
        return tuple(Candidate(i, SkillAffordance.LOOK_AROUND, 0.0, d, "nearest") for d, i in nearest)

    def reset(self, query: str) -> None:  # noqa: B027 - optional hook
        """Called when a new search starts (clear per-search memory)."""

    def warm_up(self) -> None:  # noqa: B027 - optional hook
        """Load what the first decision would otherwise wait for (models, embeddings)."""

    def verification_context(self) -> Callable[[Sequence[str], str], Sequence[float]] | None:
        """p(goal with label) for re-perception's context term, if this reasoner has its own
        (SG-Nav: its subgraph scores); None = the search uses the commonsense knowledge."""
        return None

    def confirm_arrival(self, graph: SceneGraph, node: SceneNode, images: Mapping[int, Any]) -> bool | None:
        """A last check once verification accepted ``node`` (MSGNav's Yes/No on arrival):
        False rejects the find, None means no opinion (the default)."""
        return None

    def stats(self) -> dict[str, float]:
        """Counters for benchmark rows and results (LLM requests, tokens, ...); empty by default."""
        return {}

    def vocabulary_updates(self) -> tuple[str, ...]:
        """Category names this reasoner wants perception to detect as well (MSGNav's adaptive
        vocabulary); empty for most."""
        return ()


def actionable_candidates(graph: SceneGraph, rejected: frozenset[str] = frozenset()) -> list[Candidate]:
    """Nodes the robot can act on: unexplored frontiers and rooms, closed openable
    containers, unexplored surfaces/receptacles to inspect. ``rejected`` ids are left out.
    """
    return [Candidate(node.id, affordance) for node, affordance in actionable_nodes(graph, rejected)]


def actionable_nodes(
    graph: SceneGraph, rejected: frozenset[str] = frozenset()
) -> list[tuple[SceneNode, SkillAffordance]]:
    """The nodes of :func:`actionable_candidates` with their affordance."""
    out = []
    for node in graph.nodes():
        if node.id not in rejected:
            affordance = _affordance_for(node)
            if affordance is not None:
                out.append((node, affordance))
    return out


_OPENABLE = int(Affordance.OPENABLE)
_HOLDS = int(Affordance.SURFACE | Affordance.RECEPTACLE)
_INSPECTABLE = int(Affordance.INSPECTABLE)
_SEEN = (NodeState.EXPLORED, NodeState.OPEN, NodeState.CLOSED)


def _affordance_for(node: SceneNode) -> SkillAffordance | None:
    # Plain ints: IntFlag arithmetic dominated decisions over 1,000 nodes.
    state, flags = node.state, int(node.affordances)
    if node.kind == "frontier" and state != NodeState.EXPLORED:
        return SkillAffordance.NAVIGATE
    if node.layer == Layer.ROOM and state == NodeState.UNEXPLORED:
        return SkillAffordance.NAVIGATE
    if flags & _OPENABLE and state == NodeState.CLOSED:
        return SkillAffordance.OPEN
    if flags & _HOLDS and flags & _INSPECTABLE and state not in _SEEN:
        return SkillAffordance.INSPECT
    return None
