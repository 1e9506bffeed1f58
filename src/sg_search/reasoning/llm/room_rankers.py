"""The LLM baselines of the SCOUT paper (METHODS.md section 5).

- ``moma-llm`` (MoMa-LLM-style): one request per step (``moma_llm``): the known scene by room,
  the last ``history`` actions, the valid actions; structured answer (a JSON schema whose
  ``action`` is an enum of the valid ids where the server takes schemas). An id that is not
  valid is repaired once by the client.
- ``godhs`` (GODHS-style): explore every room first (nearest unexplored room or frontier, no
  LLM), then the LLM ranks the rooms once (``godhs_rooms``), then the carriers (containers and
  surfaces) of the best room with carriers left (``godhs_carriers``, once per room).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sg_search.config import from_params
from sg_search.llm import render
from sg_search.reasoning.base import Candidate, Decision, ReasonerInput, SkillAffordance
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.base import LlmReasoner, LlmReasonerParams, ranked_with_choice
from sg_search.reasoning.llm.text import candidate_line, candidate_lines, candidate_text, label
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import Layer, NodeState, SceneGraph


@dataclass(frozen=True)
class MomaLlmParams(LlmReasonerParams):
    """``moma_llm`` section: past actions kept in the prompt."""

    history: int = 30


class MomaLlmReasoner(LlmReasoner):
    """See the module docstring."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__("moma-llm", params)
        self.history_length = from_params(MomaLlmParams, params, source="moma-llm").history
        self.actions: list[str] = []

    def _reset_memory(self) -> None:
        self.actions = []

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        listed = candidates[: self.max_listed]
        ids = [c.node_id for c in listed]
        prompt = render(
            "moma_llm",
            goal=self.query,
            scene=_scene_by_room(graph, self.max_listed),
            history="\n".join(self.actions[-self.history_length :]) or "none",
            actions=candidate_lines(graph, listed),
        )
        schema = forms.choice_schema("action", ids)

        def check(answer: dict[str, Any]) -> str | None:
            chosen = str(answer.get("action", ""))
            return None if chosen in ids else f"{chosen!r} is not a valid action id"

        answer = self.client.complete_json([{"role": "user", "content": prompt}], schema=schema, check=check)
        chosen = str(answer["action"])
        self.actions.append(candidate_line(graph, next(c for c in listed if c.node_id == chosen)))
        return ranked_with_choice(candidates, [chosen], {chosen: str(answer.get("reason", ""))[:200]})


class GodhsReasoner(LlmReasoner):
    """See the module docstring."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__("godhs", params)
        self.room_ranking: list[str] = []
        self.carrier_rankings: dict[str, list[str]] = {}

    def _reset_memory(self) -> None:
        self.room_ranking, self.carrier_rankings = [], {}

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        explore = [c for c in candidates if c.affordance == SkillAffordance.NAVIGATE]
        if explore:  # phase 1: every room first, nearest first, no LLM
            return ranked_with_choice(
                candidates, [explore[0].node_id], {explore[0].node_id: "explore all rooms first"}
            )
        rooms = [r for r in graph.rooms() if r.state != NodeState.UNEXPLORED]
        if set(self.room_ranking) != {r.id for r in rooms}:
            self.room_ranking = self._rank(
                "godhs_rooms", {r.id: f"{label(r)}; {_furniture(graph, r.id)}" for r in rooms}, "rooms"
            )
        order = []
        for room_id in self.room_ranking:
            mine = [c for c in candidates if graph.node(c.node_id).room_id == room_id]
            if not mine:
                continue
            key = room_id + "|" + ",".join(sorted(c.node_id for c in mine))
            if key not in self.carrier_rankings:
                lines = {c.node_id: candidate_text(graph, c) for c in mine}
                self.carrier_rankings[key] = self._rank(
                    "godhs_carriers", lines, "carriers", room=label(graph.node(room_id))
                )
            order += self.carrier_rankings[key]
            break
        room = graph.node(order[0]).room_id if order else ""
        return ranked_with_choice(candidates, order, {i: f"ranked in {room} by the LLM" for i in order})

    def _rank(self, template: str, lines: Mapping[str, str], field: str, **values: str) -> list[str]:
        """The ids of ``lines`` ranked by the LLM (the listing fills template field ``field``);
        ids it leaves out follow in their order."""
        listing = "\n".join(f"{i}: {text}" for i, text in lines.items())

        def check(answer: dict[str, Any]) -> str | None:
            ranking = answer.get("ranking")
            if not isinstance(ranking, list):
                return 'the key "ranking" must hold a list of ids'
            unknown = [str(i) for i in ranking if str(i) not in lines]
            return f"these ids were not listed: {', '.join(unknown[:5])}" if unknown else None

        prompt = render(template, goal=self.query, **{field: listing}, **values)
        schema = forms.json_object({"ranking": forms.array(forms.one_of(list(lines)), 1, len(lines))})
        answer = self.client.complete_json([{"role": "user", "content": prompt}], schema=schema, check=check)
        ranked = list(dict.fromkeys(str(i) for i in answer["ranking"]))
        return ranked + [i for i in lines if i not in ranked]


def _furniture(graph: SceneGraph, room_id: str) -> str:
    names = sorted({label(n) for n in graph.nodes_in_room(room_id, Layer.OBJECT)})
    return ", ".join(names[:12]) or "nothing seen"


def _scene_by_room(graph: SceneGraph, limit: int) -> str:
    lines: Sequence[str] = [
        f"{r.id} ({label(r)}): "
        + (_furniture(graph, r.id) if r.state != NodeState.UNEXPLORED else "not visited")
        for r in graph.rooms()[:limit]
    ]
    return "\n".join(lines) or "nothing yet"


@takes_params(MomaLlmParams)
def create_moma_llm(params: Mapping[str, Any]) -> MomaLlmReasoner:
    return MomaLlmReasoner(params)


@takes_params(LlmReasonerParams)
def create_godhs(params: Mapping[str, Any]) -> GodhsReasoner:
    return GodhsReasoner(params)
