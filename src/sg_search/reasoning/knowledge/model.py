"""The distilled knowledge as two small MLPs over pairs of SBERT embeddings (SCOUT, METHODS.md §5).

- containment(room, object): probability that a home keeps the object in that room type
  (trained with MSE on the LLM's scores);
- cooccurrence(holder, object): probability that the object is inside/on that furniture or
  container when both are in one room (trained with BCE on continuous targets).

Input = [embed(a), embed(b)] (768-d); three linear layers with ReLU, sigmoid output. A head
is an ensemble of one or more such MLPs trained with different seeds, whose log-odds are
averaged: one training's scores move with its seed, enough to change which container a search
opens first; the mean of several moves far less, and averaging log-odds rather than
probabilities keeps a confident holder's score high when one member doubts it. The shipped
weights are one MLP per head (``sg-search distill train --members 10`` trains ten). Inference
is numpy (milliseconds for thousands of pairs); torch is only needed for training
(:mod:`.train`). Weights live in ``data/knowledge/knowledge_mlp.npz``
(``<head>/<member>/<layer>/w|b``; the shipped file has the one-MLP layout) with their SHA-256 in
``knowledge_mlp.json``; a file that does not match is refused with both names in the error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.reasoning.knowledge.datasets import default_data_dir
from sg_search.reasoning.knowledge.encoder import SentenceEncoder
from sg_search.reasoning.knowledge.names import knowledge_text

WEIGHTS_FILE = "knowledge_mlp.npz"
METADATA_FILE = "knowledge_mlp.json"
HEADS = ("containment", "cooccurrence")


class KnowledgeWeightsError(ValueError):
    """Weights that are missing, corrupt or do not match their recorded hash."""


@dataclass(frozen=True)
class Mlp:
    """Linear layers ``(weight (in, out), bias (out,))``; ReLU between, sigmoid after the last."""

    layers: tuple[tuple[np.ndarray, np.ndarray], ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Scores in [0, 1] for rows of ``x`` (n, 768)."""
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                np.maximum(x, 0.0, out=x)
        scores: np.ndarray = 1.0 / (1.0 + np.exp(-x[:, 0].astype(np.float64)))
        return scores


@dataclass(frozen=True)
class Ensemble:
    """MLPs of one head trained with different seeds; the score is the sigmoid of their mean log-odds."""

    members: tuple[Mlp, ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Score in [0, 1] for rows of ``x`` (n, 768): the members' log-odds averaged (each score
        clipped to [1e-7, 1 - 1e-7] first, so a member's 0 or 1 stays finite); one member's own scores."""
        if len(self.members) == 1:
            return self.members[0](x)
        p = np.clip([member(x) for member in self.members], 1e-7, 1 - 1e-7)
        scores: np.ndarray = 1.0 / (1.0 + np.exp(-np.mean(np.log(p / (1 - p)), axis=0)))
        return scores


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count(keys: set[str], prefix: str) -> int:
    """How many consecutive indices ``prefix<i>/`` start some key."""
    n = 0
    while any(k.startswith(f"{prefix}{n}/") for k in keys):
        n += 1
    return n


def load_mlps(weights: Path, expected_sha256: str | None) -> dict[str, Ensemble]:
    """Both heads from an npz (``<head>/<member>/<layer>/w|b``; the one-MLP layout
    ``<head>/<layer>/w|b`` of earlier trainings as one member), checked against ``expected_sha256``."""
    if not weights.is_file():
        raise KnowledgeWeightsError(
            f"knowledge weights {weights} do not exist; run `sg-search distill train`"
        )
    actual = sha256_of(weights)
    if expected_sha256 is not None and actual != expected_sha256:
        raise KnowledgeWeightsError(
            f"knowledge weights {weights} have sha256 {actual}, expected {expected_sha256} "
            "(corrupt or replaced; re-install the package or run `sg-search distill train`)"
        )
    try:
        with np.load(weights) as data:
            arrays = {k: data[k].astype(np.float32) for k in data.files}
        heads = {}
        keys = set(arrays)
        for head in HEADS:
            # weights trained before ensembles (``<head>/<layer>/w|b``) load as one member
            prefixes = (
                [f"{head}/"]
                if f"{head}/0/w" in keys
                else [f"{head}/{m}/" for m in range(_count(keys, f"{head}/"))]
            )
            members = []
            for prefix in prefixes:
                layers = range(_count(keys, prefix))
                members.append(
                    Mlp(tuple((arrays[f"{prefix}{i}/w"], arrays[f"{prefix}{i}/b"]) for i in layers))
                )
            if not members or not all(member.layers for member in members):
                raise KeyError(head)
            heads[head] = Ensemble(tuple(members))
    except (OSError, ValueError, KeyError) as exc:
        raise KnowledgeWeightsError(f"knowledge weights {weights} are not readable ({exc!r})") from exc
    return heads


def save_mlps(weights: Path, heads: dict[str, Ensemble]) -> str:
    """Write both heads; returns the file's SHA-256."""
    arrays = {
        f"{head}/{m}/{i}/{name}": array
        for head, ensemble in heads.items()
        for m, mlp in enumerate(ensemble.members)
        for i, layer in enumerate(mlp.layers)
        for name, array in zip(("w", "b"), layer, strict=True)
    }
    with weights.open("wb") as f:
        np.savez_compressed(f, **arrays)  # type: ignore[arg-type]
    return sha256_of(weights)


class KnowledgeModel:
    """Commonsense scores for (room, object) and (holder, object) pairs.

    Every input string is normalised (:func:`knowledge_text`), so "Mugs", "kitchen_0" or an
    empty string still get a score in [0, 1].
    """

    def __init__(
        self, heads: dict[str, Ensemble], encoder: SentenceEncoder, metadata: dict[str, Any]
    ) -> None:
        self._heads = heads
        self.encoder = encoder
        self.metadata = metadata

    @classmethod
    def load(cls, directory: Path, encoder: SentenceEncoder | None = None) -> KnowledgeModel:
        """Weights and metadata from ``directory`` (see the module docstring)."""
        meta_path = directory / METADATA_FILE
        try:
            metadata = json.loads(meta_path.read_text())
            expected = str(metadata["weights_sha256"])
        except (OSError, json.JSONDecodeError, KeyError) as exc:
            raise KnowledgeWeightsError(
                f"knowledge metadata {meta_path} is missing or corrupt ({exc})"
            ) from exc
        heads = load_mlps(directory / WEIGHTS_FILE, expected)
        return cls(heads, encoder or SentenceEncoder(), metadata)

    @classmethod
    def load_default(cls) -> KnowledgeModel:
        """The weights shipped with the package (one instance per process)."""
        global _DEFAULT
        if _DEFAULT is None:
            _DEFAULT = cls.load(default_data_dir())
        return _DEFAULT

    def _pairs(self, head: str, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if len(a) != len(b):
            raise ValueError(f"{head}: {len(a)} first and {len(b)} second items; pairs are element-wise")
        if not a:
            return np.zeros(0)
        ea = self.encoder.encode([knowledge_text(x) for x in a])
        eb = self.encoder.encode([knowledge_text(x) for x in b])
        return self._heads[head](np.concatenate([ea, eb], axis=1))

    def containment(self, rooms: Sequence[str], objects: Sequence[str]) -> np.ndarray:
        """p(rooms[i] contains objects[i]) for each i, in [0, 1]."""
        return self._pairs("containment", rooms, objects)

    def cooccurrence(self, objects: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        """p(queries[i] is in/on objects[i]) for each i, in [0, 1] (objects = furniture/containers)."""
        return self._pairs("cooccurrence", objects, queries)

    def cooccurrence_with(self, labels: Sequence[str], goal: str) -> list[float]:
        """p(goal is in/on/with each label): verification's context term
        (:data:`sg_search.search.verification.Cooccurrence`)."""
        return [float(v) for v in self.cooccurrence(list(labels), [goal] * len(labels))]


_DEFAULT: KnowledgeModel | None = None
