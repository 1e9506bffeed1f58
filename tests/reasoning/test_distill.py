"""The distillation pipeline against a real HTTP server on 127.0.0.1 speaking the OpenAI chat
API (scripted answers), through the openai client: output format, cache, resume, repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_llm import scripted_llm

from sg_search.llm import ChatClient, LlmConfig, LlmError, LlmOffline
from sg_search.reasoning.knowledge.datasets import build_datasets, load_answers, read_jsonl
from sg_search.reasoning.knowledge.distill import distill

HOLDER_TYPES = {
    "fridge": {"rooms": {"kitchen": 0.9}, "synonyms": ["Refrigerators"]},
    "sock drawer": {"rooms": {"bedroom": 0.9}, "synonyms": ["underwear drawer"], "kind_of": "shelf"},
    "shelf": {"rooms": {}},  # no room: left out
}


def answer(prompt: str) -> str:
    if prompt.startswith("List furniture, fixtures"):
        return json.dumps({"holder_types": HOLDER_TYPES})
    if prompt.startswith("List objects typically kept"):
        return json.dumps({"objects": ["tights"] if "sock drawer" in prompt else ["milk"]})
    if prompt.startswith("List furniture"):
        return json.dumps({"holders": ["Fridges", "shelf", "bottom_cabinet"]})
    if prompt.startswith("List the room types"):
        return "Sure! ```json\n" + json.dumps({"rooms": ["kitchen", "Bedrooms"]}) + "\n```"
    if prompt.startswith("List the categories"):
        return json.dumps({"categories": ["cookware"] if "kitchen" in prompt else ["clothing"]})
    if prompt.startswith("List as many"):
        return json.dumps({"objects": ["Frying Pans", "saucepan"] if "cookware" in prompt else ["socks"]})
    if "that a typical home keeps" in prompt:
        kitchen = "cookware" in prompt
        return json.dumps(
            {"rooms": {"kitchen": 0.9 if kitchen else 0.0, "bedroom": 0.01 if kitchen else 0.8, "attic": 0.5}}
        )
    if "inside or on it" in prompt:
        return json.dumps({"holders": {"bottom cabinet": 0.8, "fridge": "often", "shelf": 2.0}})
    return "I cannot help with that."


def config(base_url: str, cache: Path) -> LlmConfig:
    return LlmConfig(base_url=base_url, model="scripted", cache_dir=str(cache), max_retries=0, timeout_s=5.0)


def test_pipeline_writes_answers_that_build_datasets_and_reruns_from_cache(tmp_path: Path) -> None:
    out = tmp_path / "answers.yaml"
    with scripted_llm(answer) as server:
        client = ChatClient(config(server.base_url, tmp_path / "cache"))
        counts = distill(client, out)
        calls = len(server.requests)
        # P0, P1, then per room P2, P3, P4, P5; then P6 and P7 per holder type with rooms
        assert calls == 2 + 2 * (1 + 1 + 2) + 1 + 2 == client.counters.calls
        assert counts == {"holder_types": 2, "rooms": 2, "categories": 2, "objects": 3}
        assert all(r["response_format"] == {"type": "json_object"} for r in server.requests)

        again = ChatClient(config(server.base_url, tmp_path / "cache"))
        distill(again, tmp_path / "again.yaml")
        assert len(server.requests) == calls and again.counters.cache_hits == calls
    answers = load_answers(out)
    assert answers.rooms == ["bedroom", "kitchen"] and answers.holders == [
        "bottom cabinet",
        "fridge",
        "shelf",
        "sock drawer",  # P6's, after P0's
    ]
    assert answers.rooms_of["frying pan"] == {"kitchen": 0.9}  # normalised; below 0.05 and unknown dropped
    # clipped; non-numbers dropped; the P6 variant of shelf inherits its score
    assert answers.holders_of["sock"] == {"bottom cabinet": 0.8, "shelf": 1.0, "sock drawer": 1.0}
    assert "model 'scripted'" in out.read_text()
    assert answers.holder_types["sock drawer"].kind_of == "shelf"
    assert answers.holder_types["fridge"].synonyms == ("refrigerator",)
    # the variant inherits shelf's score for socks (their rooms agree) and P7's tights at 1.0
    assert answers.holders_of["sock"]["sock drawer"] == 1.0 and answers.holders_of["tight"] == {
        "sock drawer": 1.0
    }
    assert "kitchen" not in answers.rooms_of["tight"] and answers.rooms_of["tight"] == {"bedroom": 0.9}
    build_datasets(out, tmp_path / "data")
    _, cooccurrence = read_jsonl(tmp_path / "data" / "cooccurrence.jsonl")
    milk = {(p.a, p.score) for p in cooccurrence if p.b == "milk"}
    assert {("fridge", 1.0), ("refrigerator", 1.0)} <= milk  # every pair under each name
    _, pairs = read_jsonl(tmp_path / "data" / "containment.jsonl")
    assert {(p.a, p.b, p.score) for p in pairs if p.b == "saucepan"} == {
        ("kitchen", "saucepan", 0.9),
        ("bedroom", "saucepan", 0.0),
    }


def test_an_interrupted_run_resumes_without_asking_again(tmp_path: Path) -> None:
    with scripted_llm(answer) as server:
        server.fail_after = 4
        with pytest.raises(LlmError, match="InternalServerError"):
            distill(ChatClient(config(server.base_url, tmp_path / "cache")), tmp_path / "a.yaml")
        server.fail_after = None
        server.requests.clear()
        client = ChatClient(config(server.base_url, tmp_path / "cache"))
        distill(client, tmp_path / "a.yaml")
        assert client.counters.cache_hits == 4 and len(server.requests) == 13 - 4


def test_non_json_answers_get_one_repair_prompt_then_a_clear_error(tmp_path: Path) -> None:
    replies = iter(["not json at all", json.dumps({"ok": True})])
    with scripted_llm(lambda prompt: next(replies, "still not json")) as server:
        client = ChatClient(config(server.base_url, tmp_path / "cache"))
        assert client.complete_json([{"role": "user", "content": "hi"}]) == {"ok": True}
        assert client.counters.repairs == 1 and client.counters.calls == 2
        with pytest.raises(LlmError, match="stayed unusable after a repair"):
            client.complete_json([{"role": "user", "content": "again"}])


def test_without_an_endpoint_the_client_says_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SG_SEARCH_LLM_BASE_URL", "OPENAI_BASE_URL", "SG_SEARCH_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    client = ChatClient(LlmConfig(cache_dir=str(tmp_path)))
    assert not client.online
    with pytest.raises(LlmOffline, match="SG_SEARCH_LLM_BASE_URL"):
        client.complete([{"role": "user", "content": "hi"}])
