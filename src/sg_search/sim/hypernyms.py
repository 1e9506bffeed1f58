"""The knowledge's name aliases from bddl's WordNet taxonomy (``sg-search distill aliases``).

Every bddl object category whose name the distilled datasets never use is mapped to its
nearest hypernym whose name they do use (breadth first, up to :data:`MAX_DEPTH` levels; among
hypernyms of one level, bddl's order): parer.n.02 -> knife.n.01 "knife". Only the taxonomy is
read (bddl's ``synsets.csv``), no placement, activity or scene, so the knowledge benchmark's
placements and the episodes stay unseen. What the table is for:
:mod:`sg_search.reasoning.knowledge.name_aliases`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sg_search.reasoning.knowledge.datasets import KINDS, read_jsonl
from sg_search.reasoning.knowledge.name_aliases import NameAliases
from sg_search.reasoning.knowledge.names import knowledge_text
from sg_search.sim.placements import synset_hypernyms, synset_words

MAX_DEPTH = 3  # parer -> knife is one level; a table's leaf name seldom needs more than three


def dataset_vocabulary(data_dir: Path) -> set[str]:
    """Every room, holder and object name of the distilled datasets in ``data_dir``."""
    names: set[str] = set()
    for kind in KINDS:
        _, pairs = read_jsonl(data_dir / f"{kind}.jsonl")
        names.update(n for pair in pairs for n in (pair.a, pair.b))
    return names


def broader_name(synset: str, hypernyms: dict[str, list[str]], known: set[str]) -> str | None:
    """The name of ``synset``'s nearest hypernym in ``known`` (module docstring), or None."""
    level, seen = [synset], {synset}
    for _ in range(MAX_DEPTH):
        level = [h for s in level for h in hypernyms.get(s, []) if h not in seen]
        seen.update(level)
        for h in level:
            name = knowledge_text(synset_words(h))
            if name in known:
                return name
    return None


def aliases_from(hypernyms: dict[str, list[str]], known: set[str]) -> dict[str, str]:
    """Every synset name of ``hypernyms`` (synset -> its direct hypernyms) not in ``known`` and
    not a vessel with its contents -> its :func:`broader_name`, where it has one; a name two
    synsets share takes the first synset's (in sorted order)."""
    aliases: dict[str, str] = {}
    for synset in sorted(hypernyms):
        name = knowledge_text(synset_words(synset))
        if not name or name in known or name in aliases or " of " in name:
            continue
        broader = broader_name(synset, hypernyms, known)
        if broader is not None and broader != name:
            aliases[name] = broader
    return aliases


def bddl_name_aliases(data_dir: Path) -> tuple[NameAliases, dict[str, Any]]:
    """The aliases of every bddl category name the datasets in ``data_dir`` do not know, and
    the table's provenance."""
    known = dataset_vocabulary(data_dir)
    aliases = aliases_from(synset_hypernyms(), known)
    provenance = {
        "built_by": "sg-search distill aliases",
        "procedure": (
            "every bddl synset's name that the distilled datasets do not use, except a vessel "
            f"with its contents ('X of Y'), -> its nearest hypernym (breadth first, <= {MAX_DEPTH} "
            "levels, bddl's order) whose name they use; bddl's synsets.csv only"
        ),
        "vocabulary": len(known),
        "aliases": len(aliases),
    }
    return NameAliases(aliases), provenance
