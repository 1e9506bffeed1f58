"""A scripted OpenAI-compatible chat server on 127.0.0.1 (a real HTTP server, for tests).

``answer(prompt) -> str`` decides the assistant's text from the last user message; requests
are counted; ``fail_after`` makes every later request an HTTP 500.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedLlm:
    """State shared with the handler: the script, request count and failure switch."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.fail_after: int | None = None
        self.base_url = ""


def _handler(state: ScriptedLlm) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            if state.fail_after is not None and len(state.requests) > state.fail_after:
                self.send_response(500)
                self.end_headers()
                return
            prompt = body["messages"][-1]["content"]
            reply = {
                "id": f"chat-{len(state.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": state.answer(prompt)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 7, "total_tokens": 0},
            }
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def scripted_llm(answer: Callable[[str], str]) -> Iterator[ScriptedLlm]:
    """Serve ``answer`` at ``state.base_url`` (…/v1) until the block ends."""
    state = ScriptedLlm(answer)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
