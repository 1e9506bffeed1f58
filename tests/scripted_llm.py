"""A scripted OpenAI-compatible chat server on 127.0.0.1 (a real HTTP server, for tests).

``answer(prompt) -> str | Scripted`` decides the reply from the last user message's text (the
whole request is in ``state.requests[-1]``): a string is the assistant's text; a
:class:`Scripted` can also delay the reply, answer with an HTTP error status and headers, or
send a raw body that is not a chat completion at all. ``fail_after`` makes every later
request an HTTP 500. ``in_flight_max`` records the most requests served at once.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One scripted reply: ``status`` != 200 sends ``{"error": ...}``; ``raw`` replaces the body."""

    text: str = ""
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None


class ScriptedLlm:
    """State shared with the handler: the script, requests seen and the failure switch."""

    def __init__(self, answer: Callable[[str], str | Scripted]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.fail_after: int | None = None
        self.base_url = ""
        self.in_flight = 0
        self.in_flight_max = 0
        self.lock = threading.Lock()


def prompt_text(message: dict[str, Any]) -> str:
    """The text of a message (the text parts of a content list)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
    return str(content)


def _handler(state: ScriptedLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self._leave()  # before the body: the client can act on the reply only after this
            self.wfile.write(data)

        def _leave(self) -> None:
            """This request is no longer in flight (once, however the handler ends)."""
            with state.lock:
                if getattr(self, "_in_flight", False):
                    self._in_flight = False
                    state.in_flight -= 1

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.requests.append(body)
                state.in_flight += 1
                state.in_flight_max = max(state.in_flight_max, state.in_flight)
                self._in_flight = True
                failing = state.fail_after is not None and len(state.requests) > state.fail_after
            try:
                self._reply(body, failing)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer
            finally:
                self._leave()

        def _reply(self, body: dict[str, Any], failing: bool) -> None:
            if failing:
                self._send(500, b'{"error": {"message": "scripted failure"}}', {})
                return
            reply = state.answer(prompt_text(body["messages"][-1]))
            scripted = reply if isinstance(reply, Scripted) else Scripted(reply)
            time.sleep(scripted.delay_s)
            if scripted.raw is not None:
                self._send(scripted.status, scripted.raw, scripted.headers)
                return
            if scripted.status != 200:
                error = json.dumps({"error": {"message": scripted.text or "scripted error"}}).encode()
                self._send(scripted.status, error, scripted.headers)
                return
            completion = {
                "id": f"chat-{len(state.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": scripted.text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(json.dumps(body["messages"])) // 4,
                    "completion_tokens": 7,
                    "total_tokens": 0,
                },
            }
            self._send(200, json.dumps(completion).encode(), scripted.headers)

    return Handler


@contextmanager
def scripted_llm(answer: Callable[[str], str | Scripted]) -> Iterator[ScriptedLlm]:
    """Serve ``answer`` at ``state.base_url`` (…/v1) until the block ends."""
    state = ScriptedLlm(answer)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
