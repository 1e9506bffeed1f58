"""SG-Nav (METHODS.md section 1): subgraph chain-of-thought scores steer frontier choice.

Per decision:
- One subgraph per object node: the object, its room and parent, and the objects its spatial
  edges relate it to. Subgraphs are keyed by their text; a subgraph already scored in this
  search is not asked again (the scene changes little between decisions).
- The paper asks four prompts per subgraph. Here the four steps of up to
  ``subgraphs_per_request`` subgraphs go into ONE request (template ``sgnav_subgraphs``);
  the calls per decision and the paper's naive count (4 x subgraphs) are kept in
  :attr:`SgNavReasoner.calls_per_decision` / :attr:`naive_calls_per_decision`.
- P_sub = 1 / max(distance, ``min_distance_m``) with the predicted subgraph-to-goal distance
  [m]; a subgraph the model left out gets ``unknown_distance_m``.
- Every candidate i (frontier, unexplored room, container, surface) scores
  P_i = sum_j P_sub_j / max(D_ij, 1 m), D_ij the straight-line distance [m, ``map``] from
  the candidate to subgraph j's central object; the highest wins (ties: nearest).
- The explanation summarises the reasoning of the 3 subgraphs nearest the chosen candidate.
- :meth:`verification_context` turns the scores into SG-Nav's re-perception context for the
  search loop's credibility (a subgraph's P_sub, capped at 1, per object category).
- A batch whose answer stays unusable after the client's repair is not asked again this
  search; the decision uses the subgraphs that were scored, and falls back only when none was.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sg_search.config import from_params
from sg_search.llm import LlmBudgetExceeded, LlmError, render
from sg_search.reasoning.base import Candidate, Decision, ReasonerInput
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.base import LlmReasoner, LlmReasonerParams
from sg_search.reasoning.llm.text import as_data, label, neighbours, room_name
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import Layer, SceneGraph, SceneNode


def subgraph_text(graph: SceneGraph, node: SceneNode) -> str:
    """The subgraph around object ``node`` in words (ids left out: equal scenes share a key)."""
    text = label(node)
    room = room_name(graph, node)
    parent = graph.get(node.parent_id) if node.parent_id and node.parent_id != node.room_id else None
    if room:
        text += f" in the {room}"
    if parent is not None:
        text += f", in/on a {label(parent)}"
    related = sorted({f"{relation} a {label(other)}" for relation, other in neighbours(graph, node)})
    if related:
        text += "; " + ", ".join(related[:6])
    return text


@dataclass(frozen=True)
class SgNavParams(LlmReasonerParams):
    """``sgnav`` section: subgraphs scored per request and at most per decision; distances [m]
    clipped below at ``min_distance_m``; ``unknown_distance_m`` for nodes the map cannot reach."""

    subgraphs_per_request: int = 8
    min_distance_m: float = 0.5
    unknown_distance_m: float = 10.0
    max_subgraphs: int = 40


class SgNavReasoner(LlmReasoner):
    """See the module docstring."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__("sgnav", params)
        p = from_params(SgNavParams, params, source="sgnav")
        self.subgraphs_per_request = p.subgraphs_per_request
        self.min_distance_m = p.min_distance_m
        self.unknown_distance_m = p.unknown_distance_m
        self.max_subgraphs = p.max_subgraphs
        self.calls_per_decision: list[int] = []
        self.naive_calls_per_decision: list[int] = []
        self._scores: dict[str, tuple[float, str]] = {}  # subgraph text -> (P_sub, reason)
        self._by_category: dict[str, float] = {}
        self._failed: set[str] = set()  # subgraph texts whose batch stayed unusable
        self._last_error = ""

    def _reset_memory(self) -> None:
        self._scores, self._by_category, self._failed = {}, {}, set()
        self.calls_per_decision, self.naive_calls_per_decision = [], []

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        objects = [n for n in graph.nodes(Layer.OBJECT) if n.category]
        if observation.robot_position is not None:
            here = observation.robot_position
            objects.sort(key=lambda n: (math.dist(n.position[:2], here[:2]), n.id))
        objects = objects[: self.max_subgraphs]
        texts = {n.id: subgraph_text(graph, n) for n in objects}
        before = self.client.counters.requests
        self.naive_calls_per_decision.append(4 * len(objects))
        try:
            self._score(
                [t for t in dict.fromkeys(texts.values()) if t not in self._scores and t not in self._failed]
            )
        finally:
            self.calls_per_decision.append(self.client.counters.requests - before)
        p_sub = {i: self._scores[t][0] for i, t in texts.items() if t in self._scores}
        if texts and not p_sub:
            raise LlmError(f"no subgraph could be scored: {self._last_error}")
        scored_objects = [n for n in objects if n.id in p_sub]  # a failed batch leaves some out
        for n in scored_objects:
            self._by_category[n.category] = max(self._by_category.get(n.category, 0.0), p_sub[n.id])
        scored = []
        for c in candidates:
            where = graph.node(c.node_id).position
            score = sum(p / max(math.dist(where, graph.node(j).position), 1.0) for j, p in p_sub.items())
            scored.append((score, c))
        best_score = max((s for s, _ in scored), default=0.0) or 1.0
        ranked = sorted(scored, key=lambda sc: (-round(sc[0], 9), sc[1].distance))
        out = tuple(replace(c, utility=s / best_score, reason=f"P={s:.2f}") for s, c in ranked)
        return Decision(out, self._explain(graph, out[0], scored_objects, texts))

    def _score(self, todo: Sequence[str]) -> None:
        for start in range(0, len(todo), self.subgraphs_per_request):
            batch = todo[start : start + self.subgraphs_per_request]
            numbered = "\n".join(f"{k + 1}. {text}" for k, text in enumerate(batch))
            prompt = render("sgnav_subgraphs", goal=self.query, count=len(batch), subgraphs=numbered)
            try:
                answer = self.client.complete_json(
                    [{"role": "user", "content": prompt}],
                    schema=answer_schema(len(batch)),
                    check=_check(len(batch)),
                )
            except LlmBudgetExceeded:
                raise
            except LlmError as exc:  # not asked again this search; the other batches still count
                self._failed.update(batch)
                self._last_error = str(exc)[:200]
                continue
            given = {int(e["n"]): e for e in answer["subgraphs"]}
            for k, text in enumerate(batch):
                entry = given.get(k + 1)
                if entry is None:
                    self._scores[text] = (1.0 / self.unknown_distance_m, "not scored by the model")
                    continue
                distance = max(_number(entry.get("distance"), self.unknown_distance_m), self.min_distance_m)
                reason = str(entry.get("reason") or entry.get("answer") or "")[:160]
                self._scores[text] = (1.0 / distance, f"~{distance:.1f} m from a {self.query}: {reason}")

    def _explain(
        self, graph: SceneGraph, chosen: Candidate, objects: list[SceneNode], texts: dict[str, str]
    ) -> str:
        node = graph.node(chosen.node_id)
        if not objects:
            return f"no objects seen yet: nearest {label(node)} ({chosen.node_id})"
        nearest = sorted(objects, key=lambda n: math.dist(n.position, node.position))[:3]
        parts = [f"{label(n)} ({as_data(n.id)}) {self._scores[texts[n.id]][1]}" for n in nearest]
        return f"{label(node)} {chosen.node_id} ({chosen.reason}); nearby subgraphs: " + "; ".join(parts)

    def stats(self) -> dict[str, float]:
        """The base counters, and requests per decision next to the paper's 4 x subgraphs."""
        per = self.calls_per_decision or [0]
        naive = self.naive_calls_per_decision or [0]
        return {
            **super().stats(),
            "sgnav_calls_per_decision": sum(per) / len(per),
            "sgnav_naive_calls_per_decision": sum(naive) / len(naive),
        }

    def verification_context(self) -> Callable[[Sequence[str], str], list[float]]:
        """SG-Nav's P_sub for re-perception: per label, the best P_sub of a subgraph centred on
        an object of that category this search (capped at 1; 0 if never scored)."""

        def context(labels: Sequence[str], goal: str) -> list[float]:
            return [min(1.0, self._by_category.get(x, 0.0)) for x in labels]

        return context


MAX_DISTANCE_M = 50


def answer_schema(count: int) -> dict[str, Any]:
    """One entry per subgraph 1..``count``: its number, the predicted distance to the goal
    [whole metres, 0..50] and a short reason. A constrained answer keeps the prediction and
    its reason; the four reasoning steps stay in the prompt (each written out would cost a
    small model ~40 tokens per subgraph)."""
    entry = forms.json_object(
        {
            "n": forms.one_of(list(range(1, count + 1))),
            "distance": {"type": "integer", "minimum": 0, "maximum": MAX_DISTANCE_M},
            "reason": forms.text(40),
        }
    )
    return forms.json_object({"subgraphs": forms.array(entry, 1, count)})


def _number(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) and number >= 0 else default


def _check(count: int) -> Callable[[dict[str, Any]], str | None]:
    def check(answer: dict[str, Any]) -> str | None:
        entries = answer.get("subgraphs")
        if not isinstance(entries, list):
            return 'the key "subgraphs" must hold a list'
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("n"), int):
                return 'every entry needs an integer "n"'
            if not 1 <= entry["n"] <= count:
                return f"subgraph n={entry['n']} does not exist; the subgraphs are numbered 1 to {count}"
        return None

    return check


@takes_params(SgNavParams)
def create_sgnav(params: Mapping[str, Any]) -> SgNavReasoner:
    return SgNavReasoner(params)
