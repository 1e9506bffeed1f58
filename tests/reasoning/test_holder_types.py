"""The holder vocabulary (P6/P7): its checks, what variants inherit, ranking negatives, the
ranking metrics of training and of the independent placements, and training's ensemble of seeds."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sg_search.bench.knowledge_independent import default_placements_path, evaluate, load_placements
from sg_search.reasoning.knowledge import KnowledgeModel
from sg_search.reasoning.knowledge.datasets import (
    KnowledgeDataError,
    build_datasets,
    build_pairs,
    default_data_dir,
    load_answers,
    room_agreement,
)
from sg_search.reasoning.knowledge.model import HEADS, WEIGHTS_FILE, load_mlps
from sg_search.reasoning.knowledge.train import TrainConfig, ranking, train

TOY = """holders: [shelf, fridge]
rooms: [kitchen, bedroom]
taxonomy:
  kitchen:
    dairy:
      rooms: {kitchen: 0.9}
      holders: {fridge: 0.8, shelf: 0.2}
      objects: [milk]
holder_types:
  fridge: {rooms: {kitchen: 0.9}, synonyms: [refrigerator], objects: []}
  pantry shelf: {kind_of: shelf, rooms: {kitchen: 0.9}, synonyms: [larder shelf], objects: [flour]}
  book shelf: {kind_of: shelf, rooms: {bedroom: 0.9}, objects: [novel]}
  spice rack: {rooms: {kitchen: 0.9}, objects: [salt]}
  bread box: {rooms: {kitchen: 0.8}, objects: [bread]}
  wardrobe: {rooms: {bedroom: 0.9}, objects: [coat]}
  nightstand: {rooms: {bedroom: 0.9}, objects: [alarm clock]}
"""


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    path = tmp_path / "answers.yaml"
    path.write_text(TOY)
    return path


def test_the_shipped_vocabulary_is_broad_and_each_name_means_one_holder() -> None:
    answers = load_answers(default_data_dir() / "llm_answers.yaml")
    assert len(answers.holder_types) >= 200 and len(answers.holders) == len(answers.holder_types)
    names = [n for h in answers.holders for n in answers.names_of(h)]
    assert len(names) == len(set(names))
    owner = {n: h for h in answers.holders for n in answers.names_of(h)}
    assert owner["refrigerator"] == "fridge" and owner["bedside table"] == "nightstand"
    assert owner["chopping board"] == "cutting board" and owner["cupboard"] == "bottom cabinet"


def test_variants_inherit_where_rooms_agree_and_p7_objects_score_one(toy: Path) -> None:
    answers = load_answers(toy)
    milk = answers.holders_of["milk"]
    assert milk["fridge"] == 0.8 and milk["pantry shelf"] == 0.2  # shelf's score, a kitchen variant
    assert "book shelf" not in milk  # a bedroom shelf does not inherit the kitchen's milk
    assert answers.holders_of["flour"] == {"pantry shelf": 1.0}
    assert answers.rooms_of["flour"] == {"kitchen": 0.9}  # only P7 names it: its holder's rooms
    pairs = {(p.a, p.score) for p in build_pairs(answers, "cooccurrence") if p.b == "milk"}
    assert {("fridge", 1.0), ("refrigerator", 1.0), ("pantry shelf", 0.25), ("larder shelf", 0.25)} <= pairs


def test_negatives_are_drawn_first_from_the_holders_of_the_objects_rooms(toy: Path) -> None:
    answers = load_answers(toy)
    negatives = [p.a for p in build_pairs(answers, "cooccurrence") if p.b == "milk" and p.score == 0.0]
    kitchen = {"spice rack", "bread box"}  # kitchen holders that do not hold milk
    # as many ranking negatives as positives (3: fridge, shelf, pantry shelf) => both kitchen
    # ones, then one of the rest
    assert kitchen <= set(negatives) and len(negatives) == len(kitchen) + 1


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("  rack: {kind_of: oven, rooms: {kitchen: 0.5}}", "kind_of 'oven'"),
        ("  rack: {rooms: {attic: 0.5}}", "unknown rooms"),
        ("  rack: {rooms: {kitchen: 0.5}, synonyms: [refrigerator]}", "also names 'fridge'"),
        ("  rack: {synonyms: [x]}", "needs rooms"),
    ],
)
def test_a_bad_holder_type_names_the_entry(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(TOY + entry + "\n")
    with pytest.raises(KnowledgeDataError, match=message) as error:
        load_answers(path)
    assert "holder_types/rack" in str(error.value)


@given(
    st.dictionaries(st.sampled_from("abcdef"), st.floats(0.0, 1.0), max_size=6),
    st.dictionaries(st.sampled_from("abcdef"), st.floats(0.0, 1.0), max_size=6),
)
def test_room_agreement_lies_in_the_unit_interval(holder: dict[str, float], obj: dict[str, float]) -> None:
    value = room_agreement(holder, obj)
    assert 0.0 <= value <= 1.0
    if not any(p > 0 for p in obj.values()):
        assert value == 1.0
    elif not set(holder) & {r for r, p in obj.items() if p > 0}:
        assert value == 0.0


def test_training_ranking_counts_ties_against_the_best_holder() -> None:
    target = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 0.0])
    groups = np.array(["a", "a", "a", "b", "b", "b"])
    assert ranking(np.array([0.9, 0.1, 0.5, 0.2, 0.3, 0.2]), target, groups) == {"top1": 0.5, "top3": 1.0}
    assert ranking(np.full(6, 0.5), target, groups) == {"top1": 0.0, "top3": 1.0}


def test_independent_placements_rank_the_true_holder_under_its_written_name(toy: Path) -> None:
    answers = load_answers(toy)
    placements = [("milk", "refrigerator", "kitchen"), ("coat", "wardrobe", "bedroom")]

    def oracle(names: Sequence[str], objects: Sequence[str], *_: Sequence[str]) -> np.ndarray:
        truth = {"milk": "refrigerator", "coat": "wardrobe"}
        return np.array([float(n == truth[o]) for n, o in zip(names, objects, strict=True)])

    def constant(names: Sequence[str], *_: Sequence[str]) -> np.ndarray:
        return np.ones(len(names))

    counts: tuple[Counter[tuple[str, str]], Counter[str]] = (Counter({("fridge", "kitchen"): 3}), Counter())
    summary, rows = evaluate(
        placements, answers, {"oracle": (oracle, oracle), "flat": (constant, constant)}, counts
    )
    assert summary["independent/oracle/holder_top1"] == 1.0
    assert summary["independent/flat/holder_top1"] == 0.0  # ties count against the truth
    # frequency: the fridge (written "refrigerator") was counted, the wardrobe never was
    assert summary["independent/frequency/holder_top1"] == 0.5
    assert {r["candidates"] for r in rows if r["object"] == "milk"} == {4}  # refrigerator + 3 kitchen holders
    with pytest.raises(KnowledgeDataError, match="attic"):
        evaluate([("milk", "fridge", "attic")], answers, {}, counts)


def test_the_shipped_independent_placements_load() -> None:
    placements = load_placements(default_placements_path())
    assert len(placements) >= 300 and all(all(part for part in row) for row in placements)


def test_an_ensemble_scores_the_mean_log_odds_of_its_members_each_trained_as_if_alone(
    toy: Path, tmp_path: Path
) -> None:
    data, one, two = tmp_path / "data", tmp_path / "one", tmp_path / "two"
    build_datasets(toy, data)
    small = TrainConfig(hidden=(8, 4), epochs=2, batch_size=4, val_fraction=0.3, seed=7)
    train(data, one, replace(small, members=1))
    metadata = train(data, two, replace(small, members=2))
    assert len(metadata["validation_per_member"]["cooccurrence"]) == 2
    heads = load_mlps(two / WEIGHTS_FILE, metadata["weights_sha256"])
    assert [len(heads[h].members) for h in HEADS] == [2, 2]
    alone = load_mlps(one / WEIGHTS_FILE, None)
    x = np.random.default_rng(0).normal(size=(5, 768)).astype(np.float32)
    for head in HEADS:
        first, second = heads[head].members
        a, b = first(x), second(x)
        np.testing.assert_allclose(a, alone[head].members[0](x), rtol=1e-5)  # seed 7 alone
        assert not np.allclose(a, b)  # the second member has seed 8
        odds = np.sqrt(a / (1 - a) * b / (1 - b))  # the mean of two log-odds, as odds
        np.testing.assert_allclose(heads[head](x), odds / (1 + odds), rtol=1e-5)
    model = KnowledgeModel.load(two)
    pair = np.concatenate([model.encoder.encode(["fridge"]), model.encoder.encode(["milk"])], axis=1)
    assert model.cooccurrence(["fridge"], ["milk"])[0] == pytest.approx(heads["cooccurrence"](pair)[0])


def test_weights_of_one_mlp_in_the_layout_before_ensembles_load_as_one_member(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    layers = [
        (rng.normal(scale=0.05, size=(768, 4)), rng.normal(size=4)),
        (rng.normal(scale=0.5, size=(4, 1)), rng.normal(size=1)),
    ]
    old = {
        f"{head}/{i}/{name}": array.astype(np.float32)
        for head in HEADS
        for i, layer in enumerate(layers)
        for name, array in zip("wb", layer, strict=True)
    }
    np.savez(tmp_path / "old.npz", **old)
    heads = load_mlps(tmp_path / "old.npz", None)
    x = rng.normal(size=(3, 768)).astype(np.float32)
    for head in HEADS:
        (member,) = heads[head].members
        assert len(member.layers) == 2
        np.testing.assert_allclose(heads[head](x), member(x), rtol=1e-5)
        z = np.maximum(x @ layers[0][0] + layers[0][1], 0) @ layers[1][0] + layers[1][1]
        np.testing.assert_allclose(member(x), 1 / (1 + np.exp(-z[:, 0])), rtol=1e-4)


def test_a_training_is_reproduced_bit_for_bit_and_leaves_torch_threads_as_they_were(
    toy: Path, tmp_path: Path
) -> None:
    import torch

    data = tmp_path / "data"
    build_datasets(toy, data)
    before = torch.get_num_threads()
    config = TrainConfig(hidden=(8, 4), epochs=2, batch_size=4, val_fraction=0.3, seed=7, threads=before + 1)
    first = train(data, tmp_path / "one", config)
    assert torch.get_num_threads() == before
    second = train(data, tmp_path / "two", config)
    assert first["weights_sha256"] == second["weights_sha256"]
    assert first["config"]["threads"] == before + 1
