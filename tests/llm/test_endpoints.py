"""Several endpoints used as one (real HTTP servers on 127.0.0.1): round-robin, a limit in flight
per endpoint, fail-over when one is down; and a response cache shared by many writers."""

from __future__ import annotations

import json
import multiprocessing
import socket
import threading
from contextlib import ExitStack
from pathlib import Path

import pytest
from scripted_llm import Scripted, ScriptedLlm, scripted_llm

from sg_search.llm import ChatClient, LlmConfig, LlmError
from sg_search.llm.client import _read_cache_entry, _write_atomically
from sg_search.llm.endpoints import Endpoints, endpoint_urls


def _client(base_url: str, **kwargs: object) -> ChatClient:
    values: dict[str, object] = {"base_url": base_url, "model": "scripted", "timeout_s": 2.0, **kwargs}
    return ChatClient(LlmConfig(**values), sleep=lambda _: None)  # type: ignore[arg-type]


def _ask(client: ChatClient, n: int) -> str:
    return client.complete([{"role": "user", "content": f"question {n}"}])


def _servers(stack: ExitStack, count: int, reply: str | Scripted = "{}") -> list[ScriptedLlm]:
    return [stack.enter_context(scripted_llm(lambda _: reply)) for _ in range(count)]


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there: connection refused


def test_requests_go_round_robin_over_the_listed_endpoints() -> None:
    with ExitStack() as stack:
        a, b, c = _servers(stack, 3)
        client = _client(f"{a.base_url}, {b.base_url},{c.base_url}")
        for n in range(9):
            _ask(client, n)
        assert [len(s.requests) for s in (a, b, c)] == [3, 3, 3]


def test_a_dead_endpoint_is_failed_over_at_once_and_then_passed_over() -> None:
    with scripted_llm(lambda _: "{}") as live:
        client = _client(f"{_closed_port_url()},{live.base_url}", endpoint_cooldown_s=600.0)
        answers = [_ask(client, n) for n in range(4)]
        assert answers == ["{}"] * 4 and len(live.requests) == 4
        assert client.counters.errors == ["APIConnectionError(failover)"]  # tried once, then cooled down
        assert client.counters.retries == 0


def test_a_rate_limited_endpoint_hands_its_request_to_another() -> None:
    with ExitStack() as stack:
        (busy,) = _servers(stack, 1, Scripted("slow down", status=429))
        (free,) = _servers(stack, 1)
        client = _client(f"{busy.base_url},{free.base_url}")
        assert [_ask(client, n) for n in range(3)] == ["{}"] * 3
        assert len(busy.requests) == 1 and len(free.requests) == 3


def test_when_every_endpoint_is_down_the_error_names_one_after_bounded_retries() -> None:
    dead = [_closed_port_url(), _closed_port_url()]
    client = _client(",".join(dead), max_retries=1)
    with pytest.raises(LlmError, match=r"127\.0\.0\.1:\d+/v1: APIConnectionError after 1 retries"):
        _ask(client, 0)
    assert client.counters.retries == 1  # one backoff round over both endpoints


def test_the_limit_in_flight_holds_per_endpoint_across_threads() -> None:
    with ExitStack() as stack:
        servers = _servers(stack, 2, Scripted("{}", delay_s=0.2))
        urls = ",".join(s.base_url for s in servers)
        clients = [_client(urls, concurrency=1) for _ in range(6)]
        threads = [threading.Thread(target=_ask, args=(c, n)) for n, c in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [s.in_flight_max for s in servers] == [1, 1]
        assert sum(len(s.requests) for s in servers) == 6 and all(s.requests for s in servers)


def test_a_failed_endpoint_comes_back_after_its_cool_down() -> None:
    now = [0.0]
    endpoints = Endpoints(["a", "b"], concurrency=1, cooldown_s=10.0, clock=lambda: now[0])
    endpoints.failed("a")
    assert [endpoints.order()[0] for _ in range(4)] == ["b"] * 4
    now[0] = 10.0
    assert [endpoints.order()[0] for _ in range(4)] == ["a", "b", "a", "b"]
    assert endpoints.order(tried={"a"})[0] == "b"


def test_endpoint_lists_from_text_and_parameters() -> None:
    assert endpoint_urls(" http://a/v1, http://b/v1,,http://a/v1 ") == ["http://a/v1", "http://b/v1"]
    config = LlmConfig.from_params({"llm_base_url": ["http://a/v1", "http://b/v1"]})
    assert config.base_url == "http://a/v1,http://b/v1"
    with pytest.raises(ValueError, match="endpoint_cooldown_s >= 0"):
        LlmConfig(endpoint_cooldown_s=float("nan"))


# --------------------------------------------------------------------------- a shared cache


def _writer(path: str, marker: str, count: int) -> None:
    for n in range(count):
        _write_atomically(Path(path), json.dumps({"text": marker * 20_000, "n": n}))


def test_many_processes_writing_one_cache_entry_never_show_a_reader_half_of_one(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "entry.json"
    spawn = multiprocessing.get_context("spawn")
    writers = [spawn.Process(target=_writer, args=(str(path), m, 150)) for m in "abcd"]
    for w in writers:
        w.start()
    whole: list[bool] = []  # per entry read: one writer's text, complete
    while any(w.is_alive() for w in writers):
        entry = _read_cache_entry(path)  # logs a warning for a damaged (partial) entry
        if entry is not None:
            text = str(entry["text"])
            whole.append(len(text) == 20_000 and len(set(text)) == 1)
    assert all(w.exitcode == 0 for w in writers)
    assert whole and all(whole)
    assert not [r for r in caplog.records if "ignoring" in r.getMessage()]
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]  # no temporary file left behind
