"""Everything a report shows about one search, independent of where it ran (DDS or in-process)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sg_search.mapping.grid import GridSpec
from sg_search.scene_graph import SceneGraph
from sg_search.search.outcome import DecisionRecord, SearchOutcome


@dataclass
class RunRecord:
    """One search. Positions in ``map`` [m]; ``states`` is the occupancy grid (-1 unknown,
    0 free, 100 occupied) over ``spec``; ``metrics`` are ObjectNav's where known."""

    query: str
    scene: str
    reasoner: str
    success: bool
    result: str  # error name ("NONE" on success)
    message: str = ""
    explanation: str = ""
    steps: int = 0
    path_length_m: float = 0.0
    wall_s: float = 0.0
    found_id: str = ""
    found_xy: tuple[float, float] | None = None
    states: np.ndarray | None = None
    spec: GridSpec | None = None
    path: list[tuple[float, float]] = field(default_factory=list)
    frontiers: list[tuple[float, float]] = field(default_factory=list)
    opened: list[tuple[str, tuple[float, float]]] = field(default_factory=list)
    rejected: list[tuple[str, tuple[float, float]]] = field(default_factory=list)
    graph: SceneGraph | None = None
    decisions: list[DecisionRecord] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def fill_from(self, outcome: SearchOutcome) -> None:
        """Copy the search outcome's result, explanation, decisions and find."""
        self.success = outcome.success
        self.result = outcome.error.name
        self.message, self.explanation = outcome.message, outcome.explanation
        self.steps, self.path_length_m = outcome.steps, outcome.path_length
        self.decisions = list(outcome.decisions)
        if outcome.found is not None:
            self.found_id = outcome.found.id
            self.found_xy = (outcome.found.position[0], outcome.found.position[1])
