"""The random baseline of SCOUT's evaluation: uniform utilities, seeded."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sg_search.reasoning.base import Decision, Reasoner, ReasonerInput, actionable_candidates


class RandomReasoner(Reasoner):
    """Ranks actionable nodes in a random order drawn from a seeded generator."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed
        self._rng = random.Random(seed)

    def reset(self, query: str) -> None:
        """Restart the generator, so that the same search repeats exactly."""
        self._rng = random.Random(self._seed)

    def decide(self, observation: ReasonerInput) -> Decision:
        """Random utilities in [0, 1) for every actionable node, best first."""
        candidates = actionable_candidates(observation.graph, observation.rejected)
        scored = [
            replace(
                c,
                utility=self._rng.random(),
                distance=observation.distances.get(c.node_id, -1.0),
                reason="random baseline",
            )
            for c in candidates
        ]
        scored.sort(key=lambda c: c.utility, reverse=True)
        explanation = (
            f"random choice among {len(scored)} actionable nodes" if scored else "nothing actionable"
        )
        return Decision(tuple(scored), explanation)


def create_random(params: Mapping[str, Any]) -> Reasoner:
    return RandomReasoner(seed=int(params.get("seed", 0)))
