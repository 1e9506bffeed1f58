"""The holder prior of the bddl episodes: which furniture categories the training episodes put
objects in or on, per room type (:class:`sg_search.reasoning.knowledge.holder_prior.HolderPrior`).

Counted on activity half A: the activities whose placements train episodes are drawn from
(every object of them; the counts name holders and rooms, no object), so val and test
episodes (half B) — and the knowledge benchmark's half-B placements — never inform it.
With the counts goes how many instances of a holder category a room of a type holds on
average (the train split's houses), among which a count is shared.
"""

from __future__ import annotations

from collections import Counter

from sg_search.reasoning.knowledge.holder_prior import HolderPrior
from sg_search.sim.bddl_scenes import furniture_by_room_type, load_house, scene_names
from sg_search.sim.episodes import TIERS, activity_half
from sg_search.sim.placements import all_placements, categories_by_synset

SMOOTHING = 0.25  # pseudo-count per holder; chosen by 2-fold cross-validation inside half A
INSTANCE_EXPONENT = 0.5  # a count shared among k instances as / k^0.5; chosen on the symbolic val
# split among 0 / 0.5 / 1 / 1.5 (docs/BENCHMARKS.md, knowledge "session 43")


def holder_counts(half: str, tiers: tuple[str, ...]) -> Counter[tuple[str, str]]:
    """(furniture category, room type) -> placements of activity ``half`` ("A" or "B") in/on it
    (every furniture category the placement's container synset covers counts once)."""
    covers = categories_by_synset()
    counts: Counter[tuple[str, str]] = Counter()
    for p in all_placements():
        if p.tier in tiers and p.relation != "inroom" and activity_half(p.activity) == half:
            counts.update((category, p.room_type) for category in covers.get(p.container_synset, ()))
    return counts


def instance_means(split: str = "train") -> dict[tuple[str, str], float]:
    """(furniture category, room type) -> how many of it a room of that type holds on average,
    over the rooms of that type that hold any, in ``split``'s houses; only means above 1."""
    total: Counter[tuple[str, str]] = Counter()
    rooms: Counter[tuple[str, str]] = Counter()
    for scene in scene_names(split):
        for room in load_house(scene).rooms:
            for category, n in room.furniture.items():
                total[(category, room.room_type)] += n
                rooms[(category, room.room_type)] += 1
    return {key: round(total[key] / rooms[key], 3) for key in total if total[key] > rooms[key]}


def bddl_holder_prior(tiers: tuple[str, ...] = ("typical",)) -> tuple[HolderPrior, dict[str, object]]:
    """The prior of half A's ``tiers`` (its vocabulary: every furniture category of the bddl
    houses; its instances per room: the train houses') and its provenance header. Typical (goal)
    placements only by default: counting the initial states too (mostly kitchen countertops)
    made scout re-choose countertops (symbolic val typical SR 0.709 -> 0.570 at β 1)."""
    unknown = set(tiers) - set(TIERS)
    if unknown:
        raise ValueError(f"tiers must be among {TIERS}, got {sorted(unknown)}")
    counts = holder_counts("A", tiers)
    instances = instance_means("train")
    vocabulary = set().union(*furniture_by_room_type().values())
    provenance: dict[str, object] = {
        "built_by": "sg-search distill prior",
        "source": "bddl activity placements of activity half A (the train split's activities; "
        "val and test draw from half B); tier typical = goal states, misplaced = initial states",
        "tiers": list(tiers),
        "placements_counted": sum(counts.values()),
        "instances": "mean count of a furniture category per room of a type that holds it, over "
        "the train split's houses (bddl inventories); listed where above 1",
    }
    prior = HolderPrior(
        counts, SMOOTHING, vocabulary, instances=instances, instance_exponent=INSTANCE_EXPONENT
    )
    return prior, provenance
