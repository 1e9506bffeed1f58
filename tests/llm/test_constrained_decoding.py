"""Constrained decoding in `sg-search llm serve` with real models (SmolLM2-135M-Instruct and
Gemma 3 270M): answers always follow the requested schema or regex, what cannot be enforced
is refused with a clear 400, the schema is part of the cache key, and with constraints the
LLM reasoners' decisions are the model's, not the fallback's."""

from __future__ import annotations

import json
import random
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from conftest import episode_params

from sg_search.bench.symbolic import run_episode
from sg_search.llm import ChatClient, LlmConfig
from sg_search.reasoning.llm import forms
from sg_search.reasoning.llm.msgnav import find_form
from sg_search.reasoning.llm.navgpt import step_form
from sg_search.reasoning.llm.sgrwr import reasoner_form
from sg_search.sim.episodes import make_episodes

# One server per model, on the one worker that runs the group "llm" (pyproject.toml).
pytestmark = pytest.mark.xdist_group("llm")

PLACES = ["kitchen cabinet", "office desk", "bathroom sink", "bed", "fridge", "sofa", "wardrobe", "shoe rack"]
OBJECTS = ["passport", "mug", "toothbrush", "remote control", "socks", "charger"]
# [s] how long a reply may take: the server is one thread at nice 19, so beside the other
# worker's robot tests (non-niced, both cores) it gets a few percent of a core. A bound on
# being stuck, not on speed: alone, a 256-token regex reply takes about 15 s (session 75: six in
# 91 s), and make test once took 1,724 s instead of about 1,190 s, with one reply past 120 s.
REPLY_TIMEOUT_S = 600.0


def post(base_url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=REPLY_TIMEOUT_S) as reply:
        return dict(json.load(reply))


def refusal(base_url: str, body: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(urllib.error.HTTPError) as refused:
        post(base_url, body)
    return refused.value.code, json.loads(refused.value.read())["error"]["message"]


def _question(rng: random.Random, ids: list[str]) -> list[dict[str, str]]:
    goal = rng.choice(OBJECTS)
    listing = "\n".join(f"{i}: {place}" for i, place in zip(ids, rng.sample(PLACES, len(ids)), strict=False))
    lure = rng.choice(["", " You may also answer n999 or 'unknown'.", " Answer in French prose."])
    return [
        {"role": "user", "content": f"Where would a {goal} be? Options:\n{listing}\nReply with JSON.{lure}"}
    ]


def _ids(rng: random.Random) -> list[str]:
    stems = ["n", "frontier-", "room_", "obj:", "c"]
    return [f"{rng.choice(stems)}{rng.randrange(1000)}" for _ in range(rng.randint(2, 5))]


@pytest.mark.parametrize("model", ["local_model", "gemma_model"])
def test_an_enum_in_a_json_schema_is_always_honoured(model: str, request: pytest.FixtureRequest) -> None:
    base_url = request.getfixturevalue(model)
    rng = random.Random(7)
    for _ in range(8):
        ids = _ids(rng)
        schema = forms.choice_schema("id", ids)
        reply = post(
            base_url,
            {
                "messages": _question(rng, ids),
                "max_tokens": 128,  # the form's longest answer is 115 characters, so <= 115 tokens
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": schema},
                },
            },
        )
        text = reply["choices"][0]["message"]["content"]
        answer = json.loads(text)  # strict JSON, not the client's tolerant parsing
        assert set(answer) == {"id", "reason"} and answer["id"] in ids, (ids, text)
        assert len(answer["reason"]) <= forms.REASON_CHARS
        assert reply["choices"][0]["finish_reason"] == "stop", text


@pytest.mark.parametrize("model", ["local_model", "gemma_model"])
def test_msgnav_chooses_a_listed_object_or_none_never_an_object_without_id(
    model: str, request: pytest.FixtureRequest
) -> None:
    """The find-target form is a choice of two shapes (anyOf): "object" with an id not tried
    before, or "none" without one; Gemma answered "object" with an empty id under the old
    single-shape form, which MSGNav's rule refused and left to the fallback."""
    base_url = request.getfixturevalue(model)
    rng = random.Random(11)
    for _ in range(6):
        ids = _ids(rng)
        allowed = ids[1:]  # the first was chosen before
        reply = post(
            base_url,
            {
                "messages": _question(rng, ids),
                "max_tokens": 256,  # the longest answer the form allows is < 256 characters
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "a", "schema": find_form(allowed)},
                },
            },
        )
        text = reply["choices"][0]["message"]["content"]
        answer = json.loads(text)
        assert reply["choices"][0]["finish_reason"] == "stop", text
        if answer["decision"] == "object":
            assert (
                set(answer) == {"decision", "id", "reason", "new_categories"} and answer["id"] in allowed
            ), text
        else:
            assert set(answer) == {"decision", "reason", "new_categories"}, text


def test_text_protocols_follow_their_regex(local_model: str) -> None:
    rng = random.Random(3)
    for _ in range(3):
        ids = _ids(rng)
        for form in (step_form(ids), reasoner_form(ids)):
            # 256 tokens cover the longest reply either form allows (< 256 characters)
            reply = post(local_model, {"messages": _question(rng, ids), "max_tokens": 256, "regex": form})
            text = reply["choices"][0]["message"]["content"]
            assert reply["choices"][0]["finish_reason"] == "stop" and re.fullmatch(form, text), (form, text)


def test_what_cannot_be_enforced_is_refused_naming_it(local_model: str) -> None:
    messages = [{"role": "user", "content": "Name a room."}]
    code, message = refusal(local_model, {"messages": messages, "response_format": {"type": "xml"}})
    assert code == 400 and "'xml' is not supported" in message and "json_schema" in message
    code, message = refusal(local_model, {"messages": messages, "regex": "(unclosed"})
    assert code == 400 and "regex does not compile" in message
    code, message = refusal(local_model, {"messages": messages, "response_format": {"type": "json_schema"}})
    assert code == 400 and "json_schema.schema" in message
    both = {"messages": messages, "regex": "a+", "response_format": {"type": "json_object"}}
    code, message = refusal(local_model, both)
    assert code == 400 and "one constraint at a time" in message
    with urllib.request.urlopen(local_model + "/models", timeout=10) as reply:
        served = json.load(reply)["data"][0]
    assert {"json_schema", "json_object", "regex", "ebnf"} <= set(served["constraints"])


def test_the_schema_is_part_of_the_cache_key(local_model: str, tmp_path: Path) -> None:
    config = LlmConfig(
        base_url=local_model,
        model="smollm2",
        structured="json_schema",
        max_output_tokens=60,
        cache_dir=str(tmp_path),
    )
    client = ChatClient(config)
    messages = [{"role": "user", "content": "Which place holds a mug? a: cupboard, b: bathtub. JSON."}]
    first = client.complete_json(messages, schema=forms.choice_schema("id", ["a", "b"], reason=False))
    other = client.complete_json(messages, schema=forms.choice_schema("id", ["c", "d"], reason=False))
    assert first["id"] in ("a", "b") and other["id"] in ("c", "d")
    assert client.counters.calls == 2 and len(list(tmp_path.glob("*.json"))) == 2
    again = client.complete_json(messages, schema=forms.choice_schema("id", ["a", "b"], reason=False))
    assert again == first and client.counters.calls == 2 and client.counters.cache_hits == 1


def test_with_constraints_the_model_makes_the_decisions(local_model: str, tmp_path: Path) -> None:
    """Each reasoner's first decisions (within a budget of 3 requests) are the model's, with no
    repair; unconstrained, SmolLM2 leaves them to the fallback (docs/BENCHMARKS.md)."""
    (episode,), _ = make_episodes("val", 1, "typical", 0)
    params = episode_params(
        local_model,
        tmp_path,
        max_output_tokens=160,
        max_requests=3,
        timeout_s=REPLY_TIMEOUT_S,
        structured="json_schema",
        text_regex=True,
    )
    for name in ("sgnav", "msgnav", "moma-llm", "navgpt"):
        row = run_episode(episode, name, 0, params)
        assert row["llm_decisions"] - row["llm_fallbacks"] >= 1, (name, row)
        assert row["llm_repairs"] == 0, (name, row)
