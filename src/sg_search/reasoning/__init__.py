"""Reasoners: rank the actionable nodes of the scene graph for a query.

Every reasoner implements :class:`~sg_search.reasoning.base.Reasoner` and is registered
by name, so the search action and the benchmarks pick one by string.
"""

from sg_search.reasoning.base import (
    Candidate,
    Decision,
    Reasoner,
    ReasonerInput,
    SkillAffordance,
    actionable_candidates,
    actionable_nodes,
)
from sg_search.reasoning.registry import available_reasoners, create_reasoner

__all__ = [
    "Candidate",
    "Decision",
    "Reasoner",
    "ReasonerInput",
    "SkillAffordance",
    "actionable_candidates",
    "actionable_nodes",
    "available_reasoners",
    "create_reasoner",
]
