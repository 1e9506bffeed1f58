"""One object search: refresh the graph, check for the target, ask the reasoner, act.

Times are seconds of the injected clock; distances are metres. The loop owns no I/O:
the ROS node (or a benchmark) injects how to read the graph, how to execute a
candidate and how to report progress, so that the same loop runs over DDS and offline.

Without an executor the loop is *observe-only*: it reports the reasoner's choice each
step and waits ``step_period_s`` for perception to change the graph. That is what the
stack does before an affordance executor is running (or on a robot driven by hand).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from sg_search.reasoning.base import Candidate, Reasoner, ReasonerInput
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.categories import query_category
from sg_search.scene_graph.query import find_nodes


class SearchError(IntEnum):
    """Result codes; the values equal the SearchObject action's constants."""

    NONE = 0
    UNKNOWN = 1
    NOT_FOUND = 2
    NO_REACHABLE_TARGETS = 3
    EXECUTION_FAILED = 4
    CANCELED = 5
    GRAPH_UNAVAILABLE = 6
    INVALID_QUERY = 7
    UNKNOWN_REASONER = 8
    TIMEOUT = 9


@dataclass(frozen=True)
class SearchParams:
    """Budgets of one search.

    Attributes:
        max_steps: reasoning steps before giving up (NOT_FOUND).
        timeout_s: wall-clock budget [s] (TIMEOUT).
        step_period_s: observe-only wait between steps [s].
        min_confidence: a goal-category node counts as found at this confidence or above.
    """

    max_steps: int = 50
    timeout_s: float = 120.0
    step_period_s: float = 0.5
    min_confidence: float = 0.5


@dataclass(frozen=True)
class SearchStep:
    """Progress of one step (becomes the action's feedback)."""

    step: int
    phase: str
    target_node_id: str = ""
    utility: float = 0.0
    explanation: str = ""
    path_length: float = 0.0


@dataclass(frozen=True)
class ExecutionReport:
    """What the executor did with a candidate. ``path_length`` in metres."""

    success: bool
    path_length: float = 0.0
    message: str = ""


@dataclass
class SearchOutcome:
    """How a search ended."""

    error: SearchError
    message: str = ""
    found: SceneNode | None = None
    steps: int = 0
    path_length: float = 0.0
    explanation: str = ""
    trace: list[SearchStep] = field(default_factory=list)

    @property
    def success(self) -> bool:
        """True if the object was found."""
        return self.error == SearchError.NONE


def run_search(
    query: str,
    reasoner: Reasoner,
    read_graph: Callable[[], SceneGraph | None],
    *,
    params: SearchParams | None = None,
    execute: Callable[[Candidate], ExecutionReport] | None = None,
    on_step: Callable[[SearchStep], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    distances: Callable[[], Mapping[str, float]] | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> SearchOutcome:
    """Search for ``query`` until found, out of budget, stuck or stopped.

    ``distances`` gives geodesic metres from the robot to graph nodes for the reasoner.
    """
    params = params or SearchParams()
    try:
        category = query_category(query)
    except ValueError as exc:
        return SearchOutcome(SearchError.INVALID_QUERY, str(exc))
    reasoner.reset(query)
    outcome = SearchOutcome(SearchError.UNKNOWN)
    start = clock()
    rejected: set[str] = set()

    def report(step: SearchStep) -> None:
        outcome.trace.append(step)
        if on_step is not None:
            on_step(step)

    for step in range(1, params.max_steps + 1):
        outcome.steps = step
        if should_stop():
            outcome.error, outcome.message = SearchError.CANCELED, "search canceled"
            return outcome
        if clock() - start > params.timeout_s:
            outcome.error = SearchError.TIMEOUT
            outcome.message = f"no {category!r} found within {params.timeout_s:.1f} s"
            return outcome
        graph = read_graph()
        if graph is None:
            outcome.error, outcome.message = SearchError.GRAPH_UNAVAILABLE, "no scene graph available"
            return outcome
        found = _visible(graph, category, params)
        if found is not None:
            outcome.error, outcome.found = SearchError.NONE, found
            where = f" in {found.room_id}" if found.room_id else ""
            parent = (
                f", {_relation(graph, found)} {found.parent_id}" if found.parent_id != found.room_id else ""
            )
            outcome.explanation = (
                f"found {found.category} ({found.id}){where}{parent} with confidence "
                f"{found.confidence:.2f} after {step} steps"
            )
            report(SearchStep(step, "verify", found.id, 1.0, outcome.explanation, outcome.path_length))
            return outcome
        known = distances() if distances is not None else {}
        decision = reasoner.decide(ReasonerInput(graph, query, known, rejected=frozenset(rejected)))
        best = decision.best
        if best is None:
            if execute is not None:
                outcome.error = SearchError.NO_REACHABLE_TARGETS
                outcome.message = f"no {category!r} in the graph and nothing left to explore"
                return outcome
            report(
                SearchStep(
                    step, "reason", explanation="waiting for perception", path_length=outcome.path_length
                )
            )
        else:
            outcome.explanation = decision.explanation
            report(SearchStep(step, "reason", best.node_id, best.utility, best.reason, outcome.path_length))
        if execute is None or best is None:
            sleep(params.step_period_s)
            continue
        result = execute(best)
        outcome.path_length += result.path_length
        if not result.success:
            rejected.add(best.node_id)
            report(
                SearchStep(step, "recover", best.node_id, best.utility, result.message, outcome.path_length)
            )
    graph = read_graph()  # the last action may have revealed it
    found = _visible(graph, category, params) if graph is not None else None
    if found is not None:
        outcome.error, outcome.found = SearchError.NONE, found
        outcome.explanation = (
            f"found {found.category} ({found.id}) after the last of {params.max_steps} steps"
        )
        return outcome
    outcome.error = SearchError.NOT_FOUND
    outcome.message = f"no {category!r} found within {params.max_steps} steps"
    return outcome


def _visible(graph: SceneGraph, category: str, params: SearchParams) -> SceneNode | None:
    """The most confident object or container of the goal category at or above ``min_confidence``."""
    hits = [n for n in find_nodes(graph, category) if n.confidence >= params.min_confidence]
    return next((n for n in hits if n.kind in ("object", "container")), None)


def _relation(graph: SceneGraph, node: SceneNode) -> str:
    for edge in graph.edges_of(node.id):
        if edge.source == node.id and edge.target == node.parent_id and edge.relation in ("on", "inside"):
            return edge.relation
    return "in"
