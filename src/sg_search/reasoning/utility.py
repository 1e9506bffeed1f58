"""Utility-based reasoners (SCOUT, METHODS.md §5): a utility in [0, 1] per actionable node,
then selection by utility margin and geodesic distance.

Utilities for a query q:
- unexplored room: ``room_default`` (its category is unknown until entered);
- explored room r: p_contain(q | r);
- container/object o in room r: u = p_contain(q | r) · (w + (1 − w) · p_cooc(o, q)), with the
  room influence w (``room_influence``); without room influence u = p_cooc(o, q);
- frontier: ``frontier_share`` times the best utility of the objects within
  ``frontier_radius_m`` of it, at least ``frontier_floor``; else ``frontier_default``.
Selection: u* = max utility; among the nodes with u ≥ u* − ``margin`` the one with the
shortest geodesic distance wins (``margin`` = 0 is greedy).

The learned scores come from :class:`~sg_search.reasoning.knowledge.KnowledgeModel`; the
SBERT baseline replaces both with the cosine similarity of the query and the node's label.
Scores are memoised per search (the query is fixed), so a decision over 1,000 nodes costs
dictionary look-ups once the labels have been seen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from sg_search.config import from_params
from sg_search.reasoning.base import Candidate, Decision, Reasoner, ReasonerInput, actionable_nodes
from sg_search.reasoning.knowledge.holder_prior import weigh
from sg_search.reasoning.knowledge.names import query_text
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode

FAR = math.inf


@dataclass(frozen=True)
class UtilityParams:
    """SCOUT's constants (defaults = the paper's, except ``frontier_share``, ``room_influence``
    and ``frontier_floor``).

    Attributes:
        room_influence: w in u = p_room · (w + (1 − w) · p_cooc) (SCOUT: 0.3). With 0.3 every
            object of a likely room is worth at least 0.3 · p_room, so the robot inspected a sofa
            and a bookcase of a "kitchen" for a cup of yoghurt before driving on.
        use_room: False scores objects by co-occurrence alone ("scout-noroom").
        margin: δ, utility margin of the distance tie-break (0 = greedy).
        room_default: utility of an unexplored room.
        frontier_default: utility of a frontier with no scored object within the radius.
        frontier_radius_m: objects this close [m] to a frontier lend it their utility.
        frontier_share: the share of that utility a frontier takes (SCOUT: 1). Below 1, a
            likely container is opened before the frontier beside it is driven to: the
            container is the surer bet, the frontier only promises more of its kind.
        frontier_floor: the least a frontier near objects is worth. In a furnished house
            nearly every frontier has furniture within the radius, so without a floor a
            frontier beside a living room's sofa was worth nothing for a jar of sauce, and
            the robot inspected a kitchen's coffee table (0.1) before looking beyond it.
        holder_prior: exponent β of the holder prior's weight on co-occurrence,
            the odds of p_cooc times weight(holder, room)^β (0 = the knowledge alone; see
            :func:`sg_search.reasoning.knowledge.holder_prior.weigh`).
        room_relative: p_room is divided by the best p_room over every room type for the
            query (the knowledge's room vocabulary), so the likeliest kind of room scores 1
            whatever the query: the learned p_room is not calibrated across queries (0.26 for
            a prawn in a kitchen), which left a found kitchen's fridge below the frontier floor.
    """

    room_influence: float = 0.1
    use_room: bool = True
    margin: float = 0.15
    room_default: float = 0.7
    frontier_default: float = 0.6
    frontier_radius_m: float = 3.0
    frontier_share: float = 0.8
    frontier_floor: float = 0.3
    holder_prior: float = 2.0
    room_relative: bool = False


PairScorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]


class UtilityReasoner(Reasoner):
    """Scores nodes with a room scorer and an object scorer; selects by margin then distance.

    ``room_score(rooms, queries)`` and ``object_score(objects, queries)`` return element-wise
    scores in [0, 1].
    """

    def __init__(
        self,
        name: str,
        room_score: PairScorer,
        object_score: PairScorer,
        params: UtilityParams,
        holder_weight: PairScorer | None = None,
        room_types: Sequence[str] = (),
    ) -> None:
        """``holder_weight(holders, rooms)``: the holder prior's weights (used when
        ``params.holder_prior`` > 0); ``room_types``: every kind of room (``params.room_relative``)."""
        if params.holder_prior > 0 and holder_weight is None:
            raise ValueError(f"{name}: holder_prior {params.holder_prior} needs a holder prior")
        if params.room_relative and not room_types:
            raise ValueError(f"{name}: room_relative needs the room types")
        self._room_types = set(room_types)
        self.name = name
        self.params = params
        self._room_score = room_score
        self._object_score = object_score
        self._holder_weight = holder_weight
        self._query = ""
        self._memo: dict[str, dict[str, float]] = {}  # kind -> label -> score, for self._query

    def warm_up(self) -> None:
        """Score one pair each way, so that SBERT is loaded before the first search."""
        self._room_score(["kitchen"], ["mug"])
        self._object_score(["shelf"], ["mug"])

    def reset(self, query: str) -> None:
        """Forget the scores of the previous query."""
        self._query = query
        self._memo.clear()

    def _scores(self, kind: str, labels: set[str], query: str) -> dict[str, float]:
        """Scores of ``labels`` for the query; the ones not seen yet are scored in one batch."""
        memo = self._memo.setdefault(kind, {})
        missing = sorted(labels - memo.keys())
        if missing:
            scorer = self._room_score if kind == "room" else self._object_score
            memo.update(zip(missing, map(float, scorer(missing, [query] * len(missing))), strict=True))
        return memo

    def utilities(
        self, graph: SceneGraph, query: str, nodes: Sequence[SceneNode]
    ) -> dict[str, tuple[float, str]]:
        """Utility and a one-line reason for every candidate node."""
        if query != self._query:
            self.reset(query)
        query = query_text(query) or query.strip()  # "find the Mugs" -> "mug"
        p = self.params
        known_rooms = {r.id: r.category for r in graph.rooms() if r.state != NodeState.UNEXPLORED}
        objects = [n for n in graph.nodes(Layer.OBJECT) if n.kind != "frontier"]
        room_of = {n.id: known_rooms.get(n.room_id, "") for n in objects}
        room_p = self._scores("room", {r for r in known_rooms.values() if r}, query)
        if p.room_relative:
            top = max(self._scores("room", self._room_types, query)[r] for r in self._room_types)
            room_p = {r: min(1.0, v / top) if top > 0 else 0.0 for r, v in room_p.items()}
        object_p = self._scores("object", {_label(n) for n in objects}, query)

        memo: dict[tuple[str, str], tuple[float, str]] = {}  # nodes sharing label and room

        def object_utility(node: SceneNode) -> tuple[float, str]:
            key = (_label(node), room_of.get(node.id, ""))
            if key not in memo:
                label, room = key
                cooc = object_p[label]
                if self._holder_weight is not None and p.holder_prior > 0 and room:
                    weight = float(self._holder_weight([label], [room])[0])
                    cooc = float(weigh(cooc, weight, p.holder_prior))
                if not p.use_room:
                    memo[key] = (cooc, f"p({query} with {label}) = {cooc:.2f}")
                else:
                    in_room = room_p[room] if room else p.room_default
                    u = in_room * (p.room_influence + (1.0 - p.room_influence) * cooc)
                    where = room or "unknown room"
                    memo[key] = (u, f"p({query} in {where}) = {in_room:.2f}, with {label} {cooc:.2f}")
            return memo[key]

        frontiers = [n for n in nodes if n.kind == "frontier"]
        near_best = self._frontier_support(frontiers, objects, object_utility)
        out: dict[str, tuple[float, str]] = {}
        for node in nodes:
            if node.layer == Layer.ROOM:
                if node.state == NodeState.UNEXPLORED or not node.category:
                    out[node.id] = (p.room_default, "unexplored room (default utility)")
                else:
                    u = room_p[_label(node)]
                    out[node.id] = (u, f"p({query} in {_label(node)}) = {u:.2f}")
            elif node.kind == "frontier":
                best = near_best.get(node.id)
                out[node.id] = (
                    (max(best, p.frontier_floor), f"frontier near objects (best {best:.2f})")
                    if best is not None
                    else (p.frontier_default, "frontier (default utility)")
                )
            else:
                out[node.id] = object_utility(node)
        return out

    def _frontier_support(
        self,
        frontiers: Sequence[SceneNode],
        objects: Sequence[SceneNode],
        utility: Callable[[SceneNode], tuple[float, str]],
    ) -> dict[str, float]:
        """Best utility of the objects within ``frontier_radius_m`` of each frontier (x, y)."""
        if not frontiers or not objects:
            return {}
        xy = np.array([o.position[:2] for o in objects])
        values = np.array([utility(o)[0] for o in objects])
        out = {}
        for f in frontiers:
            near = np.hypot(*(xy - np.array(f.position[:2])).T) <= self.params.frontier_radius_m
            if near.any():
                out[f.id] = self.params.frontier_share * float(values[near].max())
        return out

    def rank_rooms(self, observation: ReasonerInput) -> tuple[Candidate, ...]:
        """The graph's rooms by their utility for the query (p(query in room); an unexplored
        one ``room_default``), the nearer first among equals."""
        utilities = self.utilities(observation.graph, observation.query, observation.graph.rooms())
        scored = (replace(c, utility=utilities[c.node_id][0], reason=utilities[c.node_id][1])
                  for c in super().rank_rooms(observation))  # fmt: skip
        return tuple(sorted(scored, key=lambda c: -c.utility))  # stable: nearest first among equals

    def decide(self, observation: ReasonerInput) -> Decision:
        """Margin selection: the nearest of the nodes within ``margin`` of the best utility."""
        actionable = actionable_nodes(observation.graph, observation.rejected)
        if not actionable:
            return Decision((), "nothing actionable")
        utilities = self.utilities(observation.graph, observation.query, [n for n, _ in actionable])
        distances = observation.distances
        keyed = sorted(  # best utility first, then nearest, then id (deterministic)
            (-utilities[n.id][0], distances.get(n.id, FAR), n.id, a) for n, a in actionable
        )
        best_u = -keyed[0][0]
        within = [k for k in keyed if -k[0] >= best_u - self.params.margin]
        pick = min(within, key=lambda k: (k[1], k[0], k[2]))
        scored = [
            Candidate(i, a, -nu, d, utilities[i][1])
            for nu, d, i, a in [pick, *(k for k in keyed if k is not pick)]
        ]
        chosen, rest = scored[0], scored[1:]
        explanation = (
            f"{chosen.node_id}: utility {chosen.utility:.2f} ({chosen.reason}); nearest of "
            f"{len(within)} within {self.params.margin:.2f} of the best {best_u:.2f}"
        )
        return Decision((chosen, *rest), explanation)


def _label(node: SceneNode) -> str:
    return node.category or node.kind


def _params(params: Mapping[str, Any], **overrides: Any) -> UtilityParams:
    return replace(from_params(UtilityParams, params, source="utility reasoner parameters"), **overrides)


@takes_params(UtilityParams)
def create_scout(params: Mapping[str, Any]) -> Reasoner:
    return _learned("scout", _params(params))


@takes_params(UtilityParams)
def create_scout_noroom(params: Mapping[str, Any]) -> Reasoner:
    return _learned("scout-noroom", _params(params, use_room=False))


@takes_params(UtilityParams)
def create_scout_greedy(params: Mapping[str, Any]) -> Reasoner:
    return _learned("scout-greedy", _params(params, margin=0.0))


@takes_params(UtilityParams)
def create_exhaustive(params: Mapping[str, Any]) -> Reasoner:
    """GODHS without its LLM: every unexplored room and frontier first (utility above any
    object's), then rooms and containers ranked by the learned priors, greedily."""
    return _learned("exhaustive", _params(params, room_default=1.0, frontier_default=1.0, margin=0.0))


def _learned(name: str, params: UtilityParams) -> Reasoner:
    from sg_search.reasoning.knowledge import KnowledgeModel
    from sg_search.reasoning.knowledge.datasets import shipped_answers
    from sg_search.reasoning.knowledge.holder_prior import HolderPrior

    km = KnowledgeModel.load_default()
    answers = shipped_answers()
    weights = HolderPrior.load_default().with_aliases(answers).weights if params.holder_prior > 0 else None
    rooms = answers.rooms if params.room_relative else ()
    return UtilityReasoner(name, km.containment, km.cooccurrence, params, weights, rooms)


@dataclass(frozen=True)
class SbertParams:
    """``sbert`` section: SCOUT's retuned constants for plain SBERT similarity (no room influence)."""

    room_default: float = 0.3
    frontier_default: float = 0.25
    margin: float = 0.05
    frontier_radius_m: float = 3.0


@takes_params(SbertParams)
def create_sbert(params: Mapping[str, Any]) -> Reasoner:
    """Cosine similarity of query and label as utility, with the paper's retuned defaults
    (room 0.3, frontier 0.25, δ 0.05); no room influence."""
    from sg_search.reasoning.knowledge import KnowledgeModel
    from sg_search.reasoning.knowledge.names import knowledge_text

    encoder = KnowledgeModel.load_default().encoder
    p = from_params(SbertParams, params, source="sbert")

    def similarity(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        a = encoder.encode([knowledge_text(x) for x in labels])
        b = encoder.encode([knowledge_text(x) for x in queries])
        cosine: np.ndarray = np.clip(np.sum(a * b, axis=1), 0.0, 1.0)
        return cosine

    utility = UtilityParams(
        use_room=False,
        frontier_floor=0.0,  # SCOUT's SBERT baseline as published (scout's floor is above its defaults)
        room_relative=False,  # similarity, not a probability over room types
        holder_prior=0.0,  # the baseline ranks by similarity alone
        margin=p.margin,
        room_default=p.room_default,
        frontier_default=p.frontier_default,
        frontier_radius_m=p.frontier_radius_m,
    )
    return UtilityReasoner("sbert", similarity, similarity, utility)
