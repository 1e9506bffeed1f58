"""What every LLM reasoner shares: the client, the per-search budget, the fallback, the stats.

Parameters (a flat mapping, as ROS parameters and ``create_reasoner`` pass them):
``llm_*`` configure the client (:meth:`LlmConfig.from_params`: ``llm_base_url``,
``llm_model``, ``llm_cache_dir``, ``llm_timeout_s``, ``llm_max_requests``, ...);
``fallback`` names the registered reasoner that decides when the LLM cannot ("" = none: the
error propagates); ``max_listed`` caps the candidates and objects a prompt lists (nearest
first), so a prompt stays within a small model's context.

A decision that raises :class:`LlmError` (offline, budget used, endpoint failing after its
retries, an answer unusable after its repair) is made by the fallback instead, and the
explanation says so. Nothing else is caught: a bug in a reasoner is not an LLM failure.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from sg_search.config import from_params
from sg_search.llm import ChatClient, LlmConfig, LlmCounters, LlmError
from sg_search.reasoning.base import Candidate, Decision, Reasoner, ReasonerInput, actionable_candidates

FAR = 1e9


@dataclass(frozen=True)
class LlmReasonerParams:
    """Every LLM reasoner's section: ``max_listed`` candidates per prompt at most."""

    max_listed: int = 30


class LlmReasoner(Reasoner):
    """Base class: subclasses implement :meth:`_decide` with ``self.client``."""

    def __init__(self, name: str, params: Mapping[str, Any]) -> None:
        self.name = name
        self.params = dict(params)
        self.client = ChatClient(LlmConfig.from_params(params))
        self.fallback_name = str(params.get("fallback", "scout"))
        self.max_listed = from_params(LlmReasonerParams, params, source=name).max_listed
        self.query = ""
        self.decisions = 0
        self.fallbacks = 0
        self._fallback: Reasoner | None = None

    def reset(self, query: str) -> None:
        """A new search: new budget, empty memory."""
        self.query = query
        self.client.reset_budget()
        self.decisions = self.fallbacks = 0
        self._reset_memory()
        if self._fallback is not None:
            self._fallback.reset(query)

    def _reset_memory(self) -> None:
        """Clear what the subclass remembers within a search."""

    def decide(self, observation: ReasonerInput) -> Decision:
        """The subclass's decision, or the fallback's when the LLM fails (see the module doc)."""
        candidates = with_distances(observation)
        if not candidates:
            return Decision((), "nothing actionable")
        self.decisions += 1
        try:
            return self._decide(observation, candidates)
        except LlmError as exc:
            if not self.fallback_name:
                raise
            self.fallbacks += 1
            decision = self._fallback_reasoner().decide(observation)
            ranked = list(decision.ranked)
            if ranked:  # a search's step reports the best candidate's reason: say who decided
                ranked[0] = replace(
                    ranked[0], reason=f"{self.fallback_name} (LLM unusable): {ranked[0].reason}"
                )
            return Decision(
                tuple(ranked),
                f"{self.name}: LLM unusable ({str(exc)[:120]}); {self.fallback_name} decided: "
                f"{decision.explanation}",
            )

    @abc.abstractmethod
    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        """Rank ``candidates`` (actionable, with distances, nearest first) using the LLM."""

    def _fallback_reasoner(self) -> Reasoner:
        if self._fallback is None:
            from sg_search.reasoning.registry import create_reasoner

            self._fallback = create_reasoner(self.fallback_name, self.params)
            self._fallback.reset(self.query)
        return self._fallback

    @property
    def counters(self) -> LlmCounters:
        """The client's counters since this reasoner was made."""
        return self.client.counters

    def stats(self) -> dict[str, float]:
        """Numbers for a benchmark row: the client's counters, decisions and fallbacks."""
        return {
            **self.counters.as_row(),
            "llm_decisions": float(self.decisions),
            "llm_fallbacks": float(self.fallbacks),
        }


def stats_line(stats: Mapping[str, float]) -> str:
    """An LLM reasoner's counters in one line for a search result ("" for other reasoners)."""
    if "llm_requests" not in stats:
        return ""
    tokens = stats["llm_prompt_tokens"] + stats["llm_completion_tokens"]
    return (
        f"LLM: {stats['llm_requests']:.0f} requests ({stats['llm_cache_hits']:.0f} cached), "
        f"{tokens:.0f} tokens, "
        f"{stats['llm_latency_s']:.1f} s waiting, {stats['llm_fallbacks']:.0f} fallback decisions"
    )


def with_distances(observation: ReasonerInput) -> list[Candidate]:
    """Actionable candidates with their distance [m] filled in, nearest first."""
    out = [
        replace(c, distance=observation.distances.get(c.node_id, FAR))
        for c in actionable_candidates(observation.graph, observation.rejected)
    ]
    out.sort(key=lambda c: (c.distance, c.node_id))
    return out


def ranked_with_choice(
    candidates: list[Candidate], chosen: list[str], reasons: Mapping[str, str]
) -> Decision:
    """The ``chosen`` ids first in that order (utility 1, 0.9, ...), then the rest nearest first
    (utility 0): an LLM names its choice; the search loop needs a full ranking to fall back on."""
    by_id = {c.node_id: c for c in candidates}
    ranked = []
    for i, node_id in enumerate(dict.fromkeys(chosen)):
        if node_id in by_id:
            ranked.append(
                replace(by_id.pop(node_id), utility=max(0.1, 1.0 - 0.1 * i), reason=reasons.get(node_id, ""))
            )
    ranked += [replace(c, utility=0.0, reason="not chosen") for c in by_id.values()]
    first = ranked[0]
    return Decision(tuple(ranked), first.reason or f"chose {first.node_id}")
