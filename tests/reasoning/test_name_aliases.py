"""Names the knowledge never saw, scored as their nearest known hypernym (bddl's taxonomy)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.reasoning.knowledge import KnowledgeModel
from sg_search.reasoning.knowledge.datasets import KnowledgeDataError, default_data_dir
from sg_search.reasoning.knowledge.name_aliases import ALIASES_FILE, NameAliases
from sg_search.sim.hypernyms import aliases_from, bddl_name_aliases, broader_name

# a small taxonomy: synset -> direct hypernyms, in bddl's order
TAXONOMY = {
    "parer.n.02": ["knife.n.01"],
    "knife.n.01": ["edge_tool.n.01"],
    "cleaver.n.01": ["edge_tool.n.01"],
    "edge_tool.n.01": ["cutter.n.06"],
    "cutter.n.06": ["cutting_implement.n.01"],
    "cutting_implement.n.01": ["tool.n.01"],
    "tablefork.n.01": ["cutlery.n.02", "fork.n.01"],
    "bottle__of__vodka.n.01": ["grocery.n.02"],
    "grocery.n.02": ["food.n.01"],
    "mug.n.04": ["drinking_vessel.n.01"],
}


def test_a_name_takes_its_nearest_known_hypernym_in_the_taxonomys_order() -> None:
    known = {"knife", "tool", "fork", "cutlery", "food", "mug"}
    assert broader_name("parer.n.02", TAXONOMY, known) == "knife"  # one level up
    assert broader_name("tablefork.n.01", TAXONOMY, known) == "cutlery"  # first of one level
    assert broader_name("cleaver.n.01", TAXONOMY, known) is None  # "tool" is four levels up
    assert broader_name("cleaver.n.01", TAXONOMY, known | {"cutter"}) == "cutter"


def test_known_names_and_vessels_keep_their_own_name() -> None:
    aliases = aliases_from(TAXONOMY, {"knife", "fork", "cutlery", "food", "mug"})
    assert aliases == {"parer": "knife", "tablefork": "cutlery", "grocery": "food"}
    # "mug" and "knife" are known; "bottle of vodka" is a vessel with its contents (its phrase
    # scores better than "food"); "cleaver" has no known hypernym within three levels, nor
    # "drinking vessel" any


def test_the_shipped_table_is_what_the_command_builds(tmp_path: Path) -> None:
    aliases, provenance = bddl_name_aliases(default_data_dir())
    aliases.save(tmp_path / ALIASES_FILE, provenance)
    shipped = default_data_dir() / ALIASES_FILE
    assert (tmp_path / ALIASES_FILE).read_bytes() == shipped.read_bytes()
    table = NameAliases.load(shipped)
    assert table("parer") == "knife" and table("tablefork") == "fork" and table("mug") == "mug"
    assert not any(" of " in name for name in table.aliases)


def test_a_file_that_is_not_an_aliases_table_is_named(tmp_path: Path) -> None:
    bad = tmp_path / ALIASES_FILE
    bad.write_text('{"provenance": {}}')
    with pytest.raises(KnowledgeDataError, match=str(bad)):
        NameAliases.load(bad)


def test_the_model_scores_an_unknown_name_as_its_alias() -> None:
    km = KnowledgeModel.load_default()
    rooms = km.containment(["kitchen", "kitchen", "kitchen"], ["Parer", "knife", "paring knife"])
    assert rooms[0] == pytest.approx(rooms[1]) and rooms[0] > 0.5
    bare = KnowledgeModel(km._heads, km.encoder, km.metadata)  # no aliases: the name as it is
    assert bare.containment(["kitchen"], ["parer"])[0] < rooms[0] - 0.3
