"""Object-search episodes: a laid-out bddl house, a start room, a query and where the target is.

An episode places one target object (from :mod:`placements`) into a furniture instance of
the right category in a room of the right type (``inroom`` targets lie on the room's floor).
Everything is drawn from ``random.Random(seed)``, so a (split, tier, seed, index) names one
episode. Splits never leak, three ways: houses by building (:func:`split_of`); placements by activity
half (train uses half A, val/test half B), so what a reasoner learns from train activities
never includes a test answer; and objects by WordNet group (:func:`object_group`, hashed to a
split like buildings), so whole groups of objects ("drinking vessels") are held out.
Episodes whose placement cannot be realised in the drawn house, or that a caller's ``keep``
refuses (the embodied benchmark's: a target the base cannot reach, as ObjectNav's datasets hold
only navigable goals), are counted and the next draw is taken: the episodes kept are the same
draws in the same order, whatever was refused between them.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from sg_search.sim.bddl_scenes import hash_split, load_house, scene_names
from sg_search.sim.layout import HouseLayout, layout_house
from sg_search.sim.placements import Placement, all_placements, categories_by_synset, object_group

TIERS = ("typical", "misplaced")


@dataclass(frozen=True)
class Episode:
    """One search episode (ids as in the layout's scene-graph prior)."""

    scene: str
    layout_seed: int
    split: str
    tier: str
    query: str
    object_synset: str
    relation: str
    container: str  # furniture category ("" for inroom)
    container_id: str  # furniture id in the layout ("" for inroom)
    room: str  # room type
    room_id: str
    start_room_id: str
    activity: str

    def to_json(self) -> dict[str, Any]:
        """Plain data for ``--json`` output."""
        return asdict(self)


def episode_from_json(line: str) -> Episode:
    """An episode from one JSON line as :meth:`Episode.to_json` writes it (``sg-search sim
    episodes``); ValueError naming what is wrong (not JSON, missing or unknown fields)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"an episode is one JSON object; this is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"an episode is one JSON object, not {type(data).__name__}")
    names = [f.name for f in fields(Episode)]
    missing, unknown = [n for n in names if n not in data], sorted(set(data) - set(names))
    if missing or unknown:
        raise ValueError(f"an episode's fields: missing {missing or 'none'}, unknown {unknown or 'none'}")
    wrong = [n for n in names if not isinstance(data[n], int if n == "layout_seed" else str)]
    wrong += ["layout_seed"] if isinstance(data["layout_seed"], bool) else []
    if wrong:
        raise ValueError(f"an episode's layout_seed is a whole number and its other fields text: {wrong}")
    return Episode(**{n: data[n] for n in names})


def activity_half(activity: str) -> str:
    """ "A" or "B" by a stable hash of the activity name."""
    return "A" if int(hashlib.sha256(activity.encode()).hexdigest(), 16) % 2 == 0 else "B"


@lru_cache(maxsize=64)
def _layout(scene: str, seed: int) -> HouseLayout:
    return layout_house(load_house(scene), seed)


def placements_for(split: str, tier: str) -> list[Placement]:
    """Placements of ``tier`` that ``split`` may use: from its activity half, of objects whose
    WordNet group (:func:`object_group`) hashes to the split, realisable as furniture."""
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    half = "A" if split == "train" else "B"
    categories = categories_by_synset()
    return [
        p
        for p in all_placements()
        if p.tier == tier
        and activity_half(p.activity) == half
        and hash_split(object_group(p.object_synset)) == split
        and (p.relation == "inroom" or p.container_synset in categories)
    ]


def make_episodes(
    split: str,
    n: int,
    tier: str = "typical",
    seed: int = 0,
    keep: Callable[[Episode], bool] | None = None,
) -> tuple[list[Episode], int]:
    """``n`` episodes of ``split`` and ``tier`` that ``keep`` accepts (default: all), and how
    many draws could not be placed or were refused."""
    scenes = scene_names(split)
    if not scenes:
        raise ValueError(f"no scenes in split {split!r}")
    placements = placements_for(split, tier)
    categories = categories_by_synset()
    episodes: list[Episode] = []
    skipped = 0
    draw = 0
    while len(episodes) < n and draw < 50 * n:
        rng = random.Random(f"{split}:{tier}:{seed}:{draw}")
        draw += 1
        scene = rng.choice(scenes)
        placement = rng.choice(placements)
        wanted = categories.get(placement.container_synset, frozenset())
        episode = place(
            _layout(scene, seed), rng, placement.query, placement.relation, wanted, placement.room_type
        )
        if episode is None:
            skipped += 1
            continue
        episode = replace(
            episode,
            split=split,
            tier=tier,
            object_synset=placement.object_synset,
            activity=placement.activity,
        )
        if keep is not None and not keep(episode):
            skipped += 1
            continue
        episodes.append(episode)
    return episodes, skipped


def place(
    layout: HouseLayout,
    rng: random.Random,
    query: str,
    relation: str,
    containers: Collection[str],
    room_type: str,
) -> Episode | None:
    """An episode putting ``query`` ``relation`` a furniture instance whose category is in
    ``containers`` (ignored for "inroom") in a room of ``room_type``, with a random other start
    room; None when the layout has no such holder."""
    rooms = {r.room_id for r in layout.rooms if r.room_type == room_type}
    if relation == "inroom":
        holders = [(room_id, "", "") for room_id in sorted(rooms)]
    else:
        holders = [
            (f.room_id, f.category, f.furniture_id)
            for f in layout.furniture
            if f.category in containers and f.room_id in rooms
        ]
    if not holders:
        return None
    room_id, category, furniture_id = rng.choice(holders)
    start = rng.choice([r.room_id for r in layout.rooms if r.room_id != room_id] or [room_id])
    return Episode(
        layout.scene,
        layout.seed,
        "",
        "",
        query,
        "",
        relation,
        category,
        furniture_id,
        room_type,
        room_id,
        start,
        "",
    )


EPISODE_FILE_FIELDS = ("scene", "query", "relation", "container", "room")


def episodes_from_file(path: Path, seed: int = 0) -> tuple[list[Episode], list[str]]:
    """Episodes from JSON lines ``{"scene", "query", "relation", "container", "room"}`` (bddl
    scene, free-text query, inside/ontop/inroom, bddl furniture category or null, room type);
    optional ``"tier"`` (default "file"). Returns the placed episodes and, per line that could
    not be placed or parsed, a message saying why."""
    episodes: list[Episode] = []
    problems: list[str] = []
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ValueError(f"cannot read episodes file {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
            missing = [k for k in EPISODE_FILE_FIELDS if k not in row]
            if missing:
                raise ValueError(f"missing {', '.join(missing)}")
            relation = str(row["relation"])
            if relation not in ("inside", "ontop", "inroom"):
                raise ValueError(f"relation must be inside, ontop or inroom, got {relation!r}")
            layout = _layout(str(row["scene"]), seed)
        except (json.JSONDecodeError, ValueError, TypeError, KeyError) as exc:
            problems.append(f"{where}: {exc}")
            continue
        query = str(row["query"]).replace("_", " ").strip()
        container = str(row["container"] or "")
        rng = random.Random(f"file:{seed}:{number}")
        episode = place(layout, rng, query, relation, {container}, str(row["room"]))
        if episode is None:
            problems.append(f"{where}: no {container or 'room'} in a {row['room']} of {row['scene']}")
            continue
        episodes.append(replace(episode, split="file", tier=str(row.get("tier", "file"))))
    return episodes, problems
