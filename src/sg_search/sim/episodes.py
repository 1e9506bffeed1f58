"""Object-search episodes: a laid-out bddl house, a start room, a query and where the target is.

An episode places one target object (from :mod:`placements`) into a furniture instance of
the right category in a room of the right type (``inroom`` targets lie on the room's floor).
Everything is drawn from ``random.Random(seed)``, so a (split, tier, seed, index) names one
episode. Splits never leak: houses by building (:func:`split_of`), and placements by
activity half — train episodes use activities of half A, val/test of half B — so the
knowledge a learned reasoner distils from train activities never includes a test answer.
Episodes whose placement cannot be realised in the drawn house are counted, not dropped.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from sg_search.sim.bddl_scenes import load_house, scene_names
from sg_search.sim.layout import HouseLayout, layout_house
from sg_search.sim.placements import Placement, all_placements, categories_by_synset

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


def activity_half(activity: str) -> str:
    """ "A" or "B" by a stable hash of the activity name."""
    return "A" if int(hashlib.sha256(activity.encode()).hexdigest(), 16) % 2 == 0 else "B"


@lru_cache(maxsize=64)
def _layout(scene: str, seed: int) -> HouseLayout:
    return layout_house(load_house(scene), seed)


def placements_for(split: str, tier: str) -> list[Placement]:
    """Placements of ``tier`` from the activity half that ``split`` may use, realisable as furniture."""
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    half = "A" if split == "train" else "B"
    categories = categories_by_synset()
    return [
        p
        for p in all_placements()
        if p.tier == tier
        and activity_half(p.activity) == half
        and (p.relation == "inroom" or p.container_synset in categories)
    ]


def make_episodes(split: str, n: int, tier: str = "typical", seed: int = 0) -> tuple[list[Episode], int]:
    """``n`` episodes of ``split`` and ``tier``, and how many draws could not be placed."""
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
        layout = _layout(scene, seed)
        placement = rng.choice(placements)
        rooms = [r for r in layout.rooms if r.room_type == placement.room_type]
        if placement.relation == "inroom":
            holders = [(r.room_id, "", "") for r in rooms]
        else:
            wanted = categories[placement.container_synset]
            holders = [
                (f.room_id, f.category, f.furniture_id)
                for f in layout.furniture
                if f.category in wanted and any(r.room_id == f.room_id for r in rooms)
            ]
        if not holders:
            skipped += 1
            continue
        room_id, category, furniture_id = rng.choice(holders)
        start = rng.choice([r.room_id for r in layout.rooms if r.room_id != room_id] or [room_id])
        episodes.append(
            Episode(
                scene,
                seed,
                split,
                tier,
                placement.query,
                placement.object_synset,
                placement.relation,
                category,
                furniture_id,
                placement.room_type,
                room_id,
                start,
                placement.activity,
            )
        )
    return episodes, skipped
