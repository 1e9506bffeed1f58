"""``sg-search distill query``: SCOUT's knowledge-distillation procedure against any
OpenAI-compatible endpoint, written as an answers file that ``distill build`` turns into the
datasets (the shipped ``data/knowledge/llm_answers.yaml`` has the same format).

Steps, each one prompt per item with a JSON answer (cached per prompt by the client, so an
interrupted run resumes where it stopped and a finished run repeats for free):

P0 holders; P1 rooms; P2 object categories per room; P3 objects per (room, category),
``repeats`` times for diversity; P4 room scores per category; P5 holder scores per category;
P6 a broad holder vocabulary (rooms, synonyms, the P0 holder each is a variant of); P7 objects
per holder type in its likeliest room.
Names are normalised (lower case, singular, space separated) as they arrive. The prompts are
the templates ``distill_*`` of :mod:`sg_search.llm.prompts`.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from sg_search.llm import ChatClient, LlmError, load_prompt, render
from sg_search.reasoning.knowledge.names import knowledge_text

DISTILL_PROMPTS = (
    "distill_system",
    "distill_holders",
    "distill_rooms",
    "distill_categories",
    "distill_objects",
    "distill_containment",
    "distill_cooccurrence",
    "distill_holder_types",
    "distill_holder_objects",
)


def _ask(client: ChatClient, prompt: str) -> dict[str, Any]:
    return client.complete_json(
        [{"role": "system", "content": render("distill_system")}, {"role": "user", "content": prompt}]
    )


def _names(answer: dict[str, Any], key: str, where: str) -> list[str]:
    values = answer.get(key)
    if not isinstance(values, list):
        raise LlmError(f"{where}: expected a list under {key!r}, got {values!r:.120}")
    return sorted({n for n in (knowledge_text(str(v)) for v in values) if n})


def _scores(answer: dict[str, Any], key: str, allowed: list[str], where: str) -> dict[str, float]:
    values = answer.get(key)
    if not isinstance(values, dict):
        raise LlmError(f"{where}: expected a mapping under {key!r}, got {values!r:.120}")
    out: dict[str, float] = {}
    for name, value in values.items():
        name = knowledge_text(str(name))
        try:
            p = min(max(float(value), 0.0), 1.0)
        except (TypeError, ValueError):
            continue
        if name in allowed and p >= 0.05:
            out[name] = p
    return out


def distill(
    client: ChatClient,
    out: Path,
    repeats: int = 1,
    max_rooms: int = 0,
    max_categories: int = 0,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, int]:
    """Run P0–P7 and write the answers YAML to ``out``; returns counts. ``max_rooms`` and
    ``max_categories`` (0 = all) bound a trial run."""
    holders = _names(_ask(client, render("distill_holders")), "holders", "P0")
    rooms = _names(_ask(client, render("distill_rooms")), "rooms", "P1")
    taxonomy: dict[str, dict[str, Any]] = {}
    for room in rooms[: max_rooms or None]:
        categories = _names(_ask(client, render("distill_categories", room=room)), "categories", f"P2 {room}")
        taxonomy[room] = {}
        for category in categories[: max_categories or None]:
            objects: set[str] = set()
            for r in range(repeats):
                again = f" Attempt {r + 1}: include objects a previous list may have missed." if r else ""
                prompt = render("distill_objects", category=category, room=room, again=again)
                objects.update(_names(_ask(client, prompt), "objects", f"P3 {room}/{category}"))
            if not objects:
                continue
            examples = ", ".join(sorted(objects)[:8])
            scores = {
                key: _scores(
                    _ask(
                        client,
                        render(
                            f"distill_{step}", category=category, examples=examples, **{key: ", ".join(names)}
                        ),
                    ),
                    key,
                    names,
                    f"{label} {room}/{category}",
                )
                for step, key, names, label in (
                    ("containment", "rooms", rooms, "P4"),
                    ("cooccurrence", "holders", holders, "P5"),
                )
            }
            taxonomy[room][category] = {**scores, "objects": sorted(objects)}
            log(f"{room}/{category}: {len(objects)} objects")
    holder_types = _holder_types(client, holders, rooms)
    header = "\n".join(
        [
            "# Distilled household commonsense: answers of an LLM to the prompts of `sg-search distill`.",
            f"# produced: {datetime.date.today().isoformat()} by model {client.config.model!r} at "
            f"{client.config.base_url} (temperature {client.config.temperature}, repeats {repeats})",
            *(f"#   {t.name} v{t.version}: {t.body}" for t in map(load_prompt, DISTILL_PROMPTS)),
            f"# calls: {client.counters.calls}, cache hits: {client.counters.cache_hits}, "
            f"tokens: {client.counters.prompt_tokens} + {client.counters.completion_tokens}",
        ]
    )
    body = yaml.safe_dump(
        {"holders": holders, "rooms": rooms, "taxonomy": taxonomy, "holder_types": holder_types},
        sort_keys=False,
    )
    out.write_text(header + "\n" + body)
    objects_total = len({o for cats in taxonomy.values() for c in cats.values() for o in c["objects"]})
    return {
        "holder_types": len(holder_types),
        "rooms": len(rooms),
        "categories": sum(len(c) for c in taxonomy.values()),
        "objects": objects_total,
    }


def _holder_types(client: ChatClient, holders: list[str], rooms: list[str]) -> dict[str, dict[str, Any]]:
    """P6 (P0's holders always included, as variants of themselves), then P7 per holder."""
    answer = _ask(client, render("distill_holder_types", holders=", ".join(holders), rooms=", ".join(rooms)))
    raw = answer.get("holder_types")
    if not isinstance(raw, dict):
        raise LlmError(f"P6: expected a mapping under 'holder_types', got {raw!r:.120}")
    entries: dict[str, dict[str, Any]] = {h: {} for h in holders}
    entries.update({knowledge_text(str(k)): v if isinstance(v, dict) else {} for k, v in raw.items()})
    out: dict[str, dict[str, Any]] = {}
    taken = set(entries)
    for name in sorted(entries, key=lambda h: (h not in holders, h)):
        entry = entries[name]
        where = f"P6 {name}"
        scores = _scores(entry, "rooms", rooms, where) if isinstance(entry.get("rooms"), dict) else {}
        if not name or not scores:
            continue
        kind = knowledge_text(str(entry.get("kind_of") or ""))
        synonyms = (
            [s for s in _names(entry, "synonyms", where) if s not in taken] if "synonyms" in entry else []
        )
        taken.update(synonyms)
        room = max(scores, key=lambda r: (scores[r], r))
        objects = _names(
            _ask(client, render("distill_holder_objects", holder=name, room=room)), "objects", f"P7 {name}"
        )
        out[name] = {"rooms": scores, "synonyms": synonyms, "objects": objects}
        if name not in holders:
            out[name]["kind_of"] = kind if kind in holders else ""
    return out
