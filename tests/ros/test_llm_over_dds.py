"""An LLM reasoner and the LLM long-edge proposer in their nodes, in separate processes over
DDS, against a scripted OpenAI-compatible server in this process (HTTP on 127.0.0.1): the
search follows the model's choices, and a model that stops answering ends in fallback
decisions, not a failed search."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import OBSERVE_ONLY, wait_for
from rclpy.node import Node
from scripted_llm import ScriptedLlm, scripted_llm
from test_stack_over_dds import SCENE, STARTUP_S, graph_io, observe

from sg_search.ros.search_client import SearchClient, TaskResult
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros


def model(state: list[ScriptedLlm]):  # type: ignore[no-untyped-def]
    def answer(prompt: str) -> str:
        if "For each numbered pair" in prompt:  # the scene-graph server's long-edge proposal
            pairs = re.findall(r"^(\d+): ", prompt, re.M)
            return json.dumps({"relations": [{"pair": int(n), "relation": "opposite to"} for n in pairs]})
        if state[0].fail_after is not None:
            return "no"
        ids = re.findall(r"^(\S+): (?:explore|open|look at) ", prompt, re.M)
        choice = next((i for i in ids if i == "nightstand_0"), ids[0])
        return json.dumps({"action": choice, "reason": f"scripted model picks {choice}"})

    return answer


def test_llm_reasoner_and_edge_proposer_over_dds(start_node: Any, ros_node: Node) -> None:
    state: list[ScriptedLlm] = []
    with scripted_llm(model(state)) as server:
        state.append(server)
        llm = ["-p", f"llm_base_url:={server.base_url}", "-p", "llm_model:=scripted"]
        start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}", "-p", "llm_edges:=true",
                   "-p", "llm_edges_period_s:=0.3", *llm)  # fmt: skip
        start_node("reasoner", "-p", "step_period_s:=0.2", "-p", "max_steps:=2000", *OBSERVE_ONLY,
                   "-p", "default_reasoner:=moma-llm", "-p", "llm_fallback:=nearest", *llm)  # fmt: skip
        updates, observations = graph_io(ros_node)
        assert wait_for(lambda: observations.get_subscription_count() > 0)

        client = SearchClient(ros_node)
        assert client.wait_until_ready(STARTUP_S)
        assert client.start("find the passport", timeout_s=120.0)
        assert wait_for(lambda: len(client.feedback) >= 2, 30.0), "no feedback from the search"
        assert client.feedback[0].target_node_id == "nightstand_0"
        assert "scripted model picks nightstand_0" in client.feedback[0].explanation

        server.fail_after = len(server.requests)  # the model goes down: HTTP 500 from now on
        assert wait_for(lambda: any("nearest (LLM unusable)" in f.explanation for f in client.feedback), 30.0)
        server.fail_after = None

        observe(ros_node, observations, 1, ObjectInstance("obj_9", "passport", 0.81, (7.6, -1.5, 0.2)),
                ObjectInstance("obj_10", "lamp", 0.9, (7.6, 1.5, 0.5)))  # fmt: skip
        assert client.wait(30.0), "search did not finish after the passport was observed"
        assert client.status() == TaskResult.SUCCEEDED and client.result().object_id == "obj_9"
        assert re.search(
            r"\[LLM: \d+ requests \(0 cached\), \d+ tokens, .* [1-9]\d* fallback", client.result().explanation
        )
        # The long-edge proposal for the two new objects: one request, an LLM edge in an update.
        assert wait_for(lambda: any("For each numbered pair" in json.dumps(r) for r in server.requests), 20.0)
        assert wait_for(
            lambda: any(
                e.origin == 1 and {e.source, e.target} & {"obj_9", "obj_10"} for u in updates for e in u.edges
            ),
            20.0,
        ), "no LLM edge reached the graph"


def test_sgrwr_retriever_code_runs_in_the_scene_graph_servers_sandbox(
    start_node: Any, ros_node: Node
) -> None:
    from sg_search.scene_graph import Layer, SceneGraph
    from sg_search.scene_graph.prior import load_prior

    rooms = len(load_prior(SCENE, SceneGraph()).nodes(Layer.ROOM))
    state: list[ScriptedLlm] = []

    def answer(prompt: str) -> str:
        messages = state[0].requests[-1]["messages"]
        if "You are the Retriever" in messages[0]["content"]:
            return (
                "[Code]\n```python\nprint(sum(1 for _, d in G.nodes(data=True) if d['layer'] == 'room'))\n```"
            )
        if "[Retrieved]" not in prompt:
            return "[Explanation] I need the rooms. [Query] How many rooms are there?"
        first = re.findall(r"^(\S+): (?:explore|open|look at) ", messages[1]["content"], re.M)[0]
        return f"[Summary] {prompt} [Answer] {first} TASK TERMINATE"

    with scripted_llm(answer) as server:
        state.append(server)
        start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
        start_node("reasoner", "-p", "step_period_s:=0.2", "-p", "default_reasoner:=sgrwr", *OBSERVE_ONLY,
                   "-p", f"llm_base_url:={server.base_url}", "-p", "llm_model:=scripted")  # fmt: skip
        client = SearchClient(ros_node)
        assert client.wait_until_ready(STARTUP_S)
        assert client.start("find the passport", max_steps=2, timeout_s=60.0)
        assert client.wait(60.0)
        retrieved = [m["content"] for r in server.requests for m in r["messages"] if "[Retrieved]" in str(m)]
    assert retrieved and retrieved[0] == f"[Retrieved] {rooms}"
    assert any(f"[Retrieved] {rooms}" in fb.explanation for fb in client.feedback)


def test_without_llm_edges_the_server_sends_no_request(start_node: Any, ros_node: Node) -> None:
    """``llm_edges: false`` (the default) with an endpoint configured: no proposer, no request."""
    with scripted_llm(lambda _: '{"relations": []}') as server:
        server_node = start_node(
            "scene_graph_server", "-p", f"prior_scene_file:={SCENE}", "-p", "llm_edges:=false",
            "-p", "llm_edges_period_s:=0.2", "-p", f"llm_base_url:={server.base_url}",
            "-p", "llm_model:=scripted",
        )  # fmt: skip
        updates, observations = graph_io(ros_node)
        assert wait_for(lambda: observations.get_subscription_count() > 0)
        observe(ros_node, observations, 1, ObjectInstance("obj_9", "passport", 0.81, (7.6, -1.5, 0.2)),
                ObjectInstance("obj_10", "lamp", 0.9, (7.6, 1.5, 0.5)))  # fmt: skip
        assert wait_for(lambda: any(n.id == "obj_10" for u in updates for n in u.nodes), 20.0)
        # ten proposal periods after the new objects reached the graph: still nothing asked
        assert not wait_for(lambda: bool(server.requests), 2.0)
        log = server_node.stop()
    assert server.requests == [] and "long-edge" not in log
