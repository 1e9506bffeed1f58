"""The distilled datasets: from the LLM's answers (rooms -> categories -> objects, with room and
holder scores per category) to two JSONL files of labelled pairs.

- containment.jsonl: ``{"a": room, "b": object, "score": p}``, p = probability that a home keeps
  the object in that room type.
- cooccurrence.jsonl: ``{"a": holder, "b": object, "score": p}``, p = how plausible it is to
  find the object inside or on that furniture/container: the answer's holder scores divided by
  the object's best holder score (the best place is a "yes", 1.0, as in the paper's yes/no
  co-occurrence labels; the rest keep their ratio to it).

Holder types (P6/P7, optional ``holder_types`` of the answers): a further holder that is a
variant of one of P0's (``kind_of``) takes that holder's score for an object scaled by how well
their rooms agree (:func:`room_agreement`: a kitchen drawer does not inherit the socks of a bedroom's
drawers); the objects P7 lists for it score 1.0. Every pair is repeated under each synonym of
its holder, so that "refrigerator" and "fridge" learn the same scores.

Each file starts with one header line ``{"provenance": {...}}``. Containment holds every
(room, object) pair (rooms an answer omits score 0), as the paper's LLM scored every pair;
an object only P7 names is kept in the rooms of the holders that list it. Co-occurrence holds
every score the answers give plus negatives (score 0) per object, drawn with a generator
seeded by the object's name (so the build is deterministic): as many *ranking* negatives as
positives, from the holders of the object's own rooms that its answers omit (what a ranking
must put below the right holder), and half as many from all other omitted holders, each
negative under its holder's name or one of its synonyms.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from sg_search.config import read_yaml
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


@dataclass(frozen=True)
class HolderType:
    """A holder's rooms (room type -> probability that a home has it there), its other names,
    the P0 holder it is a variant of ("" for none; itself for P0's), and the objects P7 lists
    in or on it."""

    rooms: dict[str, float]
    synonyms: tuple[str, ...]
    kind_of: str
    objects: tuple[str, ...]


@dataclass
class Answers:
    """What the LLM answered: room types, holders, and per object the best score per room and
    per holder over the categories that list it; ``holder_types`` (P6/P7) by holder name."""

    rooms: list[str]
    holders: list[str]
    rooms_of: dict[str, dict[str, float]] = field(default_factory=dict)
    holders_of: dict[str, dict[str, float]] = field(default_factory=dict)
    categories: int = 0
    holder_types: dict[str, HolderType] = field(default_factory=dict)

    def names_of(self, holder: str) -> tuple[str, ...]:
        """The holder's name and its synonyms."""
        kind = self.holder_types.get(holder)
        return (holder, *(kind.synonyms if kind else ()))


def default_data_dir() -> Path:
    """The installed package's ``data/knowledge`` folder."""
    return Path(str(resources.files("sg_search.data") / "knowledge"))


@cache
def shipped_answers() -> Answers:
    """The package's ``llm_answers.yaml``, parsed once a process (0.5 s here, several under
    load: a reasoner built per request re-parsed it, and a loaded ROS reasoner then answered
    ``select_target`` slower than its callers waited). Shared: do not modify it."""
    return load_answers(default_data_dir() / "llm_answers.yaml")


def load_answers(path: Path) -> Answers:
    """Parse an answers YAML (the format of ``data/knowledge/llm_answers.yaml``)."""
    try:
        raw = read_yaml(path.read_text())
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
    answers.holder_types = _holder_types(path, raw.get("holder_types") or {}, answers)
    _inherit(answers)
    return answers


def _holder_types(path: Path, raw: Any, answers: Answers) -> dict[str, HolderType]:
    """P6/P7: checked (known rooms, a P0 holder as ``kind_of``, one meaning per name)."""
    if not isinstance(raw, dict):
        raise KnowledgeDataError(f"{path}: holder_types must be a mapping, got {type(raw).__name__}")
    kinds: dict[str, HolderType] = {}
    seen: dict[str, str] = {}
    for name, entry in raw.items():
        holder, where = knowledge_text(str(name)), f"{path}: holder_types/{name}"
        try:
            rooms = {knowledge_text(k): float(v) for k, v in entry["rooms"].items()}
            kind = HolderType(
                rooms,
                tuple(
                    n
                    for n in dict.fromkeys(map(knowledge_text, entry.get("synonyms", [])))
                    if n not in ("", holder)
                ),
                knowledge_text(str(entry.get("kind_of", holder if holder in answers.holders else ""))),
                tuple(filter(None, (knowledge_text(o) for o in entry.get("objects", [])))),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise KnowledgeDataError(f"{where}: needs rooms, synonyms, objects ({exc})") from exc
        if set(rooms) - set(answers.rooms) or not all(0.0 <= p <= 1.0 for p in rooms.values()):
            raise KnowledgeDataError(
                f"{where}: unknown rooms {sorted(set(rooms) - set(answers.rooms))} or scores"
            )
        if kind.kind_of and kind.kind_of not in answers.holders:
            raise KnowledgeDataError(f"{where}: kind_of {kind.kind_of!r} is not one of the P0 holders")
        for alias in (holder, *kind.synonyms):
            if seen.setdefault(alias, holder) != holder:
                raise KnowledgeDataError(f"{where}: the name {alias!r} also names {seen[alias]!r}")
        kinds[holder] = kind
    return kinds


def room_agreement(holder_rooms: dict[str, float], object_rooms: dict[str, float]) -> float:
    """How far a holder stands where the object is kept: max over rooms of min(p_holder,
    p_object), relative to the object's likeliest room; in [0, 1] (1 for no room knowledge)."""
    if not any(p > 0.0 for p in object_rooms.values()):
        return 1.0
    shared = max((min(p, object_rooms.get(r, 0.0)) for r, p in holder_rooms.items()), default=0.0)
    return min(1.0, shared / max(object_rooms.values()))


def _inherit(answers: Answers) -> None:
    """Scores of the P6 holders from their ``kind_of`` (scaled by room agreement), then P7's
    objects at 1.0; an object only P7 names takes the rooms of the holders that list it."""
    for holder, kind in answers.holder_types.items():
        if kind.kind_of in ("", holder):
            continue
        for obj, scores in answers.holders_of.items():
            inherited = scores.get(kind.kind_of, 0.0) * room_agreement(
                kind.rooms, answers.rooms_of.get(obj, {})
            )
            if inherited >= 0.05:
                scores[holder] = max(scores.get(holder, 0.0), round(inherited, 3))
    named_by_p7: dict[str, dict[str, float]] = {}
    for holder, kind in answers.holder_types.items():
        for obj in kind.objects:
            answers.holders_of.setdefault(obj, {})[holder] = 1.0
            if obj not in answers.rooms_of:
                _merge_max(named_by_p7.setdefault(obj, {}), kind.rooms)
    answers.rooms_of.update(named_by_p7)
    for holder in answers.holder_types:
        if holder not in answers.holders:
            answers.holders.append(holder)


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
        if kind == "containment":
            pairs += [Pair(a, obj, round(s, 3)) for a, s in sorted(positives.items())]
            pairs += [Pair(a, obj, 0.0) for a in vocabulary if a not in positives]
            continue
        top = max(positives.values()) if positives else 1.0
        pairs += [
            Pair(name, obj, round(s / top, 3))
            for a, s in sorted(positives.items())
            for name in answers.names_of(a)
        ]
        rng = random.Random(int(hashlib.sha256(f"{kind}/{obj}".encode()).hexdigest()[:16], 16))
        pairs += [Pair(rng.choice(answers.names_of(a)), obj, 0.0) for a in _negatives(answers, obj, rng)]
    return pairs


def _negatives(answers: Answers, obj: str, rng: random.Random) -> list[str]:
    """Omitted holders for ``obj``: ranking negatives (holders of the object's rooms, p >= 0.3)
    as many as its positives, then half as many of the rest (see the module docstring)."""
    positives = answers.holders_of[obj]
    rooms = {r for r, p in answers.rooms_of.get(obj, {}).items() if p >= 0.3}
    omitted = [h for h in answers.holders if h not in positives]
    near = [h for h in omitted if h in answers.holder_types and rooms & set(answers.holder_types[h].rooms)]
    far = [h for h in omitted if h not in near]
    chosen = rng.sample(near, min(len(positives), len(near)))
    chosen += rng.sample(far, min(max(1, len(positives) // 2), len(far)))
    return sorted(chosen)


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
                "every score given (P5; P6 variants inherit where rooms agree; P7 objects 1.0), "
                "divided by the object's best holder score, under each name of the holder; "
                "negatives (0), seeded by the object name: as many omitted holders of the object's "
                "rooms as positives, and half as many other omitted holders"
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
