"""A headless Chromium driven over the DevTools protocol (no npm, no browser download): the
system ``chromium`` on 127.0.0.1, a websocket per page, console errors and failed loads kept.

Only for tests: run inside a private network namespace (scripts/private-network) so that
nothing a page loads can leave the machine.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM_ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--window-size=1400,1300",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)


def chromium() -> str | None:
    """The system browser, if installed (Debian's ``chromium``)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium; :meth:`open` gives a :class:`Page`."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.TemporaryDirectory(prefix="sg-search-chromium-")
        self.process = subprocess.Popen(
            [executable, *CHROMIUM_ARGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        port_file = Path(self._profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30.0
        while not port_file.is_file() or not port_file.read_text().strip():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"chromium did not start: {self.process.stderr.read() if self.process.stderr else ''}"
                )
            time.sleep(0.1)
        self.port = int(port_file.read_text().split()[0])

    def open(self) -> Page:
        """A new page (tab)."""
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=10) as response:
            target = json.load(response)
        return Page(connect(target["webSocketDebuggerUrl"], max_size=None, open_timeout=10))

    def close(self) -> None:
        """Stop the browser and remove its profile."""
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._profile.cleanup()


class Page:
    """One tab: commands and the events that came with them."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self.events: list[dict[str, Any]] = []
        # Not the Network domain: a streaming viewer makes thousands of its events a second.
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """Call ``method`` and return its result; events that arrive meanwhile are kept."""
        call_id = next(self._ids)
        self._socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        deadline = time.monotonic() + 120.0
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method}: no answer within 120 s")
            message = json.loads(self._socket.recv(timeout=120))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method", ""), message.get("params", {})
        self.events.append(message)
        if method == "Runtime.exceptionThrown":
            self.errors.append(json.dumps(params["exceptionDetails"])[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            self.errors.append(
                " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            )
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"{params['entry'].get('url', '')}: {params['entry']['text']}")

    def pump(self, seconds: float) -> None:
        """Receive events for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self._event(json.loads(self._socket.recv(timeout=left)))
            except TimeoutError:
                return

    def goto(self, url: str, timeout_s: float = 30.0) -> None:
        """Navigate and wait for the load event."""
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + timeout_s
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url} did not load within {timeout_s} s")
            self.pump(0.2)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: Path | None = None) -> bytes:
        """A PNG of the viewport (written to ``path`` when given)."""
        data = base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])
        if path is not None:
            path.write_bytes(data)
        return data

    def close(self) -> None:
        """Close the websocket."""
        self._socket.close()
