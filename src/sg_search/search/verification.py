"""Verification before success: SG-Nav's re-perception credibility, generalised.

A goal-category detection is only a candidate. The robot approaches it and re-observes it;
observation k adds ``S_k = C_k * context`` where ``C_k`` is the detector's confidence that
the candidate is of the goal category in that observation (0 when it was not seen again or
perception now votes for another category) and ``context`` is how well the candidate's
surroundings support the goal (SG-Nav: ``sum_j P_sub_j / D_j`` over the subgraphs around
it). Here ``P_sub_j`` is the commonsense co-occurrence of the goal with object j (the same
knowledge the utility reasoner uses, so no LLM is needed) and ``D_j`` its distance [m] from
the candidate, clipped below at ``min_distance_m``; ``context_floor`` keeps a goal with no
informative neighbours verifiable (SG-Nav's sum is 0 for an object alone in a room, which
would make it unverifiable), and ``context`` is capped at 1. The candidate is accepted once
``sum_k S_k >= threshold`` within ``max_observations``, else rejected (METHODS.md section 1:
threshold 0.8, 10 observations).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from sg_search.reasoning.base import Reasoner
from sg_search.scene_graph import Layer, SceneGraph, SceneNode
from sg_search.search.reports import VerificationReport
from sg_search.search.world import VerifyingWorld

Cooccurrence = Callable[[Sequence[str], str], Sequence[float]]
"""p(goal with label) in [0, 1] for each label (labels, goal) -> scores."""


@dataclass(frozen=True)
class CredibilityParams:
    """See the module docstring; distances in metres."""

    threshold: float = 0.8
    max_observations: int = 10
    context_floor: float = 0.3
    context_radius_m: float = 3.0
    min_distance_m: float = 1.0

    def __post_init__(self) -> None:
        if self.threshold <= 0 or self.max_observations < 1:
            raise ValueError("verification needs threshold > 0 and max_observations >= 1")
        if not 0.0 <= self.context_floor <= 1.0 or self.min_distance_m <= 0 or self.context_radius_m <= 0:
            raise ValueError("verification needs context_floor in [0, 1] and positive distances")


class Verdict(Enum):
    """Where a candidate's verification stands."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


def context_support(
    graph: SceneGraph,
    candidate: SceneNode,
    goal: str,
    cooccurrence: Cooccurrence | None,
    params: CredibilityParams,
) -> float:
    """``min(1, floor + sum_j p_j / max(D_j, min_distance))`` over the objects within
    ``context_radius_m`` of the candidate (the candidate itself and other goal-category
    objects excluded)."""
    if cooccurrence is None:
        return 1.0
    near = [
        n
        for n in graph.nodes(Layer.OBJECT)
        if n.id != candidate.id
        and n.category != goal
        and n.kind in ("object", "container")
        and math.dist(n.position, candidate.position) <= params.context_radius_m
    ]
    if not near:
        return params.context_floor
    scores = cooccurrence([n.category for n in near], goal)
    support = sum(
        float(p) / max(math.dist(n.position, candidate.position), params.min_distance_m)
        for n, p in zip(near, scores, strict=True)
    )
    return min(1.0, params.context_floor + support)


@dataclass
class Credibility:
    """The running sum for one candidate; :meth:`add` once per re-observation."""

    node_id: str
    params: CredibilityParams
    scores: list[float] = field(default_factory=list)

    @property
    def total(self) -> float:
        """Accumulated credibility."""
        return sum(self.scores)

    def add(self, confidence: float, context: float) -> Verdict:
        """One observation: ``confidence`` C_k in [0, 1] (0 if not seen as the goal)."""
        self.scores.append(max(0.0, min(1.0, confidence)) * context)
        return self.verdict

    @property
    def verdict(self) -> Verdict:
        """ACCEPTED at the threshold, REJECTED once out of observations, else PENDING."""
        if self.total >= self.params.threshold:
            return Verdict.ACCEPTED
        if len(self.scores) >= self.params.max_observations:
            return Verdict.REJECTED
        return Verdict.PENDING

    def summary(self) -> str:
        """One line for explanations."""
        return (
            f"credibility {self.total:.2f}/{self.params.threshold:.2f} after "
            f"{len(self.scores)} observation{'s' if len(self.scores) != 1 else ''}"
        )


def goal_confidence(node: SceneNode | None, goal: str) -> float:
    """C_k from the graph's view of the candidate: its confidence while perception still
    calls it the goal category, else 0 (gone, or re-labelled)."""
    if node is None or node.category != goal:
        return 0.0
    return node.confidence


def follow_candidate(
    graph: SceneGraph, candidate: SceneNode, goal: str, radius_m: float = 0.5
) -> SceneNode | None:
    """The candidate's node now: the same id, or (when fusion merged it into another instance)
    the goal-category object nearest its position within ``radius_m``."""
    node = graph.get(candidate.id)
    if node is not None:
        return node
    near = [
        n
        for n in graph.nodes(Layer.OBJECT)
        if n.category == goal and math.dist(n.position, candidate.position) <= radius_m
    ]
    return min(near, key=lambda n: math.dist(n.position, candidate.position), default=None)


class Verifier:
    """The one verification of a goal candidate, for every world (module docstring): approach
    within reach, then re-observe until the credibility verdict; an accepted find is finally
    put to the reasoner's own check on arrival (:meth:`Reasoner.confirm_arrival`, MSGNav's
    Yes/No), whose "no" turns it into a rejection.

    ``context`` scores the candidate's neighbours (commonsense co-occurrence, or a
    reasoner's own, e.g. SG-Nav's subgraph probabilities)."""

    def __init__(
        self,
        world: VerifyingWorld,
        params: CredibilityParams,
        context: Cooccurrence,
        reasoner: Reasoner | None = None,
    ) -> None:
        self.world = world
        self.params = params
        self.context = context
        self.reasoner = reasoner

    def verify(
        self, candidate: SceneNode, should_stop: Callable[[], bool] = lambda: False
    ) -> VerificationReport:
        """Approach, re-observe and judge ``candidate`` (goal = its category)."""
        goal = candidate.category
        approach = self.world.approach(candidate)
        if approach.fatal:
            return VerificationReport(False, 0.0, 0, approach.path_length, approach.message)
        credibility = Credibility(candidate.id, self.params)
        last = candidate.frame_ids[-1] if candidate.frame_ids else -1
        while credibility.verdict == Verdict.PENDING and not should_stop():
            node = self.world.reobserve(candidate, last)
            if node is not None and node.frame_ids:
                last = max(last, node.frame_ids[-1])
            graph = self.world.graph()
            context = (
                context_support(graph, node or candidate, goal, self.context, self.params)
                if graph is not None
                else self.params.context_floor
            )
            credibility.add(goal_confidence(node, goal), context)
        report = VerificationReport(
            credibility.verdict == Verdict.ACCEPTED,
            credibility.total,
            len(credibility.scores),
            approach.path_length,
            credibility.summary(),
            reached=approach.success,
        )
        return self._confirm(candidate, report)

    def _confirm(self, candidate: SceneNode, report: VerificationReport) -> VerificationReport:
        if not report.accepted or self.reasoner is None:
            return report
        graph = self.world.graph()
        node = follow_candidate(graph, candidate, candidate.category) if graph is not None else None
        if graph is None or node is None:
            return report
        if self.reasoner.confirm_arrival(graph, node, self.world.recent_images()) is not False:
            return report
        message = (
            f"{report.message}; but {self.reasoner.name} says the robot is not at the {candidate.category}"
        )
        return VerificationReport(False, report.credibility, report.observations, report.path_length, message)
