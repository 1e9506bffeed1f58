"""MSGNav (METHODS.md section 2): key-subgraph selection, find-target, explore-frontier, with
a decision memory, an adaptive vocabulary and a completion check.

Per decision, up to three requests:
1. KSS (template ``msgnav_kss``), only when the graph has more than ``key_objects`` objects:
   the compressed graph ("id: class, room, [neighbour ids]", the ``max_listed`` objects nearest
   the robot) -> the top-k object ids; ids not in the graph are refused (repair re-prompt).
2. Find target (``msgnav_find``) over the key subgraph, with the images that saw each object
   pair when the observation carries frames: ``object`` + id, or ``none``. An actionable
   object (a closed container, a surface to inspect) is chosen directly; otherwise the
   candidates nearest the chosen object go first.
3. Explore frontier (``msgnav_frontier``), when no object was chosen: one line (and one
   image, when kept) per candidate place.
Closed-loop reasoning: the memory of earlier choices goes into every prompt, and re-choosing
an earlier choice or a rejected candidate is refused (repair re-prompt naming the rule).
Adaptive vocabulary: names proposed under ``new_categories`` accumulate in
:attr:`MsgNavReasoner.vocabulary` for the perception's open vocabulary.
:meth:`MsgNavReasoner.verify_arrival` is the Yes/No completion check (``msgnav_verify``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sg_search.config import from_params
from sg_search.llm import LlmError, render, user_message
from sg_search.reasoning.base import Candidate, Decision, ReasonerInput
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.base import LlmReasoner, LlmReasonerParams, ranked_with_choice
from sg_search.reasoning.llm.text import (
    as_data,
    candidate_line,
    label,
    neighbours,
    object_line,
    objects_near,
    room_name,
)
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import SceneGraph, SceneNode


@dataclass(frozen=True)
class MsgNavParams(LlmReasonerParams):
    """``msgnav`` section: key objects chosen per decision, images attached at most."""

    key_objects: int = 5
    max_images: int = 3


class MsgNavReasoner(LlmReasoner):
    """See the module docstring."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__("msgnav", params)
        p = from_params(MsgNavParams, params, source="msgnav")
        self.key_objects = p.key_objects
        self.max_images = p.max_images
        self.memory: list[str] = []
        self.chosen: list[str] = []
        self.vocabulary: list[str] = []

    def _reset_memory(self) -> None:
        self.memory, self.chosen, self.vocabulary = [], [], []

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        here = observation.robot_position or (0.0, 0.0, 0.0)
        objects = [n for n in objects_near(graph, here, self.max_listed) if n.category]
        forbidden = set(self.chosen) | set(observation.rejected)
        key = self._key_subgraph(graph, objects) if len(objects) > self.key_objects else objects
        if key:
            chosen = self._find_target(graph, key, forbidden, observation.images)
            if chosen is not None:
                decision = self._toward(graph, chosen, candidates)
                self._remember(decision.ranked[0].node_id, f"object {chosen[0].id} ({label(chosen[0])})")
                return decision
        node_id, reason = self._frontier(graph, candidates, forbidden, observation.images)
        self._remember(node_id, f"place {node_id}")
        return ranked_with_choice(candidates, [node_id], {node_id: reason})

    def _remember(self, node_id: str, what: str) -> None:
        self.chosen.append(node_id)
        self.memory.append(f"step {len(self.memory) + 1}: chose {what}, went to {node_id}")

    def _memory_text(self) -> str:
        return "\n".join(self.memory[-10:]) or "none"

    def _key_subgraph(self, graph: SceneGraph, objects: list[SceneNode]) -> list[SceneNode]:
        ids = {n.id for n in objects}
        lines = []
        for n in objects:
            near = [o.id for _, o in neighbours(graph, n) if o.id in ids][:4]
            lines.append(
                f"{as_data(n.id)}: {label(n)}, {room_name(graph, n) or 'unknown room'}, [{', '.join(near)}]"
            )
        prompt = render("msgnav_kss", goal=self.query, k=self.key_objects, graph="\n".join(lines))

        def check(answer: dict[str, Any]) -> str | None:
            picked = answer.get("ids")
            if not isinstance(picked, list) or not picked:
                return 'the key "ids" must hold a non-empty list of ids'
            unknown = [str(i) for i in picked if str(i) not in ids]
            return f"these ids are not in the graph: {', '.join(unknown[:5])}" if unknown else None

        schema = forms.json_object({"ids": forms.array(forms.one_of(sorted(ids)), 1, self.key_objects)})
        answer = self.client.complete_json([{"role": "user", "content": prompt}], schema=schema, check=check)
        picked = list(dict.fromkeys(str(i) for i in answer["ids"]))[: self.key_objects]
        return [graph.node(i) for i in picked]

    def _find_target(
        self, graph: SceneGraph, key: list[SceneNode], forbidden: set[str], images: Mapping[int, Any]
    ) -> tuple[SceneNode, str] | None:
        ids = {n.id for n in key}
        frames = _pair_frames(key, images, self.max_images)
        note = (
            f"Attached: {len(frames)} images in which two of these objects were seen together."
            if frames
            else ""
        )
        prompt = render(
            "msgnav_find",
            goal=self.query,
            subgraph="\n".join(object_line(graph, n) for n in key),
            images=note,
            memory=self._memory_text(),
            forbidden=", ".join(sorted(forbidden)) or "none",
        )

        def check(answer: dict[str, Any]) -> str | None:
            if answer.get("decision") not in ("object", "none"):
                return 'the key "decision" must be "object" or "none"'
            if answer["decision"] == "object":
                chosen = str(answer.get("id", ""))
                if chosen not in ids:
                    return f"id {chosen!r} is not one of the listed objects ({', '.join(sorted(ids))})"
                if chosen in forbidden:
                    return f"id {chosen!r} was chosen or rejected before; choose another or none"
            return None

        message = user_message(prompt, frames, self.client.config.image_max_side)
        answer = self.client.complete_json([message], schema=find_form(sorted(ids - forbidden)), check=check)
        proposed = answer.get("new_categories")
        for name in proposed if isinstance(proposed, list) else []:
            if isinstance(name, str) and name.strip() and name.strip().lower() not in self.vocabulary:
                self.vocabulary.append(name.strip().lower())
        if answer["decision"] == "none":
            return None
        return graph.node(str(answer["id"])), str(answer.get("reason", ""))[:160]

    def _toward(
        self, graph: SceneGraph, chosen: tuple[SceneNode, str], candidates: list[Candidate]
    ) -> Decision:
        node, reason = chosen
        by_id = {c.node_id: c for c in candidates}
        if node.id in by_id:
            order = [node.id]
        else:  # not actionable itself: what is nearest to it
            order = sorted(by_id, key=lambda i: math.dist(graph.node(i).position, node.position))[:1]
        text = f"the {self.query} is probably at {label(node)} ({as_data(node.id)}): {reason}"
        return ranked_with_choice(candidates, order, {order[0]: text})

    def _frontier(
        self, graph: SceneGraph, candidates: list[Candidate], forbidden: set[str], images: Mapping[int, Any]
    ) -> tuple[str, str]:
        listed = candidates[: self.max_listed]
        ids = {c.node_id for c in listed}
        lines: list[str] = []
        frames: list[np.ndarray] = []
        for c in listed:
            node = graph.node(c.node_id)
            near = [label(o) for o in objects_near(graph, node.position, 3) if o.id != node.id]
            lines.append(candidate_line(graph, c) + (f"; near {', '.join(near)}" if near else ""))
            frame = next((images[f] for f in reversed(node.frame_ids) if f in images), None)
            if frame is not None and len(frames) < self.max_images:
                frames.append(np.asarray(frame))
        allowed = ids - forbidden or ids
        prompt = render(
            "msgnav_frontier",
            goal=self.query,
            places="\n".join(lines),
            memory=self._memory_text(),
            forbidden=", ".join(sorted(forbidden & ids)) or "none",
        )

        def check(answer: dict[str, Any]) -> str | None:
            chosen = str(answer.get("id", ""))
            if chosen not in allowed:
                return (
                    f"id {chosen!r} is not an allowed place; choose one of {', '.join(sorted(allowed)[:12])}"
                )
            return None

        message = user_message(prompt, frames, self.client.config.image_max_side)
        answer = self.client.complete_json(
            [message], schema=forms.choice_schema("id", sorted(allowed)), check=check
        )
        return str(answer["id"]), f"explore {answer['id']}: {str(answer.get('reason', ''))[:160]}"

    def vocabulary_updates(self) -> tuple[str, ...]:
        """The names proposed under ``new_categories`` this search (AVU)."""
        return tuple(self.vocabulary)

    def confirm_arrival(self, graph: SceneGraph, node: SceneNode, images: Mapping[int, Any]) -> bool | None:
        """:meth:`verify_arrival` with the newest frames that saw ``node``; None if the LLM fails."""
        frames = [np.asarray(images[f]) for f in reversed(node.frame_ids) if f in images][: self.max_images]
        try:
            return self.verify_arrival(graph, node, frames)
        except LlmError:  # no usable answer: no opinion, verification stands
            return None

    def verify_arrival(self, graph: SceneGraph, node: SceneNode, images: Sequence[np.ndarray] = ()) -> bool:
        """MSGNav's completion check: does the model agree the robot is at the goal?"""
        observed = object_line(graph, node) + f" (confidence {node.confidence:.2f})"
        message = user_message(
            render("msgnav_verify", goal=self.query, observed=observed),
            images,
            self.client.config.image_max_side,
        )

        def check(answer: dict[str, Any]) -> str | None:
            ok = str(answer.get("answer", "")).strip().lower() in ("yes", "no")
            return None if ok else 'the key "answer" must be "yes" or "no"'

        schema = forms.json_object({"answer": forms.one_of(["yes", "no"])})
        answer = self.client.complete_json([message], schema=schema, check=check)
        return str(answer["answer"]).strip().lower() == "yes"


def find_form(allowed: Sequence[str]) -> dict[str, Any]:
    """The find-target answer: an object with one of the ``allowed`` ids (listed, not chosen or
    rejected before), or "none" without an id; only "none" when nothing is allowed."""
    names = forms.array(forms.text(30), 0, 3)
    none = forms.json_object(
        {"decision": forms.one_of(["none"]), "reason": forms.text(), "new_categories": names}
    )
    if not allowed:
        return none
    choice = {"decision": forms.one_of(["object"]), "id": forms.one_of(allowed)}
    return forms.either(forms.json_object({**choice, "reason": forms.text(), "new_categories": names}), none)


def _pair_frames(key: list[SceneNode], images: Mapping[int, Any], limit: int) -> list[np.ndarray]:
    """Frames that saw two key objects together (MSGNav's visual edges), newest first."""
    shared: list[int] = []
    for i, a in enumerate(key):
        for b in key[i + 1 :]:
            shared += [f for f in set(a.frame_ids) & set(b.frame_ids) if f in images]
    return [np.asarray(images[f]) for f in sorted(set(shared), reverse=True)[:limit]]


@takes_params(MsgNavParams)
def create_msgnav(params: Mapping[str, Any]) -> MsgNavReasoner:
    return MsgNavReasoner(params)
