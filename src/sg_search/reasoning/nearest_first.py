"""The reasoner that uses no knowledge: nearest first. Distances come from
:class:`ReasonerInput.distances` (geodesic metres); an unknown distance counts as very far."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from sg_search.reasoning.base import Decision, Reasoner, ReasonerInput, actionable_candidates

FAR = 1e9


class NearestReasoner(Reasoner):
    """The closest actionable node first (frontier-based exploration's classic rule)."""

    name = "nearest"

    def decide(self, observation: ReasonerInput) -> Decision:
        """Rank by geodesic distance, nearest first; utility = 1 / (1 + distance)."""
        ranked = []
        for c in actionable_candidates(observation.graph, observation.rejected):
            d = observation.distances.get(c.node_id, FAR)
            ranked.append(replace(c, utility=1.0 / (1.0 + d), distance=d, reason=f"nearest ({d:.1f} m)"))
        ranked.sort(key=lambda c: c.distance)
        return Decision(tuple(ranked), ranked[0].reason if ranked else "nothing actionable")


def create_nearest(params: Mapping[str, Any]) -> Reasoner:
    return NearestReasoner()
