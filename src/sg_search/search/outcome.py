"""What a search is given and what it reports: its budgets (:class:`SearchParams`), each step's
progress (:class:`SearchStep`), each decision (:class:`DecisionRecord`) and how it ended
(:class:`SearchOutcome`, :class:`SearchError`). Times are seconds, distances metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum

from sg_search.scene_graph import SceneNode


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
        min_confidence: a goal-category node becomes a candidate at this confidence or above.
        max_failures: consecutive execution failures before the search gives up (EXECUTION_FAILED).
        unreachable_after_m: a navigation that fails after the base drove at least this far [m]
            is not counted towards ``max_failures`` (nor does it reset the count): the base
            works, its goal lay out of reach on the map. Its node is skipped as any failed one.
            (Counted, five unreachable kitchen cabinets and frontiers in a row ended val searches
            with up to 1,076 of 1,500 actions left.) Nor is a navigation for which the planner
            found no way over the map (``NO_PATH``), however far the base drove: the map's
            verdict, not the robot's fault.
        settle_s: when nothing is actionable, wait up to this long [s] for the graph to offer
            something (first frames, the planner's next frontiers) before NO_REACHABLE_TARGETS.
        close_after_search: a container the search opened, in which the target was not found,
            is closed again before the next decision (an open door narrows the way: a cabinet
            door left open walled a robot into a bathroom in a val episode).
        look_around: an acting search begins with a full turn in place (LOOK_AROUND), so that
            its first map and graph are all around the base, not one camera's view (the
            in-process benchmark without it: 5 of 28 val searches lost, one ended at its
            second action with nothing reachable).
        sweep_rooms: before an acting search gives up with nothing left to do, it drives into
            the room the reasoner ranks best (:meth:`Reasoner.rank_rooms`) and turns once in
            place there with the head level, each room once, and decides again on what that
            showed: a map that is complete on the floor may still have missed a wall cabinet
            above the camera's view on the way in (a train search ended so with 571 of 1,500
            actions left).
        unreached_retry_m: a candidate verification judged from where its approach failed
            (the base is not within reach: ObjectNav's success region) neither ends the search
            nor is rejected (from there it may not show at all): the search goes on and
            approaches it again once the base has driven this much farther [m] (the map has
            grown, the base stands elsewhere), or when nothing else is left to do (after second
            chances and sweeps); the second judgment stands wherever the base stands.
    """

    max_steps: int = 50
    timeout_s: float = 120.0
    step_period_s: float = 0.5
    min_confidence: float = 0.5
    max_failures: int = 5
    unreachable_after_m: float = 1.0
    settle_s: float = 0.0
    close_after_search: bool = True
    look_around: bool = False
    sweep_rooms: bool = False
    unreached_retry_m: float = 2.0

    def __post_init__(self) -> None:
        """Budgets that bind: ValueError naming the field for a NaN, a negative number or
        zero steps (``timeout_s`` may be infinite: no wall-clock budget)."""
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        if math.isnan(self.timeout_s) or self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s}")
        for name in ("step_period_s", "settle_s", "unreachable_after_m", "unreached_retry_m"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                unit = "metres" if name.endswith("_m") else "seconds"
                raise ValueError(f"{name} must be a finite number of {unit} >= 0, got {value}")
        if not (0.0 <= self.min_confidence <= 1.0):
            raise ValueError(f"min_confidence must lie in [0, 1], got {self.min_confidence}")
        if self.max_failures < 1:
            raise ValueError(f"max_failures must be at least 1, got {self.max_failures}")


@dataclass(frozen=True)
class SearchStep:
    """Progress of one step (becomes the action's feedback)."""

    step: int
    phase: str
    target_node_id: str = ""
    utility: float = 0.0
    explanation: str = ""
    path_length: float = 0.0
    top: tuple[tuple[str, str, float, str], ...] = ()  # "reason": (id, affordance, utility, why), best first


@dataclass(frozen=True)
class DecisionRecord:
    """One reasoning step for the report: the top candidates (id, affordance, utility, reason)."""

    step: int
    chosen: str
    explanation: str
    top: tuple[tuple[str, str, float, str], ...]


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
    decisions: list[DecisionRecord] = field(default_factory=list)
    rejected_candidates: list[str] = field(default_factory=list)  # goal detections verification refused
    story: list[str] = field(default_factory=list)  # one line per executed step, for the explanation

    @property
    def success(self) -> bool:
        """True if the object was found."""
        return self.error == SearchError.NONE
