"""Where small objects belong, from bddl's activity definitions (read from the installed package).

Each ``problem0.bddl`` places objects ``inside``/``ontop`` of containers that are ``inroom``
a room type. ``:goal`` sections say where things end up (the *typical* tier); ``:init``
sections often start them deliberately out of place (the harder *misplaced* tier).
Container synsets are matched to the scene's furniture categories through bddl's own
category -> synset table and one level of WordNet hypernyms (cabinet.n.01 covers
bottom_cabinet and top_cabinet). Objects on the floor become ``inroom`` placements.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache

from sg_search.sim.bddl_scenes import bddl_root, furniture_specs

RELATION = re.compile(r"\((inside|ontop|inroom)\s+\??([A-Za-z0-9_.*]+)\s+\??([A-Za-z0-9_.*]+)\s*\)")
INSTANCE_SUFFIX = re.compile(r"_(\d+|\*)$")
IGNORED_OBJECTS = ("agent.n.01", "floor.n.01")
# Hypernyms too general to say where something is ("on a piece of furniture").
GENERIC_SYNSETS = frozenset(
    {
        "furniture.n.01",
        "bedroom_furniture.n.01",
        "kitchen_appliance.n.01",
        "home_appliance.n.01",
        "white_goods.n.01",
        "compartment.n.02",
        "seat.n.03",
    }
)


@dataclass(frozen=True)
class Placement:
    """An object synset that an activity puts ``relation`` a container synset in a room type."""

    activity: str
    tier: str  # "typical" (goal) or "misplaced" (init)
    object_synset: str
    relation: str  # "inside", "ontop" or "inroom"
    container_synset: str  # "" for inroom
    room_type: str

    @property
    def query(self) -> str:
        """Free-text name of the object ("bottle__of__shampoo.n.01" -> "bottle of shampoo")."""
        return synset_words(self.object_synset)


def synset_words(synset: str) -> str:
    """The words of a synset's lemma."""
    return synset.split(".n.")[0].replace("__", " ").replace("_", " ")


def _synset(token: str) -> str:
    return INSTANCE_SUFFIX.sub("", token)


def _sections(text: str) -> tuple[str, str]:
    init_at, goal_at = text.find("(:init"), text.find("(:goal")
    if init_at < 0 or goal_at < 0:
        return "", ""
    return text[init_at:goal_at], text[goal_at:]


def _parse_activity(activity: str, text: str) -> list[Placement]:
    init, goal = _sections(text)
    parent: dict[str, str] = {}  # instance -> instance it is inside/on (init)
    room: dict[str, str] = {}  # instance -> room type (init)
    for relation, a, b in RELATION.findall(init):
        if relation == "inroom":
            room[a] = b
        else:
            parent.setdefault(a, b)

    def room_of(instance: str, depth: int = 0) -> str:
        if instance in room or depth > 5:
            return room.get(instance, "")
        return room_of(parent[instance], depth + 1) if instance in parent else ""

    rooms_by_synset: dict[str, set[str]] = {}
    for instance in set(room) | set(parent):
        found = room_of(instance)
        if found:
            rooms_by_synset.setdefault(_synset(instance), set()).add(found)
    out = []
    for tier, section in (("misplaced", init), ("typical", goal)):
        for relation, a, b in RELATION.findall(section):
            obj, container = _synset(a), _synset(b)
            if relation == "inroom" or obj in IGNORED_OBJECTS:
                continue
            for room_type in sorted(rooms_by_synset.get(container, ())):
                if container == "floor.n.01":
                    out.append(Placement(activity, tier, obj, "inroom", "", room_type))
                else:
                    out.append(Placement(activity, tier, obj, relation, container, room_type))
    return out


@lru_cache(maxsize=1)
def all_placements() -> tuple[Placement, ...]:
    """Distinct placements of every activity, both tiers."""
    root = bddl_root() / "activity_definitions"
    out: set[Placement] = set()
    for problem in sorted(root.glob("*/problem0.bddl")):
        out.update(_parse_activity(problem.parent.name, problem.read_text()))
    return tuple(
        sorted(out, key=lambda p: (p.activity, p.tier, p.object_synset, p.container_synset, p.room_type))
    )


@lru_cache(maxsize=1)
def synset_hypernyms() -> dict[str, list[str]]:
    """Direct WordNet hypernyms of every bddl synset (bddl's synsets.csv)."""
    with (bddl_root() / "generated_data" / "synsets.csv").open() as handle:
        return {
            row["synset"]: [h for h in row["hypernyms"].split(",") if h] for row in csv.DictReader(handle)
        }


def object_group(synset: str) -> str:
    """An object's group for splitting: its first direct hypernym ("mug.n.04" -> "drinking_vessel.n.01"),
    or the synset itself when bddl lists none."""
    parents = synset_hypernyms().get(synset, [])
    return parents[0] if parents else synset


@lru_cache(maxsize=1)
def categories_by_synset() -> dict[str, frozenset[str]]:
    """Laid-out furniture categories each container synset can be (itself or a direct hypernym)."""
    with (bddl_root() / "generated_data" / "category_mapping.csv").open() as handle:
        synset_of = {row["category"]: row["synset"] for row in csv.DictReader(handle)}
    hypernyms = synset_hypernyms()
    out: dict[str, set[str]] = {}
    for category in furniture_specs():
        synset = synset_of.get(category)
        if synset is None:
            continue
        for key in (synset, *hypernyms.get(synset, [])):
            if key not in GENERIC_SYNSETS:
                out.setdefault(key, set()).add(category)
    return {k: frozenset(v) for k, v in out.items()}
