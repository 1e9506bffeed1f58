"""A packaged GGUF model converted once to transformers' own format, then loaded from there.

transformers reads a GGUF file with the ``gguf`` package, whose reader walks every metadata
value in Python: the tokenizer's vocabulary (262,144 strings for Gemma 3) is parsed once for
the tokenizer, once for the config and once for the weights. Loading Gemma 3 270M so took
100-150 s here and SmolLM2-135M 39 s, of which de-quantising the weights was 6 s. The first
load therefore saves what it built (the float32 weights as safetensors, the config, the
tokenizer) under ``<model cache>/converted/<file stem>-<digest>/``, and later loads read that
folder: about 1 s for SmolLM2. The weights are the same tensors, so the answers are too.

The digest covers the GGUF file's bytes and the transformers version that converted it, so
a changed file or library converts anew. A folder is published whole (written beside its
place, then renamed), so a reader never sees half of one; two servers converting at once both
load, and the second's copy is dropped. A cache that cannot be written costs the next load the
conversion again, nothing more.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DONE_MARKER = "converted.json"
"""Written last into a folder before it is published; names the GGUF file it came from."""


def converted_folder(gguf: Path, cache_root: Path) -> Path:
    """Where the converted copy of ``gguf`` lives (whether or not it exists yet)."""
    import transformers

    digest = hashlib.sha256(f"transformers {transformers.__version__}\n".encode())
    with gguf.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return cache_root / "converted" / f"{gguf.stem}-{digest.hexdigest()[:16]}"


def publish(folder: Path, write: Callable[[Path], None], source: Path) -> bool:
    """Write a folder's files with ``write(staging)`` beside ``folder`` and rename it into
    place; True if this call published it, False if another had already done so or the write
    failed (logged; nothing is left behind)."""
    staging = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    try:
        staging.mkdir(parents=True, exist_ok=False)
        write(staging)
        (staging / DONE_MARKER).write_text(json.dumps({"gguf": str(source)}) + "\n")
        os.rename(staging, folder)
        return True
    except (OSError, RuntimeError, ValueError) as exc:
        if not (folder / DONE_MARKER).is_file():
            log.warning(
                "could not keep the converted model in %s (%s); the next load converts again", folder, exc
            )
        return False
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def load_model(gguf: Path, cache_root: Path | None) -> tuple[Any, Any, bool]:
    """(tokenizer, model in eval mode, True if read from the converted copy) for ``gguf``;
    ``cache_root`` None reads the GGUF file and keeps nothing."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = converted_folder(gguf, cache_root) if cache_root is not None else None
    if folder is not None and (folder / DONE_MARKER).is_file():
        try:
            tokenizer: Any = AutoTokenizer.from_pretrained(str(folder))
            model: Any = AutoModelForCausalLM.from_pretrained(str(folder))
            return tokenizer, model.eval(), True
        except (OSError, ValueError) as exc:
            log.warning("the converted copy %s does not load (%s): reading %s; delete it", folder, exc, gguf)
            folder = None  # a copy is there, broken: keep nothing new beside it
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if folder is not None:
        publish(folder, lambda staging: _save(tokenizer, model, staging), gguf)
    return tokenizer, model.eval(), False


def _save(tokenizer: Any, model: Any, folder: Path) -> None:
    """The de-quantised model as a plain float32 checkpoint (transformers refuses to save a
    model it loaded from GGUF, so the weights and the config are written directly)."""
    from safetensors.torch import save_model

    save_model(model, str(folder / "model.safetensors"))  # tied weights stored once
    config = model.config.to_dict()
    config.pop("quantization_config", None)  # the weights are no longer quantised
    type(model.config).from_dict(config).to_json_file(str(folder / "config.json"))
    tokenizer.save_pretrained(str(folder))
