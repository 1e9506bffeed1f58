"""Knowledge quality against independent human placements: bddl's goal placements of the
test activity half (people wrote where things belong; our knowledge never saw them).

For every distinct (object, container, room type) of the typical tier in activity half B:
- container given (object, room): rank the furniture categories found in rooms of that
  type (from the house inventories) by p_cooc(category, object); a hit if one of the top-k
  is a category the placement's container synset covers, ties counted against the truth
  (:func:`~sg_search.bench.knowledge_independent.rank_of_truth`; a count ties often);
- room given object: rank every room type of the houses by p_contain(room, object).
Top-1 and top-3 accuracy for the learned knowledge, for SBERT cosine similarity, and for a
frequency baseline counted on activity half A (how often a category holds something in
that room type; how often a room type is named), so no method sees the test answers; and
the knowledge weighted by the shipped holder prior (counted on half A: the frequency count's
own data) as scout's ``holder_prior`` β does it, for β in :data:`PRIOR_EXPONENTS`.

Then the same methods on the independent placements of :mod:`.knowledge_independent`
(summary keys ``independent/...``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from sg_search.bench import knowledge_independent
from sg_search.bench.harness import BenchOptions, BenchReport
from sg_search.bench.knowledge_independent import HolderScorer, RoomScorer, rank_of_truth
from sg_search.reasoning.knowledge.datasets import shipped_answers
from sg_search.reasoning.knowledge.names import knowledge_text
from sg_search.sim.bddl_scenes import furniture_by_room_type
from sg_search.sim.episodes import activity_half
from sg_search.sim.holder_counts import holder_counts
from sg_search.sim.placements import all_placements, categories_by_synset, synset_words

PRIOR_EXPONENTS = (1.0, 2.0)  # 2: scout's default


def _text(category: str) -> str:
    return category.replace("_", " ")


def run(options: BenchOptions) -> BenchReport:
    """Top-1/top-3 container and room accuracy of knowledge, SBERT and frequency."""
    from sg_search.reasoning.knowledge import KnowledgeModel
    from sg_search.reasoning.knowledge.holder_prior import HolderPrior, weigh

    covers = categories_by_synset()
    furniture_in = furniture_by_room_type()
    room_types = sorted(furniture_in)
    placements = [p for p in all_placements() if p.tier == "typical" and p.relation != "inroom"]
    placements = [p for p in placements if p.container_synset in covers and p.room_type in furniture_in]
    test = sorted(
        {
            (synset_words(p.object_synset), p.container_synset, p.room_type)
            for p in placements
            if activity_half(p.activity) == "B"
        }
    )
    holds = holder_counts("A", ("typical",))  # the shipped prior's own counts
    named = Counter(p.room_type for p in placements if activity_half(p.activity) == "A")

    km = KnowledgeModel.load_default()
    answers = shipped_answers()
    prior = HolderPrior.load_default().with_aliases(answers)

    def cosine(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        ea, eb = km.encoder.encode([_text(x) for x in a]), km.encoder.encode(list(b))
        similarity: np.ndarray = np.sum(ea * eb, axis=1)
        return similarity

    def weighed(beta: float) -> HolderScorer:
        return lambda holders, objs, rooms: weigh(
            km.cooccurrence(holders, objs), prior.weights(holders, rooms), beta
        )

    methods: dict[str, tuple[HolderScorer, RoomScorer]] = {
        "knowledge": (lambda holders, objs, _: km.cooccurrence(holders, objs), km.containment),
        "sbert": (lambda holders, objs, _: cosine(holders, objs), cosine),
        **{f"knowledge x prior^{beta:g}": (weighed(beta), km.containment) for beta in PRIOR_EXPONENTS},
    }
    summary: dict[str, float] = {"placements": float(len(test))}
    rows = []
    for name in [*methods, "frequency"]:
        container_hits, room_hits = np.zeros(2), np.zeros(2)
        for obj, synset, room in test:
            options_here = sorted(furniture_in[room] & set().union(*covers.values()))
            if name == "frequency":
                c_scores = np.array([holds[(c, room)] for c in options_here], dtype=np.float64)
                r_scores = np.array([named[r] for r in room_types], dtype=np.float64)
            else:
                container_score, room_score = methods[name]
                names = [_text(c) for c in options_here]
                c_scores = container_score(names, [obj] * len(names), [room] * len(names))
                r_scores = room_score([_text(r) for r in room_types], [obj] * len(room_types))
            rank = rank_of_truth(c_scores, np.array([c in covers[synset] for c in options_here]))
            room_rank = rank_of_truth(r_scores, np.array([r == room for r in room_types]))
            for k, top in enumerate((1, 3)):
                container_hits[k] += rank < top
                room_hits[k] += room_rank < top
            rows.append(
                {
                    "method": name,
                    "object": obj,
                    "room": room,
                    "container": synset,
                    "rank": rank + 1,
                    "top_container": options_here[int(np.argmax(c_scores))],
                    "top_room": room_types[int(np.argmax(r_scores))],
                }
            )
        n = max(len(test), 1)
        for k, top in enumerate((1, 3)):
            summary[f"{name}/container_top{top}"] = container_hits[k] / n
            summary[f"{name}/room_top{top}"] = room_hits[k] / n
    all_holds = Counter(
        (knowledge_text(c), p.room_type) for p in placements for c in covers[p.container_synset]
    )
    independent, independent_rows = knowledge_independent.evaluate(
        knowledge_independent.load_placements(knowledge_independent.default_placements_path()),
        answers,
        methods,
        (all_holds, Counter(p.room_type for p in placements)),
    )
    summary.update(independent)
    return BenchReport("knowledge", options, summary, rows + independent_rows)
