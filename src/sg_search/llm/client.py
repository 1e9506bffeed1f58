"""One chat client for any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, llama.cpp server).

- Configuration from parameters and the environment, never from files in the repository:
  ``SG_SEARCH_LLM_BASE_URL`` / ``OPENAI_BASE_URL``, ``SG_SEARCH_LLM_MODEL``,
  ``SG_SEARCH_LLM_API_KEY`` / ``OPENAI_API_KEY``.
- A persistent cache: one JSON file per (model, messages, parameters), so a re-run of a
  pipeline or benchmark repeats exactly and costs nothing. A cached answer is used even when
  no endpoint is configured.
- JSON answers: ``response_format={"type": "json_object"}`` where the server accepts it,
  tolerant parsing (the first {...} block), and one repair re-prompt when that fails.
- Bounded retries with backoff and a timeout (the openai package's), and counters.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class LlmError(RuntimeError):
    """The endpoint failed or answered something unusable; the message says which."""


class LlmOffline(LlmError):
    """No endpoint is configured and the answer is not cached."""


@dataclass(frozen=True)
class LlmConfig:
    """Where and how to call the model.

    Attributes:
        base_url: endpoint root, e.g. "http://127.0.0.1:8080/v1" ("" = from the environment).
        model: model name ("" = from the environment).
        api_key_env: environment variable holding the key (servers without keys accept any).
        timeout_s: per request [s].
        max_retries: retries of a failed request (with the package's exponential backoff).
        temperature: sampling temperature (part of the cache key).
        cache_dir: response cache folder ("" = no cache).
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str = "SG_SEARCH_LLM_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 2
    temperature: float = 0.0
    cache_dir: str = ""

    def resolved(self) -> LlmConfig:
        """With base URL and model filled from the environment where empty."""
        base = (
            self.base_url or os.environ.get("SG_SEARCH_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL", "")
        )
        model = self.model or os.environ.get("SG_SEARCH_LLM_MODEL", "")
        return LlmConfig(
            base, model, self.api_key_env, self.timeout_s, self.max_retries, self.temperature, self.cache_dir
        )


@dataclass
class LlmCounters:
    """Calls that reached the endpoint, cache hits, tokens and seconds spent waiting."""

    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    repairs: int = 0
    errors: list[str] = field(default_factory=list)


class ChatClient:
    """Chat completions with caching; see the module docstring."""

    def __init__(self, config: LlmConfig) -> None:
        self.config = config.resolved()
        self.counters = LlmCounters()
        self._client: Any = None
        self._cache = Path(self.config.cache_dir) if self.config.cache_dir else None

    @property
    def online(self) -> bool:
        """True if an endpoint and a model are configured."""
        return bool(self.config.base_url and self.config.model)

    def _openai(self) -> Any:
        if self._client is None:
            if not self.online:
                raise LlmOffline(
                    "no LLM endpoint configured: set SG_SEARCH_LLM_BASE_URL and SG_SEARCH_LLM_MODEL "
                    "(or pass base_url and model)"
                )
            from openai import OpenAI

            self._client = OpenAI(
                base_url=self.config.base_url,
                api_key=os.environ.get(self.config.api_key_env) or os.environ.get("OPENAI_API_KEY") or "none",
                timeout=self.config.timeout_s,
                max_retries=self.config.max_retries,
            )
        return self._client

    def _key(self, messages: list[dict[str, str]], json_mode: bool) -> str:
        blob = json.dumps(
            {
                "model": self.config.model,
                "messages": messages,
                "temperature": self.config.temperature,
                "json": json_mode,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(self, messages: list[dict[str, str]], json_mode: bool = False) -> str:
        """The assistant's text for ``messages`` (from the cache when there)."""
        key = self._key(messages, json_mode)
        cached = self._cache / f"{key}.json" if self._cache else None
        if cached is not None and cached.is_file():
            self.counters.cache_hits += 1
            return str(json.loads(cached.read_text())["text"])
        from openai import OpenAIError

        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": self.config.temperature,
        }
        if json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        client = self._openai()
        start = time.perf_counter()
        try:
            response = client.chat.completions.create(**kwargs)
        except OpenAIError as exc:
            self.counters.errors.append(type(exc).__name__)
            raise LlmError(f"{self.config.base_url}: {type(exc).__name__}: {exc}") from exc
        finally:
            self.counters.latency_s += time.perf_counter() - start
        self.counters.calls += 1
        if response.usage is not None:
            self.counters.prompt_tokens += response.usage.prompt_tokens or 0
            self.counters.completion_tokens += response.usage.completion_tokens or 0
        text = response.choices[0].message.content or ""
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_suffix(".tmp")
            tmp.write_text(json.dumps({"model": self.config.model, "messages": messages, "text": text}))
            tmp.replace(cached)  # atomic: an interrupted run never leaves half an answer
        return text

    def complete_json(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """A JSON object answer; one repair re-prompt if the first answer does not parse."""
        text = self.complete(messages, json_mode=True)
        parsed = parse_json_object(text)
        if parsed is not None:
            return parsed
        self.counters.repairs += 1
        repair = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": "That was not valid JSON. Answer again with only the JSON object."},
        ]
        parsed = parse_json_object(self.complete(repair, json_mode=True))
        if parsed is None:
            raise LlmError(f"the model did not answer with a JSON object: {text[:200]!r}")
        return parsed


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (also inside ``` fences or after prose); None if there is none."""
    candidates = [text.strip()]
    match = re.search(r"\{.*\}", text, flags=re.S)
    if match:
        candidates.append(match.group(0))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None
