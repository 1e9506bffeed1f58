"""One object search: refresh the graph, check for the target, ask the reasoner, act.

Times are seconds of the injected clock; distances are metres. The loop owns no I/O: it
talks to the robot through one world (:mod:`sg_search.search.world`), which the ROS reasoner
node implements over DDS and the benchmarks in process, so the same loop runs in both.

In a world it cannot act in, the loop is *observe-only*: it reports the reasoner's choice each
step and waits ``step_period_s`` for perception to change the graph. That is what the
stack does before an affordance executor is running (or on a robot driven by hand).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sg_search.perception.categories import query_category
from sg_search.reasoning.base import Candidate, Decision, Reasoner, ReasonerInput, SkillAffordance
from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.observations import current_unit, holding_relation
from sg_search.scene_graph.query import find_nodes
from sg_search.search.executor import ExecutorError
from sg_search.search.outcome import DecisionRecord, SearchError, SearchOutcome, SearchParams, SearchStep
from sg_search.search.reports import ExecutionReport, VerificationReport
from sg_search.search.verification import Verifier
from sg_search.search.world import ActingWorld, SensedWorld


def run_search(
    query: str,
    reasoner: Reasoner,
    world: SensedWorld,
    *,
    params: SearchParams | None = None,
    verifier: Verifier | None = None,
    on_step: Callable[[SearchStep], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> SearchOutcome:
    """Search for ``query`` in ``world`` until found (and verified), out of budget, stuck or
    stopped.

    An :class:`ActingWorld` executes the reasoner's choices; a world that is only a
    :class:`SensedWorld` gets an observe-only search (module docstring). Without ``verifier``
    the first goal-category node at ``min_confidence`` is the find.
    """
    params = params or SearchParams()
    try:
        category = query_category(query)
    except ValueError as exc:
        return SearchOutcome(SearchError.INVALID_QUERY, str(exc))
    acting = world if isinstance(world, ActingWorld) else None
    reasoner.reset(query)
    outcome = SearchOutcome(SearchError.UNKNOWN)
    start = clock()
    rejected: set[str] = set()  # nodes whose execution failed (skipped by the reasoner)
    retried: set[str] = set()  # failed nodes already given their second chance
    swept: set[str] = set()  # rooms turned in before giving up (params.sweep_rooms)
    out_of_reach = _OutOfReach(params.unreached_retry_m)
    failures = 0

    report = _reporter(outcome, on_step)
    verify = _verification(verifier, _or_late(should_stop, clock, start + params.timeout_s))
    _look_around(outcome, acting, params.look_around and not should_stop(), report)

    step, idle_since = 0, clock()
    while step < params.max_steps:
        step += 1
        outcome.steps = step
        if _stopped(outcome, should_stop(), clock() - start, params, category):
            return outcome
        graph = world.graph()
        if graph is None:
            outcome.error, outcome.message = SearchError.GRAPH_UNAVAILABLE, "no scene graph available"
            return outcome
        passed_over = frozenset(outcome.rejected_candidates) | out_of_reach.waiting(outcome.path_length)
        candidate = _visible(graph, category, params, passed_over)
        if candidate is not None:
            if _accept(outcome, graph, candidate, step, verify, report, out_of_reach):
                return outcome
            continue  # rejected or out of reach: look at the graph again before deciding
        observation = _observation(world, graph, query, rejected)
        decision = reasoner.decide(observation)
        best = decision.best
        if best is None:
            if _second_chance(rejected, retried):
                continue
            if acting is not None and clock() - idle_since >= params.settle_s:
                if params.sweep_rooms and _sweep(
                    outcome, acting, reasoner.rank_rooms(observation), swept, report
                ):
                    idle_since = clock()  # what the turn showed may take perception a moment
                    continue
                if out_of_reach.due_now(outcome.path_length):
                    continue
                return _nothing_left(outcome, category)
            step -= _wait(outcome, step, acting is None, report)
            sleep(params.step_period_s)
            continue
        idle_since = clock()
        outcome.explanation = decision.explanation
        record = _record(step, decision, graph)
        outcome.decisions.append(record)
        report(
            SearchStep(
                step, "reason", best.node_id, best.utility, best.reason, outcome.path_length, record.top
            )
        )
        if acting is None:
            sleep(params.step_period_s)
            continue
        report(SearchStep(step, _PHASES.get(int(best.affordance), "act"), best.node_id, best.utility))
        failures = _execute(outcome, acting, graph, best, failures, rejected, category, params, report)
        if failures < 0:
            return outcome
    return _last_look(outcome, world.graph(), category, params, verify, report)


def _reporter(
    outcome: SearchOutcome, on_step: Callable[[SearchStep], None] | None
) -> Callable[[SearchStep], None]:
    """Each step into the outcome's trace, then to ``on_step``."""

    def report(step: SearchStep) -> None:
        outcome.trace.append(step)
        if on_step is not None:
            on_step(step)

    return report


def _look_around(
    outcome: SearchOutcome, world: ActingWorld | None, wanted: bool, report: Callable[[SearchStep], None]
) -> None:
    """The first action of an acting search, when ``wanted``: a full turn in place. A failure is
    reported and the search goes on with what the camera saw (an executor that is gone fails the
    next action too: that ends it)."""
    if world is None or not wanted:
        return
    report(SearchStep(0, "look-around", explanation="a full turn in place: the first map all around"))
    result = world.execute(Candidate("", SkillAffordance.LOOK_AROUND))
    outcome.path_length += result.path_length
    if not result.success:
        report(SearchStep(0, "recover", explanation=f"look-around: {result.message}"))


def _sweep(
    outcome: SearchOutcome,
    world: ActingWorld,
    rooms: Sequence[Candidate],
    swept: set[str],
    report: Callable[[SearchStep], None],
) -> bool:
    """The best of ``rooms`` not in ``swept``: LOOK_AROUND in it (the executor drives into it
    and turns there, the head level; ``SearchParams.sweep_rooms``). False when every room was
    swept, or the executor cannot act (outcome set); a room the robot could not get into is
    not tried again."""
    room = next((r for r in rooms if r.node_id not in swept), None)
    if room is None:
        return False
    swept.add(room.node_id)
    reason = f"nothing left to do: a full turn in {room.node_id}, the head level ({room.reason})"
    report(SearchStep(outcome.steps, "sweep", room.node_id, room.utility, reason, outcome.path_length))
    result = world.execute(room)
    outcome.path_length += result.path_length
    if not result.success:
        report(
            SearchStep(
                outcome.steps, "recover", room.node_id, room.utility, result.message, outcome.path_length
            )
        )
    if result.fatal:
        outcome.error = SearchError.EXECUTION_FAILED
        outcome.message = f"the executor cannot act: {result.message}"
        return False
    return True


def _nothing_left(outcome: SearchOutcome, category: str) -> SearchOutcome:
    """How a search with nothing left to do ends: NO_REACHABLE_TARGETS, unless its last look
    around found the executor gone (EXECUTION_FAILED, set by :func:`_sweep`)."""
    if outcome.error != SearchError.EXECUTION_FAILED:
        outcome.error = SearchError.NO_REACHABLE_TARGETS
        outcome.message = f"no {category!r} in the graph and nothing left to explore"
    return outcome


@dataclass
class _OutOfReach:
    """Candidates verification judged from where the base could not get within reach
    (``SearchParams.unreached_retry_m``), by the path length [m] at which each is due again."""

    retry_m: float
    due: dict[str, float] = field(default_factory=dict)

    def waiting(self, path_length: float) -> frozenset[str]:
        """The candidates not due again at ``path_length`` [m]."""
        return frozenset(i for i, due in self.due.items() if path_length < due)

    def defer(self, candidate_id: str, path_length: float) -> bool:
        """Defer a candidate the first time it is judged out of reach (True), not again."""
        if candidate_id in self.due:
            return False
        self.due[candidate_id] = path_length + self.retry_m
        return True

    def due_now(self, path_length: float) -> bool:
        """With nothing else to do (no second chance, no room left to sweep), every waiting
        candidate is due again now; True if there was any."""
        waiting = self.waiting(path_length)
        self.due.update(dict.fromkeys(waiting, path_length))
        return bool(waiting)


def _second_chance(rejected: set[str], retried: set[str]) -> bool:
    """Before a search gives up: every node whose execution failed is offered once more, from
    where the robot is now and on the map it has now (a container unreachable from the hall
    may be reachable from the kitchen). True if some were."""
    if not rejected - retried:
        return False
    retried |= rejected
    rejected.clear()
    return True


def _wait(outcome: SearchOutcome, step: int, observe_only: bool, report: Callable[[SearchStep], None]) -> int:
    """Nothing to act on yet: observe-only searches report the wait (a counted step); acting
    ones wait uncounted for perception or the planner to catch up. The steps to uncount."""
    if not observe_only:
        return 1
    report(SearchStep(step, "reason", explanation="waiting for perception", path_length=outcome.path_length))
    return 0


def _or_late(
    should_stop: Callable[[], bool], clock: Callable[[], float], deadline: float
) -> Callable[[], bool]:
    """``should_stop``, or past ``deadline``: what runs inside a step (verification) ends too."""
    return lambda: should_stop() or clock() > deadline


def _verification(
    verifier: Verifier | None, should_stop: Callable[[], bool]
) -> Callable[[SceneNode], VerificationReport]:
    """The verifier's judgement, or (without one) acceptance at the detector's confidence."""
    if verifier is None:
        return lambda candidate: VerificationReport(True, candidate.confidence)
    return lambda candidate: verifier.verify(candidate, should_stop)


def _observation(world: SensedWorld, graph: SceneGraph, query: str, rejected: set[str]) -> ReasonerInput:
    """What the reasoner sees at one step: the graph and the world's pose, distances and images."""
    pose = world.pose()
    here = (pose[0], pose[1], 0.0) if pose is not None else None
    return ReasonerInput(
        graph, query, dict(world.distances()), here, frozenset(rejected), dict(world.recent_images())
    )


def _last_look(
    outcome: SearchOutcome,
    graph: SceneGraph | None,
    category: str,
    params: SearchParams,
    verify: Callable[[SceneNode], VerificationReport],
    report: Callable[[SearchStep], None],
) -> SearchOutcome:
    """After the last step: the last action may have revealed the object."""
    candidate = (
        _visible(graph, category, params, frozenset(outcome.rejected_candidates))
        if graph is not None
        else None
    )
    if (
        graph is not None
        and candidate is not None
        and _accept(outcome, graph, candidate, outcome.steps, verify, report)
    ):
        return outcome
    outcome.error = SearchError.NOT_FOUND
    outcome.message = f"no {category!r} found within {params.max_steps} steps"
    return outcome


def _stopped(
    outcome: SearchOutcome, canceled: bool, elapsed_s: float, params: SearchParams, category: str
) -> bool:
    """True (outcome set) when the search is out of time or was canceled."""
    if elapsed_s > params.timeout_s:
        outcome.error = SearchError.TIMEOUT
        outcome.message = f"no {category!r} found within {params.timeout_s:.1f} s"
    elif canceled:
        outcome.error, outcome.message = SearchError.CANCELED, "search canceled"
    else:
        return False
    return True


_PHASES = {1: "navigate", 2: "open", 3: "inspect", 4: "close"}


def _execute(
    outcome: SearchOutcome,
    acting: ActingWorld,
    graph: SceneGraph,
    best: Candidate,
    failures: int,
    rejected: set[str],
    category: str,
    params: SearchParams,
    report: Callable[[SearchStep], None],
) -> int:
    """Execute ``best`` and book it (:func:`_act`); after a success close what it opened
    (:func:`_close_again`), after a failure skip its node until its second chance. The new
    count of consecutive failures, or -1 when the search must end (outcome set)."""
    chosen = graph.get(best.node_id)  # as it was: opened, perception may report it anew
    result = acting.execute(best)
    failures = _act(outcome, graph, best, result, failures, report, params)
    if failures >= 0 and result.success:
        _close_again(outcome, acting, best, chosen, category, params, report)
    elif failures >= 0:
        rejected.add(best.node_id)
    return failures


def _act(
    outcome: SearchOutcome,
    graph: SceneGraph,
    best: Candidate,
    result: ExecutionReport,
    failures: int,
    report: Callable[[SearchStep], None],
    params: SearchParams,
) -> int:
    """Book one execution; the new count of consecutive failures (a drive that got somewhere
    but not to its goal, or found no way to it, is not counted: ``unreachable_after_m``,
    ``NO_PATH``), or -1 when the search must end (the executor cannot act, or ``max_failures``
    in a row; outcome set)."""
    outcome.path_length += result.path_length
    if result.success:
        outcome.story.append(_story_line(graph, best))
        return 0
    report(
        SearchStep(outcome.steps, "recover", best.node_id, best.utility, result.message, outcome.path_length)
    )
    if result.fatal:
        outcome.error = SearchError.EXECUTION_FAILED
        outcome.message = f"the executor cannot act: {result.message}"
        return -1
    if result.code == ExecutorError.NO_PATH or (
        result.code == ExecutorError.NAVIGATION_FAILED and result.path_length >= params.unreachable_after_m
    ):
        return failures
    if failures + 1 >= params.max_failures:
        outcome.error = SearchError.EXECUTION_FAILED
        outcome.message = f"{failures + 1} consecutive execution failures; last: {result.message}"
        return -1
    return failures + 1


def _close_again(
    outcome: SearchOutcome,
    acting: ActingWorld,
    done: Candidate,
    chosen: SceneNode | None,
    category: str,
    params: SearchParams,
    report: Callable[[SearchStep], None],
) -> None:
    """With ``close_after_search``, after an OPEN that succeeded: close the
    container just opened and looked into, unless a candidate of the target's category is in
    view now (the next step verifies it). A close that fails is reported, not counted against
    the search (a robot without a closing skill leaves the door open). ``chosen``: the node as
    it was chosen; where opening changed its shape and perception replaced the node, the
    container of its category around its centre is closed."""
    if not (done.affordance == SkillAffordance.OPEN and params.close_after_search):
        return
    graph = acting.graph()  # only after an open: the next step reads the graph anyway
    rejected = frozenset(outcome.rejected_candidates)
    if graph is None or _visible(graph, category, params, rejected) is not None:
        return
    node = graph.get(done.node_id) if chosen is None else current_unit(graph, chosen)
    node_id = node.id if node is not None else done.node_id
    close = Candidate(node_id, SkillAffordance.CLOSE, reason="the target is not inside")
    report(SearchStep(outcome.steps, "close", node_id, 0.0, close.reason, outcome.path_length))
    result = acting.execute(close)
    outcome.path_length += result.path_length
    if result.success:
        outcome.story.append(_story_line(graph, close))
    else:
        report(SearchStep(outcome.steps, "recover", node_id, 0.0, result.message, outcome.path_length))


def _accept(
    outcome: SearchOutcome,
    graph: SceneGraph,
    candidate: SceneNode,
    step: int,
    verify: Callable[[SceneNode], VerificationReport],
    report: Callable[[SearchStep], None],
    out_of_reach: _OutOfReach | None = None,
) -> bool:
    """Verify a goal candidate; True (outcome filled in) if accepted, else it is remembered:
    as rejected, or in ``out_of_reach`` the first time it is judged (accepted or rejected)
    from where its approach failed: seen from there or not, it was not seen from within
    reach, where the search would end."""
    report(SearchStep(step, "verify", candidate.id, candidate.confidence, "re-observing the candidate"))
    check = verify(candidate)
    outcome.path_length += check.path_length
    if (
        not check.reached
        and out_of_reach is not None
        and out_of_reach.defer(candidate.id, outcome.path_length)
    ):
        retry = out_of_reach.retry_m
        message = f"{check.message}; not within reach of it: searching on, approached again {retry:.1f} m on"
        outcome.story.append(f"saw {candidate.category} {candidate.id} out of reach")
        report(SearchStep(step, "recover", candidate.id, check.credibility, message, outcome.path_length))
        return False
    if not check.accepted:
        outcome.rejected_candidates.append(candidate.id)
        outcome.story.append(f"rejected {candidate.category} {candidate.id}: {check.message}")
        report(
            SearchStep(step, "recover", candidate.id, check.credibility, check.message, outcome.path_length)
        )
        return False
    found = graph.get(candidate.id) or candidate
    outcome.error, outcome.found = SearchError.NONE, found
    where = f" in {found.room_id}" if found.room_id else ""
    parent = (
        f", {_relation(graph, found)} {found.parent_id}" if found.parent_id not in ("", found.room_id) else ""
    )
    verified = f"; {check.message}" if check.message else ""
    path = "; ".join(outcome.story[-6:])
    outcome.explanation = (
        f"found {found.category} ({found.id}){where}{parent} after {step} steps{verified}"
        + (f". Path: {path}" if path else "")
    )
    report(SearchStep(step, "found", found.id, check.credibility, outcome.explanation, outcome.path_length))
    return True


def _record(step: int, decision: Decision, graph: SceneGraph) -> DecisionRecord:
    top = tuple(
        (c.node_id, c.affordance.name.lower(), float(c.utility), c.reason) for c in decision.ranked[:3]
    )
    chosen = decision.best.node_id if decision.best else ""
    return DecisionRecord(step, chosen, decision.explanation, top)


def _story_line(graph: SceneGraph, candidate: Candidate) -> str:
    """'opened cabinet_3 in kitchen (0.75: p(plate in kitchen) ...)'."""
    node = graph.get(candidate.node_id)
    what = f"{node.category or node.kind} {node.id}" if node is not None else candidate.node_id
    room = graph.get(node.room_id) if node is not None and node.room_id else None
    where = f" in the {room.category}" if room is not None and room.category else ""
    verb = {1: "went to", 2: "opened", 3: "inspected", 4: "closed"}.get(int(candidate.affordance), "acted on")
    return f"{verb} {what}{where} ({candidate.utility:.2f}: {candidate.reason})"


def _visible(
    graph: SceneGraph, category: str, params: SearchParams, rejected: frozenset[str] = frozenset()
) -> SceneNode | None:
    """The most confident object or container of the goal category at or above
    ``min_confidence`` that verification has not rejected."""
    hits = [
        n
        for n in find_nodes(graph, category)
        if n.confidence >= params.min_confidence and n.id not in rejected
    ]
    return next((n for n in hits if n.kind in ("object", "container")), None)


def _relation(graph: SceneGraph, node: SceneNode) -> str:
    return holding_relation(graph, node) or "in"
