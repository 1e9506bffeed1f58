"""A NavGPT-style agent (METHODS.md section 4) for instruction-like requests ("go to the kitchen
and check the drawer under the sink").

- Prompt manager: the system principle (``navgpt_system``: task, rules, ReAct format, "never
  fabricate ids"), then per step (``navgpt_step``) the instruction, the history and the
  current observation in words: the robot's room, the objects within ``observe_radius_m``
  with bearing [deg, ``map``] and distance [m], and the nodes it can act on, with ids.
- Output: ``Thought: ... Action: action_maker Action Input: "<id>"`` (sent as a regex over
  the listed ids where the server constrains text, ``llm_text_regex``). An id that is not
  listed, or a reply without an action, is re-prompted once (``navgpt_invalid``) with the
  valid ids; a second failure is an :class:`LlmError` (the search falls back).
  ``Final Answer: Finished!`` before the object is found counts as no action.
- History: the last ``full_history`` steps in full (observation, thought, action); older
  steps are summarised into one sentence each by a template (NavGPT asks the LLM to
  summarise; a template keeps it to one request per step).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sg_search.config import from_params
from sg_search.llm import LlmError, render
from sg_search.llm.client import Message
from sg_search.reasoning.base import Candidate, Decision, ReasonerInput
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.base import LlmReasoner, LlmReasonerParams, ranked_with_choice
from sg_search.reasoning.llm.text import as_data, candidate_lines, label, objects_near, robot_room
from sg_search.reasoning.registry import takes_params
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.model import Vec3

_ACTION = re.compile(r"Action Input:\s*[\"'`]?([\w\-./:]+)", re.I)
_THOUGHT = re.compile(r"Thought:\s*(.*?)(?:\n\s*Action:|\n\s*Final Answer:|$)", re.S | re.I)


@dataclass(frozen=True)
class NavGptParams(LlmReasonerParams):
    """``navgpt`` section: objects within ``observe_radius_m`` [m] are "seen"; the last
    ``full_history`` steps are told in full."""

    observe_radius_m: float = 3.0
    full_history: int = 3


class NavGptReasoner(LlmReasoner):
    """See the module docstring."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        super().__init__("navgpt", params)
        p = from_params(NavGptParams, params, source="navgpt")
        self.observe_radius_m = p.observe_radius_m
        self.full_history = p.full_history
        self.history: list[tuple[str, str, str]] = []  # (where, thought, action)

    def _reset_memory(self) -> None:
        self.history = []

    def _decide(self, observation: ReasonerInput, candidates: list[Candidate]) -> Decision:
        graph = observation.graph
        listed = candidates[: self.max_listed]
        ids = [c.node_id for c in listed]
        where, seen = self._observation(graph, observation.robot_position)
        step = render(
            "navgpt_step",
            instruction=self.query,
            history=self._history_text(),
            observation=f"You are in the {where}. {seen}",
            candidates=candidate_lines(graph, listed),
        )
        messages: list[Message] = [
            {"role": "system", "content": render("navgpt_system")},
            {"role": "user", "content": step},
        ]
        form = step_form(ids)
        for attempt in range(2):
            reply = self.client.complete(messages, regex=form)
            action = _ACTION.search(reply)
            chosen = action.group(1).strip(".,\"'`") if action else ""
            if chosen in ids:
                thought = _THOUGHT.search(reply)
                text = " ".join((thought.group(1) if thought else "").split())[:200]
                self.history.append((where, text, chosen))
                return ranked_with_choice(candidates, [chosen], {chosen: text or f"chose {chosen}"})
            self.client.counters.parse_failures += int(action is None)
            if attempt == 0:
                self.client.counters.repairs += 1
                problem = (
                    f"{chosen!r} is not a listed id"
                    if chosen
                    else "the reply has no Action Input (the object is not found yet)"
                )
                messages += [
                    {"role": "assistant", "content": reply},
                    {
                        "role": "user",
                        "content": render("navgpt_invalid", problem=problem, ids=", ".join(ids)),
                    },
                ]
        raise LlmError(f"navgpt: no valid action after a re-prompt (last reply {reply[:120]!r})")

    def _observation(self, graph: SceneGraph, here: Vec3 | None) -> tuple[str, str]:
        room = robot_room(graph, here)
        where = f"{label(room)} ({room.id})" if room is not None else "unknown room"
        if here is None:
            return where, "Your position is unknown."
        near = [
            n
            for n in objects_near(graph, here, self.max_listed)
            if math.dist(n.position[:2], here[:2]) <= self.observe_radius_m
        ]
        if not near:
            return where, f"No objects within {self.observe_radius_m:.0f} m."
        parts = []
        for n in near:
            dx, dy = n.position[0] - here[0], n.position[1] - here[1]
            bearing = math.degrees(math.atan2(dy, dx)) % 360
            parts.append(
                f"{label(n)} ({as_data(n.id)}) at bearing {bearing:.0f} deg, {math.hypot(dx, dy):.1f} m"
            )
        return where, "You see: " + "; ".join(parts) + "."

    def _history_text(self) -> str:
        if not self.history:
            return "none"
        old = len(self.history) - self.full_history
        lines = []
        for i, (where, thought, action) in enumerate(self.history, start=1):
            if i <= old:
                lines.append(f"Step {i}: in the {where}, went to {action}.")
            else:
                lines.append(f"Step {i}: in the {where}. Thought: {thought} Action: {action}")
        return "\n".join(lines)


def step_form(ids: list[str], thought_chars: int = 160) -> str:
    """One ReAct step as a regex: a one-line thought, then ``action_maker`` on one of ``ids``."""
    action = f'Action: action_maker\\nAction Input: "{forms.alternatives(ids)}"'
    return f"Thought: {forms.line(thought_chars)}\\n{action}"


@takes_params(NavGptParams)
def create_navgpt(params: Mapping[str, Any]) -> NavGptReasoner:
    return NavGptReasoner(params)
