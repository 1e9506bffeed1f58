"""The LLM client against a real HTTP server on 127.0.0.1 (scripted), through the openai package:
each failure kind ends in a repaired answer, a bounded retry or a clean LlmError."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from scripted_llm import Scripted, scripted_llm

from sg_search.llm import (
    ChatClient,
    LlmBudgetExceeded,
    LlmConfig,
    LlmError,
    LlmOffline,
    image_part,
    user_message,
)

ASK = [{"role": "user", "content": "Which room? JSON."}]


def client_for(base_url: str, sleeps: list[float] | None = None, **kwargs: object) -> ChatClient:
    values: dict[str, object] = {"base_url": base_url, "model": "scripted", "timeout_s": 2.0, **kwargs}
    sleep = sleeps.append if sleeps is not None else (lambda _: None)
    return ChatClient(LlmConfig(**values), sleep=sleep)  # type: ignore[arg-type]


def sequence(*replies: str | Scripted):  # type: ignore[no-untyped-def]
    """An answer function that plays ``replies`` in order, then repeats the last."""
    played = list(replies)

    def answer(prompt: str) -> str | Scripted:
        return played.pop(0) if len(played) > 1 else played[0]

    return answer


def test_timeout_is_retried_then_answered() -> None:
    with scripted_llm(sequence(Scripted('{"room": "kitchen"}', delay_s=1.5), '{"room": "hall"}')) as server:
        client = client_for(server.base_url, timeout_s=0.3, max_retries=1)
        assert client.complete_json(ASK) == {"room": "hall"}
    assert client.counters.retries == 1 and "APITimeoutError" in client.counters.errors


def test_a_server_that_never_answers_in_time_ends_in_llm_error_after_bounded_retries() -> None:
    sleeps: list[float] = []
    with scripted_llm(lambda _: Scripted("{}", delay_s=1.0)) as server:
        client = client_for(server.base_url, sleeps, timeout_s=0.2, max_retries=2, backoff_s=0.01)
        start = time.monotonic()
        with pytest.raises(LlmError, match="APITimeoutError after 2 retries"):
            client.complete(ASK)
        elapsed = time.monotonic() - start
        assert len(server.requests) == 3  # one try and two retries, no more
    assert sleeps == [0.01, 0.02]  # exponential backoff
    assert elapsed < 5.0  # three 0.2 s timeouts, not a hang


def test_rate_limit_honours_retry_after_within_the_cap() -> None:
    sleeps: list[float] = []
    limited = Scripted("slow down", status=429, headers={"Retry-After": "3"})
    with scripted_llm(sequence(limited, limited, '{"ok": true}')) as server:
        client = client_for(server.base_url, sleeps, max_retries=2, backoff_s=0.5, max_backoff_s=2.0)
        assert client.complete_json(ASK) == {"ok": True}
    assert sleeps == [2.0, 2.0]  # Retry-After 3 s, capped at max_backoff_s
    assert client.counters.errors == ["RateLimitError", "RateLimitError"]


def test_server_errors_are_retried_and_then_reported() -> None:
    with scripted_llm(sequence(Scripted(status=500), Scripted(status=503), '{"a": 1}')) as server:
        assert client_for(server.base_url, max_retries=2).complete_json(ASK) == {"a": 1}
    with scripted_llm(lambda _: Scripted(status=500)) as server:
        client = client_for(server.base_url, max_retries=1)
        with pytest.raises(LlmError, match="InternalServerError after 1 retries"):
            client.complete(ASK)
        assert len(server.requests) == 2


def test_a_bad_request_is_not_retried() -> None:
    with scripted_llm(lambda _: Scripted("context too long", status=400)) as server:
        with pytest.raises(LlmError, match="BadRequestError"):
            client_for(server.base_url, max_retries=3).complete(ASK)
        assert len(server.requests) == 1


def test_a_body_that_is_not_a_completion_is_an_llm_error() -> None:
    with (
        scripted_llm(lambda _: Scripted(raw=b'{"choices": []}')) as server,
        pytest.raises(LlmError, match="no choices"),
    ):
        client_for(server.base_url).complete(ASK)


def test_invalid_json_is_repaired_with_one_re_prompt_naming_the_problem() -> None:
    with scripted_llm(
        sequence("Sure! The room is the kitchen.", 'ok: ```json\n{"room": "kitchen"}\n```')
    ) as server:
        client = client_for(server.base_url)
        assert client.complete_json(ASK) == {"room": "kitchen"}
        repair = server.requests[1]["messages"]
    assert client.counters.repairs == 1
    assert repair[-2] == {"role": "assistant", "content": "Sure! The room is the kitchen."}
    assert "not one valid JSON object" in repair[-1]["content"]


def test_an_answer_that_stays_invalid_raises_after_one_repair() -> None:
    with scripted_llm(lambda _: "{not json") as server:
        with pytest.raises(LlmError, match="unusable after a repair"):
            client_for(server.base_url).complete_json(ASK)
        assert len(server.requests) == 2


def test_a_hallucinated_id_is_refused_by_the_check_and_repaired() -> None:
    def check(answer: dict[str, object]) -> str | None:
        return None if answer.get("id") in ("room_1", "room_2") else f"id {answer.get('id')!r} does not exist"

    with scripted_llm(sequence('{"id": "room_99"}', '{"id": "room_2"}')) as server:
        assert client_for(server.base_url).complete_json(ASK, check=check) == {"id": "room_2"}
        assert "'room_99' does not exist" in server.requests[1]["messages"][-1]["content"]


def test_budget_counts_cache_hits_and_resets_per_search(tmp_path: Path) -> None:
    with scripted_llm(lambda p: json.dumps({"echo": p})) as server:
        client = client_for(server.base_url, max_requests=2, cache_dir=str(tmp_path))
        client.complete([{"role": "user", "content": "a"}])
        client.complete([{"role": "user", "content": "a"}])  # a cache hit still counts
        with pytest.raises(LlmBudgetExceeded, match="request budget of 2"):
            client.complete([{"role": "user", "content": "b"}])
        assert len(server.requests) == 1
        client.reset_budget()
        client.complete([{"role": "user", "content": "b"}])
    c = client.counters
    assert (c.requests, c.calls, c.cache_hits) == (3, 2, 1)


def test_token_budget() -> None:
    with scripted_llm(lambda _: "{}") as server:
        client = client_for(server.base_url, max_tokens=10)
        client.complete(ASK)  # the scripted server reports more than 10 tokens
        with pytest.raises(LlmBudgetExceeded, match="token budget"):
            client.complete(ASK)


def test_offline_is_explicit_and_the_cache_still_answers(tmp_path: Path) -> None:
    with scripted_llm(lambda _: '{"x": 1}') as server:
        client_for(server.base_url, cache_dir=str(tmp_path)).complete_json(ASK)
    offline = ChatClient(LlmConfig(base_url="", model="scripted", cache_dir=str(tmp_path)))
    assert offline.complete_json(ASK) == {"x": 1}
    with pytest.raises(LlmOffline, match="no LLM endpoint configured"):
        offline.complete([{"role": "user", "content": "never asked"}])


def test_cache_key_covers_model_and_parameters(tmp_path: Path) -> None:
    with scripted_llm(lambda _: "{}") as server:
        client_for(server.base_url, cache_dir=str(tmp_path)).complete(ASK)
        client_for(server.base_url, cache_dir=str(tmp_path), temperature=0.7).complete(ASK)
        client_for(server.base_url, cache_dir=str(tmp_path), max_output_tokens=9).complete(ASK)
        client_for(server.base_url, cache_dir=str(tmp_path)).complete(ASK)
        assert len(server.requests) == 3


@pytest.mark.parametrize("damage", ["{truncated", "\xff\xfe not utf-8", '["a list"]', '{"usage": {}}'])
def test_a_damaged_cache_entry_is_a_miss_that_the_fresh_answer_replaces(tmp_path: Path, damage: str) -> None:
    with scripted_llm(lambda _: '{"x": 1}') as server:
        client_for(server.base_url, cache_dir=str(tmp_path)).complete_json(ASK)
        (entry,) = tmp_path.glob("*.json")
        entry.write_bytes(damage.encode("latin-1"))
        assert client_for(server.base_url, cache_dir=str(tmp_path)).complete_json(ASK) == {"x": 1}
        assert len(server.requests) == 2  # asked again
        assert json.loads(entry.read_text())["text"] == '{"x": 1}'  # and repaired


def test_a_cache_that_cannot_be_written_costs_the_cache_not_the_answer(tmp_path: Path) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    with scripted_llm(lambda _: '{"x": 1}') as server:
        assert client_for(server.base_url, cache_dir=str(blocked / "cache")).complete_json(ASK) == {"x": 1}


def test_structured_output_modes_and_downgrade_when_schemas_are_refused() -> None:
    schema = {"type": "object", "properties": {"room": {"type": "string"}}}

    def answer(_: str) -> str | Scripted:
        kind = server.requests[-1].get("response_format", {}).get("type")
        return (
            Scripted("json_schema unsupported", status=400) if kind == "json_schema" else '{"room": "hall"}'
        )

    with scripted_llm(answer) as server:
        client = client_for(server.base_url, structured="json_schema")
        assert client.complete_json(ASK, schema=schema) == {"room": "hall"}
        formats = [r["response_format"] for r in server.requests]
    assert formats[0] == {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
    assert formats[1] == {"type": "json_object"}
    with scripted_llm(lambda _: "{}") as server:
        client_for(server.base_url, structured="json_object_schema").complete_json(ASK, schema=schema)
        client_for(server.base_url, structured="none").complete_json(ASK, schema=schema)
        assert server.requests[0]["response_format"] == {"type": "json_object", "schema": schema}
        assert "response_format" not in server.requests[1]


def test_concurrency_limit_holds_across_threads() -> None:
    with scripted_llm(lambda _: Scripted("{}", delay_s=0.2)) as server:
        clients = [client_for(server.base_url + "/", concurrency=1) for _ in range(4)]
        threads = [threading.Thread(target=c.complete, args=(ASK,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(server.requests) == 4 and server.in_flight_max == 1


def test_images_are_downscaled_png_parts() -> None:
    from PIL import Image

    rgb = np.zeros((600, 1000, 3), dtype=np.uint8)
    rgb[:, :500] = 255
    part = image_part(rgb, max_side=256)
    header, data = part["image_url"]["url"].split(",", 1)
    assert header == "data:image/png;base64"
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    assert image.size == (256, 154) and image.getpixel((10, 10)) == (255, 255, 255)
    with pytest.raises(ValueError, match="H x W x 3 uint8"):
        image_part(np.zeros((4, 4), dtype=np.float32))
    with scripted_llm(lambda prompt: json.dumps({"saw": prompt})) as server:
        client = client_for(server.base_url)
        assert client.complete_json([user_message("what is here?", [rgb], 64)]) == {"saw": "what is here?"}
        parts = server.requests[0]["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"]


def test_config_from_parameters_and_bad_values() -> None:
    config = LlmConfig.from_params(
        {"llm_timeout_s": "4", "llm_max_requests": 7, "llm_model": "m", "other": 1}
    )
    assert (config.timeout_s, config.max_requests, config.model) == (4.0, 7, "m")
    with pytest.raises(ValueError, match="structured"):
        LlmConfig(structured="xml")
    with pytest.raises(ValueError, match="timeout_s > 0"):
        LlmConfig(timeout_s=0)
