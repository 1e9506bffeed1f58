"""Where the objects of one kind of home are kept: a holder prior counted on training episodes.

The distilled knowledge says how plausible a holder is for an object in general ("a fork in a
drawer, in the dishwasher, on the table"); it does not know the conventions of the homes a
robot searches (which holders the people there use at all). The prior adds them:
``counts[(holder, room)]`` = how many training placements put an object in/on that holder
category in that room type (``sg-search distill prior`` counts the train split of the bddl
episodes; a lab counts its own homes the same way). For ranking, a holder's weight is its
smoothed share in the room divided by the uniform share,

    weight(h, r) = (n(h, r) + s) / ((N(r) + s · H(r)) / H(r)),

so 1 is "as common as any holder of this room", a holder the room's counts never name gets
s / mean, and a room type with no counts leaves every holder at 1 (no opinion). The reasoner
weighs each instance it sees, and a kitchen has one dishwasher but several top cabinets: with
``instances[(holder, room)]`` = k, the mean number of that holder in a room of that type, the
count is shared among them, n(h, r) + s becomes (n(h, r) + s) / k^γ (``instance_exponent`` γ;
0 = per category) before the division by the room's mean. The prior
has no opinion either about a name outside its ``vocabulary`` (the holder categories of the
homes it was counted in; a detector's "nightstand" in a home that is not one of them): weight 1,
unless one of its other names (:func:`aliases_from`, the distilled answers' synonyms) is in it. A
co-occurrence p is weighed as a likelihood ratio on its odds (:func:`weigh`):
p / (1 - p) · weight^β, so it stays in [0, 1] and keeps its order among holders the
knowledge already calls near certain (a product capped at 1 made them tie).

File: ``holder_prior.json`` = ``{"provenance": {...}, "smoothing": s, "instance_exponent": γ,
"vocabulary": [holder, ...], "counts": [[holder, room, n], ...], "instances": [[holder, room,
k], ...]}``, names in knowledge text ("bottom cabinet", "living room"); without ``vocabulary``,
the counted holders are the vocabulary; without ``instances`` (or γ), every k is 1.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.reasoning.knowledge.datasets import Answers, KnowledgeDataError, default_data_dir
from sg_search.reasoning.knowledge.names import knowledge_text

PRIOR_FILE = "holder_prior.json"


def weigh(p_cooc: np.ndarray | float, weight: np.ndarray | float, beta: float) -> np.ndarray:
    """Co-occurrence probabilities ``p_cooc`` with their odds multiplied by ``weight``^``beta``
    (elementwise; β 0 returns ``p_cooc``); 0 and 1 stay 0 and 1."""
    p = np.clip(np.asarray(p_cooc, dtype=np.float64), 0.0, 1.0)
    w = np.asarray(weight, dtype=np.float64) ** beta
    weighed: np.ndarray = np.where(p >= 1.0, 1.0, p * w / np.maximum(p * w + (1.0 - p), 1e-12))
    return weighed


class HolderPrior:
    """Weights of holder categories per room type from placement counts (module docstring)."""

    def __init__(
        self,
        counts: Mapping[tuple[str, str], float],
        smoothing: float,
        vocabulary: Iterable[str] = (),
        aliases: Mapping[str, str] | None = None,
        instances: Mapping[tuple[str, str], float] | None = None,
        instance_exponent: float = 0.0,
    ) -> None:
        if smoothing <= 0:
            raise ValueError(f"holder prior smoothing must be > 0, got {smoothing}")
        if instance_exponent < 0:
            raise ValueError(f"holder prior instance_exponent must be >= 0, got {instance_exponent}")
        self.smoothing = smoothing
        self.instance_exponent = instance_exponent
        self.counts = _by_text(counts)
        self.instances = _by_text(instances or {})
        if any(k < 1 for k in self.instances.values()):
            raise ValueError("holder prior instances are mean counts per room, each >= 1")
        self.vocabulary = {knowledge_text(h) for h in vocabulary} | {h for h, _ in self.counts}
        self.aliases = {knowledge_text(a): knowledge_text(h) for a, h in (aliases or {}).items()}
        per_room: dict[str, list[float]] = {}
        for holder, room in self.counts:
            per_room.setdefault(room, []).append(self._smoothed(holder, room))
        # mean smoothed count per holder of the room: the "uniform" share's numerator
        self._mean = {room: sum(vs) / len(vs) for room, vs in per_room.items()}

    def _smoothed(self, holder: str, room: str) -> float:
        """(n(h, r) + s) / k(h, r)^γ for names in knowledge text."""
        share = math.pow(self.instances.get((holder, room), 1.0), self.instance_exponent)
        return (self.counts.get((holder, room), 0.0) + self.smoothing) / share

    def weights(self, holders: Sequence[str], rooms: Sequence[str]) -> np.ndarray:
        """weight(holders[i], rooms[i]) for each i (1.0 where the room type has no counts)."""
        if len(holders) != len(rooms):
            raise ValueError(f"{len(holders)} holders and {len(rooms)} rooms; pairs are element-wise")
        out = np.ones(len(holders))
        for i, (holder, room) in enumerate(zip(holders, rooms, strict=True)):
            h, r = knowledge_text(holder), knowledge_text(room)
            if h not in self.vocabulary:
                h = self.aliases.get(h, "")
            mean = self._mean.get(r)
            if mean is not None and h in self.vocabulary:
                out[i] = self._smoothed(h, r) / mean
        return out

    def with_aliases(self, answers: Answers) -> HolderPrior:
        """The same prior, reading a holder's other names (:func:`aliases_from`) as it."""
        return HolderPrior(
            self.counts, self.smoothing, self.vocabulary, aliases_from(answers, self.vocabulary),
            self.instances, self.instance_exponent,
        )  # fmt: skip

    def save(self, path: Path, provenance: Mapping[str, Any]) -> None:
        """Write the file described in the module docstring (sorted, so byte-reproducible)."""

        def rows(table: Mapping[tuple[str, str], float]) -> str:
            return ",\n  ".join(json.dumps([h, r, v]) for (h, r), v in sorted(table.items()))

        head = json.dumps(
            {
                "provenance": dict(provenance),
                "smoothing": self.smoothing,
                "instance_exponent": self.instance_exponent,
                "vocabulary": sorted(self.vocabulary),
            },
            sort_keys=True,
        )
        path.write_text(
            f'{head[:-1]},\n "counts": [\n  {rows(self.counts)}\n ],\n'
            f' "instances": [\n  {rows(self.instances)}\n ]\n}}\n'
        )

    @classmethod
    def load(cls, path: Path) -> HolderPrior:
        """Read a ``holder_prior.json``; a clear error names the file when it is not one."""
        try:
            body = json.loads(path.read_text())
            counts: dict[tuple[str, str], float] = {}
            for holder, room, n in body["counts"]:
                key = (str(holder), str(room))
                counts[key] = counts.get(key, 0.0) + float(n)
            instances = {(str(h), str(r)): float(k) for h, r, k in body.get("instances", [])}
            return cls(
                counts, float(body["smoothing"]), [str(h) for h in body.get("vocabulary", [])],
                instances=instances, instance_exponent=float(body.get("instance_exponent", 0.0)),
            )  # fmt: skip
        except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise KnowledgeDataError(f"{path}: not a holder prior file ({exc!r})") from exc

    @classmethod
    def load_default(cls) -> HolderPrior:
        """The prior shipped with the package (counted on the bddl episodes' half A)."""
        return cls.load(default_data_dir() / PRIOR_FILE)


def _by_text(table: Mapping[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """``table`` with its (holder, room) keys in knowledge text."""
    return {(knowledge_text(h), knowledge_text(r)): float(v) for (h, r), v in table.items()}


def aliases_from(answers: Answers, vocabulary: Iterable[str]) -> dict[str, str]:
    """Every other name of a distilled holder type whose names include one (and only one)
    ``vocabulary`` name -> that name ("refrigerator" -> "fridge")."""
    known = {knowledge_text(h) for h in vocabulary}
    out: dict[str, str] = {}
    for holder in answers.holders:
        names = [knowledge_text(n) for n in answers.names_of(holder)]
        inside = {n for n in names if n in known}
        if len(inside) == 1:
            (target,) = inside
            out.update({n: target for n in names if n not in known})
    return out
