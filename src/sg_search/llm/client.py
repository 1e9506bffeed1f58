"""One chat client for any OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, llama.cpp server,
``sg-search llm serve``).

- Configuration from parameters and the environment, never from files in the repository:
  ``SG_SEARCH_LLM_BASE_URL`` / ``OPENAI_BASE_URL``, ``SG_SEARCH_LLM_MODEL``,
  ``SG_SEARCH_LLM_API_KEY`` / ``OPENAI_API_KEY``.
- Failures are bounded: a timeout per request, ``max_retries`` retries of timeouts, refused
  connections, HTTP 429 and 5xx with exponential backoff (``Retry-After`` honoured, capped),
  and at most ``concurrency`` requests in flight per endpoint from this process.
- Several endpoints serving the same model (``base_url`` lists them, comma-separated):
  round-robin, and a failed request moves to another endpoint at once
  (:mod:`sg_search.llm.endpoints`).
- A budget per search (:meth:`ChatClient.reset_budget`): ``max_requests`` requests and
  ``max_tokens`` tokens; the next request beyond it raises :class:`LlmBudgetExceeded`. Cached
  answers count against the budget like fresh ones, so a re-run from the cache takes the
  same path as the run that filled it.
- A persistent cache: one JSON file per (model, messages, parameters), so a re-run of a
  pipeline or benchmark repeats exactly and costs nothing. A cached answer is used even when
  no endpoint is configured; which endpoint answered is not part of the key. Entries are
  written to a uniquely named temporary file, fsynced and renamed into place, so many
  processes on many machines can share one cache folder (a reader sees a whole entry or
  none; two writers of one key write the same answer at temperature 0).
- Structured answers: ``response_format`` as the server accepts it (``structured``), tolerant
  parsing (the first {...} block, also inside fences), a caller's check (e.g. "ids must exist"),
  and one repair re-prompt that names the problem.
- Images for VLMs: :func:`image_part` (PNG, downscaled, base64 data URL).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.llm.endpoints import Endpoints, shared_endpoints
from sg_search.llm.prompts import render

log = logging.getLogger(__name__)

Message = dict[str, Any]
JsonCheck = Callable[[dict[str, Any]], str | None]
"""Returns what is wrong with a parsed answer (for the repair prompt), or None if it is fine."""

STRUCTURED_MODES = ("json_object", "json_schema", "json_object_schema", "none")


class LlmError(RuntimeError):
    """The endpoint failed or answered something unusable; the message says which."""


class LlmOffline(LlmError):
    """No endpoint is configured and the answer is not cached."""


class LlmBudgetExceeded(LlmError):
    """This search has used its requests or tokens."""


@dataclass(frozen=True)
class LlmConfig:
    """Where and how to call the model.

    Attributes:
        base_url: endpoint root, e.g. "http://127.0.0.1:8080/v1", or several serving the same
            model, comma-separated (a YAML list in parameters); "" = from the environment.
        model: model name ("" = from the environment).
        api_key_env: environment variable holding the key (servers without keys accept any).
        timeout_s: per request [s].
        max_retries: retries of a timed-out, refused, rate-limited (429) or failed (5xx) request.
        backoff_s: first retry delay [s]; doubles per retry, capped at ``max_backoff_s``.
        max_backoff_s: longest delay between retries [s] (also caps ``Retry-After``).
        temperature: sampling temperature (part of the cache key).
        max_output_tokens: completion tokens per request.
        max_requests: requests per search (0 = unlimited); cache hits count.
        max_tokens: prompt + completion tokens per search (0 = unlimited); cache hits count.
        concurrency: requests in flight per endpoint from this process.
        endpoint_cooldown_s: with several endpoints, how long one that failed is passed over [s].
        structured: how JSON is asked for: "json_object" (OpenAI JSON mode), "json_schema"
            (OpenAI structured outputs, vLLM, SGLang, ``sg-search llm serve``: the reasoners'
            schemas make ids enums of the candidates), "json_object_schema" (llama.cpp
            server: JSON mode with a schema), "none" (prompt only).
        text_regex: also constrain the text protocols (NavGPT's ReAct step, SG-RwR's turns)
            with a regular expression, sent as SGLang's ``regex`` request field (SGLang and
            ``sg-search llm serve`` honour it; a server that refuses it is asked again
            without it).
        image_max_side: images are downscaled to at most this many pixels per side.
        cache_dir: response cache folder ("" = no cache).
    """

    base_url: str = ""
    model: str = ""
    api_key_env: str = "SG_SEARCH_LLM_API_KEY"
    timeout_s: float = 60.0
    max_retries: int = 2
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    temperature: float = 0.0
    max_output_tokens: int = 512
    max_requests: int = 0
    max_tokens: int = 0
    concurrency: int = 2
    endpoint_cooldown_s: float = 30.0
    structured: str = "json_object"
    text_regex: bool = False
    image_max_side: int = 512
    cache_dir: str = ""

    def __post_init__(self) -> None:
        if self.structured not in STRUCTURED_MODES:
            raise ValueError(f"LlmConfig.structured {self.structured!r} is not one of {STRUCTURED_MODES}")
        if (
            self.timeout_s <= 0
            or self.max_retries < 0
            or self.concurrency < 1
            or self.max_output_tokens < 1
            or not self.endpoint_cooldown_s >= 0
        ):
            raise ValueError(
                "LlmConfig needs timeout_s > 0, max_retries >= 0, concurrency >= 1, max_output_tokens >= 1, "
                "endpoint_cooldown_s >= 0"
            )

    @classmethod
    def from_params(cls, params: Mapping[str, Any], prefix: str = "llm_") -> LlmConfig:
        """From ``{prefix}<field>`` entries of a parameter mapping (others are ignored)."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            if prefix + f.name in params:
                default, value = getattr(cls, f.name), params[prefix + f.name]
                if isinstance(default, str) and isinstance(value, list | tuple):
                    value = ",".join(str(v) for v in value)  # several endpoints
                values[f.name] = _typed(default, value)
        return cls(**values)

    def resolved(self) -> LlmConfig:
        """With base URL and model filled from the environment where empty."""
        base = (
            self.base_url or os.environ.get("SG_SEARCH_LLM_BASE_URL") or os.environ.get("OPENAI_BASE_URL", "")
        )
        return replace(self, base_url=base, model=self.model or os.environ.get("SG_SEARCH_LLM_MODEL", ""))


@dataclass
class LlmCounters:
    """What the client did. ``requests`` and the token counts include cache hits (they are what
    the reasoning consumed); ``calls`` reached the endpoint; ``latency_s`` is time waited on it;
    ``repairs`` are re-prompts after an unusable answer, ``parse_failures`` the answers that were
    not in the asked form at all (no JSON object; a text protocol's reply in none of its forms)."""

    requests: int = 0
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    retries: int = 0
    repairs: int = 0
    parse_failures: int = 0
    errors: list[str] = field(default_factory=list)

    def as_row(self) -> dict[str, float]:
        """Numbers for a benchmark row (``llm_`` prefixed)."""
        row = {f"llm_{k}": float(v) for k, v in asdict(self).items() if k != "errors"}
        row["llm_errors"] = float(len(self.errors))
        return row

    def minus(self, earlier: LlmCounters) -> LlmCounters:
        """The difference ``self - earlier`` (what happened in between)."""
        out = LlmCounters(
            **{
                f.name: getattr(self, f.name) - getattr(earlier, f.name)
                for f in fields(self)
                if f.name != "errors"
            }
        )
        out.errors = self.errors[len(earlier.errors) :]
        return out

    def copy(self) -> LlmCounters:
        """A snapshot."""
        return replace(self, errors=list(self.errors))


class ChatClient:
    """Chat completions with budget, retries, cache and repair; see the module docstring."""

    def __init__(self, config: LlmConfig, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config.resolved()
        self.counters = LlmCounters()
        self._budget_start = LlmCounters()
        self._clients: dict[str, Any] = {}
        self._sleep = sleep
        self._cache = Path(self.config.cache_dir) if self.config.cache_dir else None

    @property
    def online(self) -> bool:
        """True if an endpoint and a model are configured."""
        return bool(self.config.base_url and self.config.model)

    def reset_budget(self) -> None:
        """Start a new search's budget (the counters keep counting)."""
        self._budget_start = self.counters.copy()

    def _check_budget(self) -> None:
        used = self.counters.minus(self._budget_start)
        c = self.config
        if c.max_requests and used.requests >= c.max_requests:
            raise LlmBudgetExceeded(f"request budget of {c.max_requests} per search used")
        if c.max_tokens and used.prompt_tokens + used.completion_tokens >= c.max_tokens:
            raise LlmBudgetExceeded(f"token budget of {c.max_tokens} per search used")

    def _endpoints(self) -> Endpoints:
        if not self.online:
            raise LlmOffline(
                "no LLM endpoint configured: set SG_SEARCH_LLM_BASE_URL and SG_SEARCH_LLM_MODEL "
                "(or pass base_url and model; `sg-search llm serve` runs a local one)"
            )
        c = self.config
        return shared_endpoints(c.base_url, c.concurrency, c.endpoint_cooldown_s)

    def _openai(self, base_url: str) -> Any:
        if base_url not in self._clients:
            from openai import OpenAI

            self._clients[base_url] = OpenAI(
                base_url=base_url,
                api_key=os.environ.get(self.config.api_key_env) or os.environ.get("OPENAI_API_KEY") or "none",
                timeout=self.config.timeout_s,
                max_retries=0,  # retried here, counted and budgeted
            )
        return self._clients[base_url]

    def _response_format(self, schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
        mode = self.config.structured
        if mode == "none":
            return None
        if schema is not None and mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "answer", "schema": dict(schema)}}
        if schema is not None and mode == "json_object_schema":
            return {"type": "json_object", "schema": dict(schema)}
        return {"type": "json_object"}

    def _key(self, request: Mapping[str, Any]) -> str:
        blob = json.dumps({k: v for k, v in request.items() if k != "timeout"}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def complete(
        self,
        messages: Sequence[Message],
        json_mode: bool = False,
        schema: Mapping[str, Any] | None = None,
        regex: str | None = None,
    ) -> str:
        """The assistant's text for ``messages`` (from the cache when there). ``regex``: the
        form a text answer must take, sent only with ``text_regex`` (part of the cache key).

        Raises :class:`LlmBudgetExceeded` before a request beyond the budget, :class:`LlmOffline`
        when the answer is not cached and no endpoint is configured, :class:`LlmError` when the
        endpoint fails after the retries.
        """
        self._check_budget()
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": list(messages),
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_output_tokens,
        }
        response_format = self._response_format(schema) if json_mode or schema is not None else None
        if response_format is not None:
            request["response_format"] = response_format
        if regex is not None and self.config.text_regex:
            request["regex"] = regex
        cached = self._cache / f"{self._key(request)}.json" if self._cache else None
        entry = _read_cache_entry(cached) if cached is not None else None
        if entry is not None:
            self._count(entry.get("usage", {}), cache_hit=True)
            return str(entry["text"])
        text, usage = self._request(request)
        self._count(usage, cache_hit=False)
        if cached is not None:
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                entry = {"model": self.config.model, "text": text, "usage": usage, **request}
                _write_atomically(cached, json.dumps(entry))
            except OSError as exc:  # a full disk costs the cache, not the answer
                log.warning("LLM cache: could not write %s: %s", cached, exc)
        return text

    def _count(self, usage: Mapping[str, int], cache_hit: bool) -> None:
        c = self.counters
        c.requests += 1
        c.cache_hits += int(cache_hit)
        c.calls += int(not cache_hit)
        c.prompt_tokens += int(usage.get("prompt_tokens", 0))
        c.completion_tokens += int(usage.get("completion_tokens", 0))

    def _request(self, request: dict[str, Any]) -> tuple[str, dict[str, int]]:
        import openai

        endpoints = self._endpoints()
        retryable = (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError)
        attempt = 0
        tried: set[str] = set()
        while True:
            url = endpoints.acquire(tried)
            start = time.perf_counter()
            try:
                sent = {k: v for k, v in request.items() if k != "regex"}
                if "regex" in request:  # not an OpenAI parameter: in the body as is
                    sent["extra_body"] = {"regex": request["regex"]}
                response = self._openai(url).chat.completions.create(**sent)
                endpoints.succeeded(url)
                break
            except openai.BadRequestError as exc:
                if "regex" in request:  # the server does not constrain text: ask without it
                    self.counters.errors.append("BadRequestError(regex)")
                    request = {k: v for k, v in request.items() if k != "regex"}
                    continue
                if request.get("response_format", {}).get("type", "json_object") != "json_object":
                    # The server does not take this form of structured output: plain JSON mode.
                    self.counters.errors.append("BadRequestError(response_format)")
                    request = {**request, "response_format": {"type": "json_object"}}
                    continue
                raise self._error(exc, url) from exc
            except openai.OpenAIError as exc:
                status = getattr(exc, "status_code", 0) or 0
                if not (isinstance(exc, retryable) or status >= 500):
                    raise self._error(exc, url) from exc
                endpoints.failed(url)
                tried.add(url)
                if endpoints.another(tried):  # fail over at once; no backoff, no retry spent
                    self.counters.errors.append(f"{type(exc).__name__}(failover)")
                    continue
                if attempt >= self.config.max_retries:
                    raise self._error(exc, url, attempt) from exc
                self.counters.errors.append(type(exc).__name__)
                self.counters.retries += 1
                self._sleep(self._backoff(exc, attempt))
                attempt += 1
                tried.clear()
            finally:
                endpoints.release(url)
                self.counters.latency_s += time.perf_counter() - start
        choices = getattr(response, "choices", None)
        if not choices or choices[0].message is None:
            raise LlmError(f"{url}: the answer has no choices")
        usage = response.usage
        tokens = {
            "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
        }
        return choices[0].message.content or "", tokens

    def _error(self, exc: Exception, url: str, retries: int = 0) -> LlmError:
        self.counters.errors.append(type(exc).__name__)
        after = f" after {retries} retries" if retries else ""
        return LlmError(f"{url}: {type(exc).__name__}{after}: {str(exc)[:300]}")

    def _backoff(self, exc: Exception, attempt: int) -> float:
        delay = self.config.backoff_s * 2**attempt
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        with contextlib.suppress(ValueError):
            delay = max(delay, float(header)) if header else delay
        return float(min(delay, self.config.max_backoff_s))

    def _judge(self, text: str, check: JsonCheck | None) -> tuple[dict[str, Any] | None, str | None]:
        value = parse_json_object(text)
        if value is None:
            self.counters.parse_failures += 1
            return None, "it was not one valid JSON object"
        return value, check(value) if check is not None else None

    def complete_json(
        self,
        messages: Sequence[Message],
        schema: Mapping[str, Any] | None = None,
        check: JsonCheck | None = None,
    ) -> dict[str, Any]:
        """A JSON object answer that passes ``check``; one repair re-prompt naming the problem if
        the first answer does not parse or fails the check; :class:`LlmError` if the repaired
        one still does."""
        text = self.complete(messages, json_mode=True, schema=schema)
        value, problem = self._judge(text, check)
        if value is not None and problem is None:
            return value
        self.counters.repairs += 1
        repair = [
            *messages,
            {"role": "assistant", "content": text},
            {"role": "user", "content": render("repair_json", problem=problem)},
        ]
        text = self.complete(repair, json_mode=True, schema=schema)
        value, problem = self._judge(text, check)
        if value is None or problem is not None:
            raise LlmError(f"the model's answer stayed unusable after a repair: {problem} ({text[:160]!r})")
        return value


def _typed(default: Any, value: Any) -> Any:
    """A parameter value as the type of the field's default ("false" is False for a bool)."""
    if isinstance(default, bool) and isinstance(value, str):
        if value.strip().lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{value!r} is not a boolean (true or false)")
        return value.strip().lower() in ("true", "1")
    return type(default)(value)


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


def image_part(rgb: np.ndarray, max_side: int = 512) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part: ``rgb`` (H x W x 3 uint8) as a PNG data URL,
    downscaled so that neither side exceeds ``max_side`` pixels."""
    from PIL import Image

    if rgb.ndim != 3 or rgb.shape[2] not in (3, 4) or rgb.dtype != np.uint8:
        raise ValueError(f"image_part needs an H x W x 3 uint8 image, got {rgb.shape} {rgb.dtype}")
    image = Image.fromarray(rgb[:, :, :3])
    image.thumbnail((max_side, max_side))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}


def user_message(text: str, images: Sequence[np.ndarray] = (), max_side: int = 512) -> Message:
    """A user message; with images, a content list of the text and one part per image."""
    if not images:
        return {"role": "user", "content": text}
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}, *(image_part(i, max_side) for i in images)],
    }


def _write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` whole or not at all, also with writers on other machines sharing
    the folder: a temporary name no other writer uses, fsynced, then renamed over ``path``."""
    tmp = path.with_name(f".{path.name}.{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _read_cache_entry(path: Path) -> dict[str, Any] | None:
    """A cached answer, or None when there is none or it cannot be used (truncated, not JSON,
    no text): a damaged entry is a cache miss, and the fresh answer replaces it."""
    try:
        entry = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        log.warning("LLM cache: ignoring unreadable entry %s: %s", path, exc)
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
        log.warning("LLM cache: ignoring entry %s without a text answer", path)
        return None
    if not isinstance(entry.get("usage", {}), dict):
        entry["usage"] = {}
    return entry
