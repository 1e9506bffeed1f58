"""Real local models served by ``sg-search llm serve`` on 127.0.0.1, one server per model per
test worker (the tests that use them share the xdist group "llm", see pyproject.toml)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


def _serve(model: str) -> Iterator[str]:
    server = subprocess.Popen(
        # One thread at the lowest priority: the other pytest worker runs timing-sensitive nodes
        # beside it on 2 cores, and nothing here depends on the model's speed.
        [
            sys.executable,
            "-m",
            "sg_search.cli",
            "llm",
            "serve",
            "--model",
            model,
            "--port",
            "0",
            "--threads",
            "1",
        ],
        preexec_fn=lambda: os.nice(19),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        assert server.stdout is not None
        line = ""
        while time.monotonic() < deadline and not line.startswith("serving"):
            line = server.stdout.readline()
            if not line and server.poll() is not None:
                pytest.fail(f"sg-search llm serve --model {model} exited with {server.returncode}")
        yield line.split(" at ")[1].strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def episode_params(base_url: str, cache: Path, **client: Any) -> dict[str, Any]:
    """Reasoner parameters for an episode against ``base_url``: the fallback is ``nearest``,
    answers are cached in ``cache``, ``client`` sets ``llm_<key>`` values."""
    params: dict[str, Any] = {"llm_base_url": base_url, "llm_model": "smollm2", "llm_cache_dir": str(cache)}
    return {**params, **{f"llm_{k}": v for k, v in client.items()}, "fallback": "nearest"}


@pytest.fixture(scope="session")
def local_model() -> Iterator[str]:
    """The base URL of SmolLM2-135M-Instruct (the default model): one server for both modules
    that use it (a start converts the GGUF file, 40-60 s on 2 busy cores, unless the model cache
    holds the converted copy, about 1 s)."""
    yield from _serve("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def gemma_model() -> Iterator[str]:
    """The base URL of Gemma 3 270M (a base model)."""
    yield from _serve("gemma3-270m")
