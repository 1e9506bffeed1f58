"""House inventories from the installed ``bddl`` package (pinned 3.6.0; MIT): rooms and the
furniture in them, for the 51 OmniGibson scenes. Read at run time, never copied.

Splits are by building, so the floors and garden of one building stay together: the
building is the scene name's first token ("Beechwood_0_int" -> "Beechwood"); a stable
hash of it puts ~20 % of buildings in ``test``, ~20 % in ``val``, the rest in ``train``.
"""

from __future__ import annotations

import csv
import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from sg_search.config import read_yaml


class SceneError(KeyError):
    """An unknown scene, or bddl missing; the message says what to do."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class FurnitureSpec:
    """How a furniture category is laid out: size (w, d, h) [m] and affordances."""

    category: str
    size: tuple[float, float, float]
    openable: bool
    receptacle: bool
    surface: bool
    wall_mounted: bool = False
    elevation: float = 0.0
    opening: str = "hinge"  # how an openable item opens: "hinge" (a door) or "drawer" (slides out)


@dataclass(frozen=True)
class RoomInventory:
    """One room of a scene: id ("kitchen_0"), type ("kitchen"), furniture counts by category."""

    room_id: str
    room_type: str
    furniture: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class HouseInventory:
    """A scene's rooms and furniture (no geometry: bddl has none)."""

    name: str
    building: str
    split: str
    rooms: tuple[RoomInventory, ...]


def bddl_root() -> Path:
    """The installed bddl package folder; SceneError if bddl is not installed."""
    try:
        import bddl
    except ImportError:
        raise SceneError("the bddl package is needed for scenes: pip install bddl==3.6.0") from None
    return Path(bddl.__file__).parent


@lru_cache(maxsize=1)
def _scenes_raw() -> dict[str, dict[str, dict[str, int]]]:
    path = bddl_root() / "generated_data" / "combined_room_object_list.json"
    scenes: dict[str, dict[str, dict[str, int]]] = json.loads(path.read_text())["scenes"]
    return scenes


@lru_cache(maxsize=1)
def _layout_table() -> dict[str, Any]:
    table: dict[str, Any] = read_yaml(
        resources.files("sg_search.data").joinpath("furniture.yaml").read_text()
    )
    return table


@lru_cache(maxsize=1)
def openable_categories() -> frozenset[str]:
    """Scene categories whose bddl synset is annotated openable (category -> synset -> flag)."""
    root = bddl_root() / "generated_data"
    with (root / "synsets.csv").open() as handle:
        openable_synsets = {row["synset"] for row in csv.DictReader(handle) if row.get("openable") == "1"}
    with (root / "category_mapping.csv").open() as handle:
        return frozenset(
            row["category"] for row in csv.DictReader(handle) if row["synset"] in openable_synsets
        )


@lru_cache(maxsize=1)
def furniture_specs() -> dict[str, FurnitureSpec]:
    """Layout specs of the furniture categories the simulator places."""
    openable = openable_categories()
    out = {}
    for category, spec in _layout_table()["furniture"].items():
        out[category] = FurnitureSpec(
            category=category,
            size=tuple(float(v) for v in spec["size"]),  # type: ignore[arg-type]
            openable=category in openable,
            receptacle=bool(spec.get("receptacle", False)),
            surface=bool(spec.get("surface", False)),
            wall_mounted=spec.get("mount", "floor") == "wall",
            elevation=float(spec.get("elevation", 0.0)),
            opening=str(spec.get("opening", "hinge")),
        )
    return out


def layout_constants() -> dict[str, Any]:
    """Room areas by type, area per item, corridor and door widths [m, m2]."""
    table = _layout_table()
    return {k: v for k, v in table.items() if k != "furniture"}


def building_of(scene: str) -> str:
    """The building a scene belongs to (its name's first token)."""
    return scene.split("_")[0]


def split_of(scene: str) -> str:
    """``train``, ``val`` or ``test`` by a stable hash of the building."""
    return hash_split(building_of(scene))


def hash_split(key: str) -> str:
    """``test`` for ~20 % of keys, ``val`` for ~20 %, ``train`` for the rest (stable SHA-256)."""
    bucket = int(hashlib.sha256(key.encode()).hexdigest(), 16) % 10
    return "test" if bucket < 2 else "val" if bucket < 4 else "train"


def scene_names(split: str | None = None) -> list[str]:
    """All scene names (optionally of one split), sorted."""
    names = sorted(_scenes_raw())
    return [n for n in names if split is None or split_of(n) == split]


def furniture_by_room_type() -> dict[str, set[str]]:
    """Room type -> the furniture categories laid out in rooms of that type, over every scene."""
    out: dict[str, set[str]] = {}
    for scene in scene_names():
        for room in load_house(scene).rooms:
            out.setdefault(room.room_type, set()).update(room.furniture)
    return out


def load_house(name: str) -> HouseInventory:
    """Rooms and laid-out furniture categories of one scene; SceneError naming close matches."""
    scenes = _scenes_raw()
    if name not in scenes:
        close = [n for n in scenes if n.lower().startswith(name.lower()[:4])] or sorted(scenes)[:5]
        raise SceneError(f"unknown scene {name!r}; e.g. {', '.join(close)} ({len(scenes)} scenes)")
    specs = furniture_specs()
    rooms = []
    for room_id, objects in sorted(scenes[name].items()):
        counts: dict[str, int] = {}
        for model, count in objects.items():
            category = model.rsplit("-", 1)[0]
            if category in specs:
                counts[category] = counts.get(category, 0) + int(count)
        rooms.append(RoomInventory(room_id, room_id.rsplit("_", 1)[0], dict(sorted(counts.items()))))
    return HouseInventory(name, building_of(name), split_of(name), tuple(rooms))
