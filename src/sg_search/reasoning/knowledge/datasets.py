"""The distilled datasets: from the LLM's answers (rooms -> categories -> objects, with room and
holder scores per category) to two JSONL files of labelled pairs.

- containment.jsonl: ``{"a": room, "b": object, "score": p}``, p = probability that a home keeps
  the object in that room type.
- cooccurrence.jsonl: ``{"a": holder, "b": object, "score": p}``, p = how plausible it is to
  find the object inside or on that furniture/container: the answer's holder scores divided by
  the object's best holder score (the best place is a "yes", 1.0, as in the paper's yes/no
  co-occurrence labels; the rest keep their ratio to it).

Each file starts with one header line ``{"provenance": {...}}``. Containment holds every
(room, object) pair (rooms an answer omits score 0), as the paper's LLM scored every pair.
Co-occurrence holds every score the answers give plus as many negatives (score 0) per object,
drawn from the holders its answers omit with a generator seeded by the object's name, so the
build is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sg_search.reasoning.knowledge.names import knowledge_text

KINDS = ("containment", "cooccurrence")


class KnowledgeDataError(ValueError):
    """A malformed answers file or dataset; the message names the file and the entry."""


@dataclass(frozen=True)
class Pair:
    """One labelled pair: ``a`` = room (containment) or holder (co-occurrence), ``b`` = object."""

    a: str
    b: str
    score: float


@dataclass
class Answers:
    """What the LLM answered: room types, holders, and per object the best score per room and
    per holder over the categories that list it."""

    rooms: list[str]
    holders: list[str]
    rooms_of: dict[str, dict[str, float]] = field(default_factory=dict)
    holders_of: dict[str, dict[str, float]] = field(default_factory=dict)
    categories: int = 0


def default_data_dir() -> Path:
    """The installed package's ``data/knowledge`` folder."""
    return Path(str(resources.files("sg_search.data") / "knowledge"))


def load_answers(path: Path) -> Answers:
    """Parse an answers YAML (the format of ``data/knowledge/llm_answers.yaml``)."""
    try:
        raw = yaml.safe_load(path.read_text())
        rooms = [knowledge_text(r) for r in raw["rooms"]]
        holders = [knowledge_text(h) for h in raw["holders"]]
        taxonomy = raw["taxonomy"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise KnowledgeDataError(f"{path}: not an answers file ({exc})") from exc
    answers = Answers(rooms, holders)
    for room, categories in taxonomy.items():
        for category, entry in (categories or {}).items():
            where = f"{path}: {room}/{category}"
            try:
                room_scores = {knowledge_text(k): float(v) for k, v in entry["rooms"].items()}
                holder_scores = {knowledge_text(k): float(v) for k, v in entry["holders"].items()}
                objects = [knowledge_text(o) for o in entry["objects"]]
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise KnowledgeDataError(f"{where}: needs rooms, holders and objects ({exc})") from exc
            unknown = (set(room_scores) - set(rooms)) | (set(holder_scores) - set(holders))
            bad = [s for s in (*room_scores.values(), *holder_scores.values()) if not 0.0 <= s <= 1.0]
            if unknown or bad:
                raise KnowledgeDataError(f"{where}: unknown names {sorted(unknown)} or scores {bad}")
            answers.categories += 1
            for obj in filter(None, objects):
                _merge_max(answers.rooms_of.setdefault(obj, {}), room_scores)
                _merge_max(answers.holders_of.setdefault(obj, {}), holder_scores)
    return answers


def _merge_max(into: dict[str, float], scores: dict[str, float]) -> None:
    for key, value in scores.items():
        if value > 0.0:
            into[key] = max(into.get(key, 0.0), value)


def build_pairs(answers: Answers, kind: str) -> list[Pair]:
    """Positives and seeded negatives of one dataset (``kind`` in :data:`KINDS`), sorted."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    scores_of, vocabulary = (
        (answers.rooms_of, answers.rooms) if kind == "containment" else (answers.holders_of, answers.holders)
    )
    pairs: list[Pair] = []
    for obj in sorted(scores_of):
        positives = scores_of[obj]
        top = max(positives.values()) if kind == "cooccurrence" and positives else 1.0
        pairs += [Pair(a, obj, round(s / top, 3)) for a, s in sorted(positives.items())]
        omitted = [a for a in vocabulary if a not in positives]
        if kind == "cooccurrence":
            rng = random.Random(int(hashlib.sha256(f"{kind}/{obj}".encode()).hexdigest()[:16], 16))
            omitted = sorted(rng.sample(omitted, min(len(positives), len(omitted))))
        pairs += [Pair(a, obj, 0.0) for a in omitted]
    return pairs


def write_jsonl(path: Path, pairs: Iterable[Pair], provenance: dict[str, Any]) -> int:
    """Write the header line and one line per pair; returns the number of pairs."""
    count = 0
    with path.open("w") as f:
        f.write(json.dumps({"provenance": provenance}, sort_keys=True) + "\n")
        for p in pairs:
            f.write(json.dumps({"a": p.a, "b": p.b, "score": p.score}) + "\n")
            count += 1
    return count


def read_jsonl(path: Path) -> tuple[dict[str, Any], list[Pair]]:
    """The provenance header and the pairs of a dataset file."""
    provenance: dict[str, Any] = {}
    pairs: list[Pair] = []
    for number, line in enumerate(_lines(path), start=1):
        try:
            row = json.loads(line)
            if "provenance" in row:
                provenance = row["provenance"]
                continue
            pairs.append(Pair(str(row["a"]), str(row["b"]), float(row["score"])))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise KnowledgeDataError(f"{path}:{number}: not a pair line ({exc})") from exc
    return provenance, pairs


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open() as f:
            yield from (line for line in f if line.strip())
    except OSError as exc:
        raise KnowledgeDataError(f"{path}: cannot read ({exc})") from exc


def build_datasets(answers_path: Path, out_dir: Path) -> dict[str, int]:
    """Both datasets from an answers file into ``out_dir``; returns pairs per kind."""
    answers = load_answers(answers_path)
    digest = hashlib.sha256(answers_path.read_bytes()).hexdigest()
    out_dir.mkdir(parents=True, exist_ok=True)
    counts = {}
    for kind in KINDS:
        provenance = {
            "kind": kind,
            "built_from": answers_path.name,
            "answers_sha256": digest,
            "objects": len(answers.rooms_of),
            "categories": answers.categories,
            "procedure": "see the header of the answers file; "
            + (
                "every score given, divided by the object's best holder score; negatives (0) = as "
                "many omitted holders per object, seeded by the object name"
                if kind == "cooccurrence"
                else "every (room, object) pair; rooms an answer omits score 0"
            ),
            "fields": {
                "a": "room type" if kind == "containment" else "holder (furniture/container)",
                "b": "object",
                "score": "probability in [0, 1]",
            },
        }
        counts[kind] = write_jsonl(out_dir / f"{kind}.jsonl", build_pairs(answers, kind), provenance)
    return counts
