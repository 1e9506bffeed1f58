"""A local OpenAI-compatible chat server for a packaged GGUF model, for tests and offline demos.

``sg-search llm serve [--model NAME]`` serves one of the models PyPI packages ship
(:mod:`sg_search.llm.local_models`: SmolLM2-135M-Instruct by default, or Gemma 3 270M) on
127.0.0.1, through transformers (which reads GGUF with the ``gguf`` package and de-quantises
it: 40-150 s to load the first time, about 1-10 s from the converted copy it keeps, see
:mod:`sg_search.llm.converted`; then 13-22 tokens per second on two CPU cores). It answers
``POST /v1/chat/completions`` (greedy decoding at temperature 0, so answers repeat) and
``GET /v1/models``, which lists the model and the constraints it enforces.

Constrained decoding (:mod:`sg_search.llm.constrained`, xgrammar): a ``response_format`` of
type ``json_schema`` or ``json_object`` (optionally with a ``schema``), or SGLang's ``regex`` /
``ebnf`` request fields, restrict every generated token so that the answer follows the
form; an answer the token limit cut off is returned with ``finish_reason`` "length". A form
the server cannot enforce, or one that does not compile, is answered 400 naming it.

Why not llama.cpp's server: ``llama-cpp-python`` builds from source here (8-12 minutes, and
its default build crashes on this CPU), and the prebuilt ``llama-cpp-py-sync`` wheel needs
glibc 2.38 (this machine has 2.36). Where it is installed, ``python -m llama_cpp.server
--model "$(sg-search llm model-path)"`` is a faster drop-in with grammar-constrained JSON.
Images in a request are dropped (the models read text only); the reply says so in
``system_fingerprint``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sg_search.llm.constrained import (
    SUPPORTED,
    Constraint,
    GrammarCompiler,
    constraint_of,
)
from sg_search.llm.converted import load_model
from sg_search.llm.local_models import DEFAULT_MODEL, LocalModel, local_model, model_cache_dir


class GgufChatModel:
    """A GGUF chat model through transformers on the CPU; one generation at a time."""

    def __init__(
        self, spec: LocalModel, path: Path | None = None, threads: int = 2, keep_converted: bool = True
    ) -> None:
        """``path`` overrides the packaged file (same architecture and chat format);
        ``keep_converted``: load from, or keep, the converted copy in the model cache folder
        (:mod:`sg_search.llm.converted`)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers.utils import logging

        hf_logging: Any = logging
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(threads)
        self._torch = torch
        self.name = spec.name
        path = path or spec.locate()
        # float32 on the CPU (de-quantised), from the converted copy after the first load
        cache_root = model_cache_dir() if keep_converted else None
        self.tokenizer, loaded, self.from_converted = load_model(path, cache_root)
        if spec.chat_template:
            self.tokenizer.chat_template = spec.chat_template
        self.model: Any = loaded
        self.context_tokens = int(getattr(loaded.config, "max_position_embeddings", 8192) or 8192)
        tokenizer: Any = self.tokenizer
        stops = [int(tokenizer.convert_tokens_to_ids(t)) for t in spec.stop_tokens]
        self.stop_token_ids = sorted({int(self.tokenizer.eos_token_id), *stops})
        self.grammars = GrammarCompiler(
            self.tokenizer, int(loaded.config.vocab_size), self.stop_token_ids, threads
        )
        self._lock = threading.Lock()

    def chat(
        self,
        messages: list[dict[str, Any]],
        max_tokens: int,
        temperature: float,
        constraint: Constraint | None = None,
    ) -> tuple[str, int, int, str]:
        """(text, prompt tokens, completion tokens, finish reason "stop" or "length");
        ValueError if the prompt does not fit, :class:`UnsupportedConstraint` if the
        constraint does not compile."""
        processors = []
        if constraint is not None:
            processors.append(self.grammars.logits_processor(self.grammars.compile(constraint)))
        return self.generate(messages, max_tokens, temperature, processors)

    def generate(
        self, messages: list[dict[str, Any]], max_tokens: int, temperature: float, processors: list[Any]
    ) -> tuple[str, int, int, str]:
        """:meth:`chat` with these transformers logits processors."""
        encoded: Any = self.tokenizer.apply_chat_template(
            [{"role": m["role"], "content": _text_of(m.get("content"))} for m in messages],
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
        )
        ids = encoded["input_ids"]
        if ids.shape[1] + max_tokens > self.context_tokens:
            raise ValueError(
                f"prompt of {ids.shape[1]} tokens + {max_tokens} exceeds the context of {self.context_tokens}"
            )
        sampling: dict[str, Any] = {"do_sample": False}
        if temperature > 0:
            self._torch.manual_seed(0)
            sampling = {"do_sample": True, "temperature": temperature}
        with self._lock, self._torch.no_grad():
            out = self.model.generate(
                ids,
                attention_mask=encoded["attention_mask"],
                max_new_tokens=max_tokens,
                eos_token_id=self.stop_token_ids,
                pad_token_id=self.stop_token_ids[0],
                logits_processor=processors,
                **sampling,
            )
        new = out[0, ids.shape[1] :]
        ended = new.shape[0] > 0 and int(new[-1]) in self.stop_token_ids
        text = self.tokenizer.decode(new, skip_special_tokens=True)
        return text, int(ids.shape[1]), int(new.shape[0]), "stop" if ended else "length"


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
    return str(content or "")


def make_server(model: GgufChatModel, port: int = 0, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """An HTTP server answering the chat API with ``model`` (``port`` 0 = any free one)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                served = {
                    "id": model.name,
                    "object": "model",
                    "owned_by": "local",
                    "constraints": list(SUPPORTED),
                }
                self._reply(200, {"object": "list", "data": [served]})
            else:
                self._reply(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._reply(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                    raise ValueError("the request needs 'messages', a list")
                messages = body["messages"]
                images = any(isinstance(m.get("content"), list) and len(m["content"]) > 1 for m in messages)
                text, prompt_tokens, completion_tokens, finish = model.chat(
                    messages,
                    int(body.get("max_tokens") or 256),
                    float(body.get("temperature") or 0.0),
                    constraint_of(body),  # UnsupportedConstraint is a ValueError: 400
                )
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self._reply(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                return
            self._reply(
                200,
                {
                    "id": f"chatcmpl-{time.monotonic_ns()}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model.name,
                    "system_fingerprint": "images dropped (text-only model)" if images else "local",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": finish,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
            )

    return ThreadingHTTPServer((host, port), Handler)


def serve(port: int, model: str = DEFAULT_MODEL, model_file: str = "", threads: int = 2) -> None:
    """Load packaged model ``model`` (or ``model_file`` in its format) and serve until
    interrupted; prints the base URL once ready."""
    start = time.perf_counter()
    loaded = GgufChatModel(local_model(model), Path(model_file) if model_file else None, threads)
    source = "its converted copy" if loaded.from_converted else "its GGUF file"
    print(f"loaded {loaded.name} from {source} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    server = make_server(loaded, port)
    print(f"serving {loaded.name} at http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
