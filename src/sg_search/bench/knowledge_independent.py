"""The knowledge against independent placements written for it
(``data/knowledge/independent_placements.yaml``: "object | holder | room type", provenance in
its header; never used for training or tuning).

Per placement: the holders present in that room type (the answers' holder vocabulary with
p(room) >= ``PRESENT``; the true holder's own name replaces its vocabulary entry, so a synonym
or a name the vocabulary lacks is ranked as written) are ranked by each method; a hit if the
true holder is among the top k, ties counted against it (:func:`rank_of_truth`; a count of 0
for a holder bddl never names ranks it last, not first). Rooms: all room types ranked for the
object. Methods: the distilled knowledge, SBERT cosine similarity, and a frequency count over
bddl's typical placements (how often a holder category holds something in that room type; how
often a room type is named).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from sg_search.config import read_yaml
from sg_search.reasoning.knowledge.datasets import Answers, KnowledgeDataError
from sg_search.reasoning.knowledge.names import knowledge_text

PRESENT = 0.3  # a holder is present in a room type at this probability or above
HolderScorer = Callable[[Sequence[str], Sequence[str], Sequence[str]], np.ndarray]
"""p(objects[i] in/on holders[i] in a room of type rooms[i]): (holders, objects, rooms)."""
RoomScorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]
"""p(rooms[i] holds objects[i]): (rooms, objects)."""


def default_placements_path() -> Path:
    """The shipped independent placements."""
    return Path(str(resources.files("sg_search.data") / "knowledge" / "independent_placements.yaml"))


def load_placements(path: Path) -> list[tuple[str, str, str]]:
    """(object, holder, room type) per line, names in knowledge text."""
    try:
        lines = read_yaml(path.read_text())["placements"]
        rows = [tuple(part.strip() for part in str(line).split("|")) for line in lines]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise KnowledgeDataError(f"{path}: not a placements file ({exc})") from exc
    bad = [row for row in rows if len(row) != 3]
    if bad:
        raise KnowledgeDataError(f"{path}: lines must read 'object | holder | room': {bad[:3]}")
    return [(knowledge_text(o), knowledge_text(h), knowledge_text(r)) for o, h, r in rows]


def canonical_names(answers: Answers) -> dict[str, str]:
    """Every holder name and synonym -> the holder it names."""
    return {name: holder for holder in answers.holders for name in answers.names_of(holder)}


def evaluate(
    placements: list[tuple[str, str, str]],
    answers: Answers,
    methods: dict[str, tuple[HolderScorer, RoomScorer]],
    bddl_counts: tuple[Counter[tuple[str, str]], Counter[str]],
) -> tuple[dict[str, float], list[dict[str, Any]]]:
    """Holder and room top-1/top-3 per method (plus ``frequency`` from ``bddl_counts`` =
    (holder category, room) counts and room counts); the summary and one row per placement."""
    canonical = canonical_names(answers)
    present: dict[str, list[str]] = {}
    for holder in answers.holders:
        kind = answers.holder_types.get(holder)
        for room, p in (kind.rooms if kind else {}).items():
            if p >= PRESENT:
                present.setdefault(room, []).append(holder)
    holds, named = bddl_counts
    rooms = sorted(answers.rooms)
    unknown = sorted({room for _, _, room in placements} - set(rooms))
    if unknown:
        raise KnowledgeDataError(f"placements name room types the answers lack: {unknown}")
    summary: dict[str, float] = {
        "independent/placements": float(len(placements)),
        "independent/candidates_mean": float(
            np.mean([1 + len(set(present.get(r, [])) - {canonical.get(h, h)}) for _, h, r in placements])
        )
        if placements
        else 0.0,
    }
    rows: list[dict[str, Any]] = []
    for name in [*methods, "frequency"]:
        hits = np.zeros(4)
        for obj, holder, room in placements:
            truth = canonical.get(holder, holder)
            options = [holder, *(h for h in present.get(room, []) if h != truth)]
            if name == "frequency":
                h_scores = np.array([holds[(canonical.get(h, h), room)] for h in options], dtype=np.float64)
                r_scores = np.array([named[r] for r in rooms], dtype=np.float64)
            else:
                holder_score, room_score = methods[name]
                h_scores = holder_score(options, [obj] * len(options), [room] * len(options))
                r_scores = room_score(rooms, [obj] * len(rooms))
            rank = rank_of_truth(h_scores, np.arange(len(options)) == 0)
            room_rank = rank_of_truth(r_scores, np.array([r == room for r in rooms]))
            hits += [rank < 1, rank < 3, room_rank < 1, room_rank < 3]
            rows.append(
                {
                    "method": name,
                    "object": obj,
                    "holder": holder,
                    "room": room,
                    "rank": rank + 1,
                    "candidates": len(options),
                    "top_holder": options[int(np.argmax(h_scores))],
                    "top_room": rooms[int(np.argmax(r_scores))],
                }
            )
        n = max(len(placements), 1)
        for key, value in zip(("holder_top1", "holder_top3", "room_top1", "room_top3"), hits, strict=True):
            summary[f"independent/{name}/{key}"] = float(value) / n
    return summary, rows


def rank_of_truth(scores: np.ndarray, truth: np.ndarray) -> int:
    """0-based rank of the best-scored true option (``truth``: a mask over ``scores``): how
    many other options score at least as high, ties counted against the truth (no method
    gains from the order candidates happen to be listed in); ``len(scores)`` when no option
    is true."""
    if not truth.any():
        return len(scores)
    return int(np.sum(scores[~truth] >= scores[truth].max()))
