"""SG-Nav's long-range edge proposer on the stack's LLM client: the scene-graph builder's
:class:`~sg_search.scene_graph.relations.EdgeProposer` hook (one request per update for all
new object pairs; the builder prunes what the geometry refutes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sg_search.llm import ChatClient, LlmConfig, LlmError
from sg_search.reasoning.llm import forms
from sg_search.scene_graph import SceneNode
from sg_search.scene_graph.relations import LONG_RANGE_RELATIONS


class LlmEdgeProposer:
    """Asks the model for the relation of each numbered pair; answers naming a pair that was
    not asked or a relation that is not allowed are repaired once, then dropped. A failing
    endpoint proposes nothing (the graph keeps its geometric edges) and counts the failure."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.failures: list[str] = []

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> LlmEdgeProposer:
        """With the client configured by ``llm_*`` parameters."""
        return cls(ChatClient(LlmConfig.from_params(params)))

    def propose(
        self, prompt: str, pairs: Sequence[tuple[SceneNode, SceneNode]]
    ) -> list[tuple[str, str, str]]:
        """(source id, target id, relation) for the pairs the model relates."""
        allowed = (*LONG_RANGE_RELATIONS, "none")

        def check(answer: dict[str, Any]) -> str | None:
            entries = answer.get("relations")
            if not isinstance(entries, list):
                return 'the key "relations" must hold a list'
            for e in entries:
                if (
                    not isinstance(e, dict)
                    or not isinstance(e.get("pair"), int)
                    or not 0 <= e["pair"] < len(pairs)
                ):
                    return f"every entry needs a pair number from 0 to {len(pairs) - 1}"
                if e.get("relation") not in allowed:
                    return f"relation {e.get('relation')!r} is not one of {', '.join(allowed)}"
            return None

        entry = forms.json_object(
            {
                "pair": {"type": "integer", "minimum": 0, "maximum": max(len(pairs) - 1, 0)},
                "relation": forms.one_of(list(allowed)),
            }
        )
        schema = forms.json_object({"relations": forms.array(entry, 0, len(pairs))})
        self.client.reset_budget()  # the budget is per update here
        try:
            answer = self.client.complete_json(
                [{"role": "user", "content": prompt}], schema=schema, check=check
            )
        except LlmError as exc:
            self.failures.append(str(exc)[:200])
            return []
        out = []
        for entry in answer["relations"]:
            if entry["relation"] != "none":
                a, b = pairs[entry["pair"]]
                out.append((a.id, b.id, str(entry["relation"])))
        return out
