"""SG-Nav's long-edge proposal through the LLM client against a scripted server on 127.0.0.1:
one request per update for all new pairs, a hallucinated pair repaired, a failing endpoint
leaving the graph as it was."""

from __future__ import annotations

import json
import re

from scripted_llm import Scripted, ScriptedLlm, scripted_llm

from sg_search.llm import ChatClient, LlmConfig
from sg_search.reasoning.llm.edges import LlmEdgeProposer
from sg_search.scene_graph import EdgeKind, EdgeOrigin, SceneGraph
from sg_search.scene_graph.builder import BuilderParams, SceneGraphBuilder
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.model import Box3D
from sg_search.scene_graph.observations import ObjectInstance


def _inst(i: str, cat: str, c: tuple[float, float, float]) -> ObjectInstance:
    return ObjectInstance(i, cat, 0.9, c, Box3D(c, (0.3, 0.3, 0.3)))


def model(server_ref: list[ScriptedLlm]):  # type: ignore[no-untyped-def]
    def answer(prompt: str) -> str:
        if "could not be used" in prompt:  # the repair: now only real pairs
            first = server_ref[0].requests[-1]["messages"][0]["content"]
            pairs = re.findall(r"^(\d+): ", first, re.M)
            return json.dumps({"relations": [{"pair": int(n), "relation": "opposite to"} for n in pairs]})
        return json.dumps(
            {"relations": [{"pair": 0, "relation": "opposite to"}, {"pair": 99, "relation": "x"}]}
        )

    return answer


def test_one_request_per_update_with_repair(two_rooms: SceneGraph) -> None:
    ref: list[ScriptedLlm] = []
    with scripted_llm(model(ref)) as server:
        ref.append(server)
        proposer = LlmEdgeProposer(ChatClient(LlmConfig(base_url=server.base_url, model="scripted")))
        builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs(), proposer)
        builder.integrate(1, [_inst("a", "sofa", (0.5, 1.0, 0.4)), _inst("b", "tv", (3.5, 1.1, 0.8))])
        assert len(server.requests) == 0  # never on the perception path
        builder.propose_pending()
        assert len(server.requests) == 2  # the answer named pair 99: one repair
    stats = builder.long_edge_stats
    assert stats.calls == 1 and stats.pairs == 3  # a-b, a-fridge_0, b-fridge_0
    llm = {(e.source, e.target) for e in two_rooms.edges(EdgeKind.SPATIAL) if e.origin == EdgeOrigin.LLM}
    assert ("a", "b") in llm and not proposer.failures


def test_a_failing_endpoint_proposes_nothing_and_keeps_the_graph(two_rooms: SceneGraph) -> None:
    with scripted_llm(lambda _: Scripted(status=500)) as server:
        client = ChatClient(
            LlmConfig(base_url=server.base_url, model="scripted", max_retries=1, backoff_s=0.01)
        )
        proposer = LlmEdgeProposer(client)
        builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs(), proposer)
        builder.integrate(1, [_inst("a", "sofa", (0.5, 1.0, 0.4)), _inst("b", "tv", (3.5, 1.1, 0.8))])
        before = len(two_rooms.edges())
        assert builder.propose_pending() == []
    assert len(two_rooms.edges()) == before and "InternalServerError" in proposer.failures[0]
