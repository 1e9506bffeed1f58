"""The holder prior: weights relative to a room's uniform share, neutral where it knows
nothing, a clear error for a bad file (its effect on SCOUT: test_utility.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sg_search.reasoning.knowledge.datasets import Answers, HolderType, KnowledgeDataError
from sg_search.reasoning.knowledge.holder_prior import HolderPrior, weigh

COUNTS = {("fridge", "kitchen"): 6.0, ("bottom_cabinet", "kitchen"): 2.0, ("sofa", "living_room"): 1.0}


def test_weights_are_shares_over_the_uniform_share_and_neutral_where_unknown() -> None:
    prior = HolderPrior(COUNTS, smoothing=1.0, vocabulary=["shelf"])
    # kitchen: two holders counted, (6 + 1) and (2 + 1) over a mean of (8 + 2) / 2 = 5
    w = prior.weights(
        ["fridge_3", "Bottom Cabinet", "shelf", "shelf"], ["kitchen_0", "kitchen", "kitchen", "bar"]
    )
    assert w == pytest.approx([7 / 5, 3 / 5, 1 / 5, 1.0])


def test_a_count_is_shared_among_the_instances_a_room_holds() -> None:
    # 5 placements in fridges, 5 in top cabinets (smoothing 1); a kitchen holds 1 fridge, 4 top cabinets
    counts = {("fridge", "kitchen"): 5.0, ("top_cabinet", "kitchen"): 5.0}
    instances = {("top_cabinet", "kitchen"): 4.0}
    per_category = HolderPrior(counts, 1.0, instances=instances)
    assert per_category.weights(["fridge", "top cabinet"], ["kitchen"] * 2) == pytest.approx([1.0, 1.0])
    half = HolderPrior(counts, 1.0, instances=instances, instance_exponent=0.5)
    w = half.weights(["fridge", "top cabinet"], ["kitchen"] * 2)
    # 6 / 1 and 6 / 4^0.5 = 3 over their mean 4.5
    assert w == pytest.approx([6 / 4.5, 3 / 4.5])
    assert float(np.mean(w)) == pytest.approx(1.0)
    whole = HolderPrior(counts, 1.0, instances=instances, instance_exponent=1.0)
    assert whole.weights(["fridge", "top cabinet"], ["kitchen"] * 2) == pytest.approx([6 / 3.75, 1.5 / 3.75])
    with pytest.raises(ValueError, match="instance_exponent"):
        HolderPrior(counts, 1.0, instance_exponent=-0.5)
    with pytest.raises(ValueError, match="each >= 1"):
        HolderPrior(counts, 1.0, instances={("fridge", "kitchen"): 0.5})


@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 50), min_size=1))
def test_the_counted_holders_of_a_room_average_to_one(counts: dict[str, int]) -> None:
    prior = HolderPrior({(h, "kitchen"): float(n) for h, n in counts.items()}, smoothing=0.25)
    w = prior.weights(sorted(counts), ["kitchen"] * len(counts))
    assert float(np.mean(w)) == pytest.approx(1.0)
    assert all(
        w[i] >= w[j]
        for i, hi in enumerate(sorted(counts))
        for j, hj in enumerate(sorted(counts))
        if counts[hi] >= counts[hj]
    )


def test_a_saved_prior_reads_back_and_a_bad_file_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "holder_prior.json"
    saved = HolderPrior(COUNTS, 0.5, instances={("bottom_cabinet", "kitchen"): 2.5}, instance_exponent=0.5)
    saved.save(path, {"source": "test"})
    again = HolderPrior.load(path)
    assert again.smoothing == 0.5 and again.counts == saved.counts
    assert again.instances == {("bottom cabinet", "kitchen"): 2.5} and again.instance_exponent == 0.5
    holders, rooms = ["fridge", "bottom cabinet", "sofa"], ["kitchen", "kitchen", "living room"]
    assert again.weights(holders, rooms) == pytest.approx(saved.weights(holders, rooms))
    path.write_text('{"smoothing": 0.5}')
    with pytest.raises(KnowledgeDataError, match=r"holder_prior\.json"):
        HolderPrior.load(path)
    with pytest.raises(ValueError, match="smoothing"):
        HolderPrior(COUNTS, smoothing=0.0)


def test_distill_prior_rebuilds_the_shipped_file_byte_for_byte(tmp_path: Path) -> None:
    from sg_search.cli import main
    from sg_search.reasoning.knowledge.datasets import default_data_dir

    assert main(["distill", "prior", "--out", str(tmp_path)]) == 0
    rebuilt = (tmp_path / "holder_prior.json").read_text()
    assert rebuilt == (default_data_dir() / "holder_prior.json").read_text()
    assert '"tiers": ["typical"]' in rebuilt and "activity half A" in rebuilt
    shipped = HolderPrior.load_default()
    assert shipped.instance_exponent > 0 and all(k > 1 for k in shipped.instances.values())
    assert shipped.instances[("top cabinet", "kitchen")] > 1  # counted in the train houses


@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=6),
    st.floats(0.05, 20.0),
    st.floats(0.0, 3.0),
)
def test_weighing_keeps_probabilities_and_their_order_among_holders_of_one_weight(
    p: list[float], weight: float, beta: float
) -> None:
    weighed = weigh(np.array(p), weight, beta)
    assert np.all((weighed >= 0.0) & (weighed <= 1.0))
    assert all(weighed[i] >= weighed[j] for i in range(len(p)) for j in range(len(p)) if p[i] >= p[j])
    if beta == 0.0 or weight == 1.0:
        assert weighed == pytest.approx(np.array(p))


def test_a_weight_moves_the_odds_and_keeps_near_certain_holders_apart() -> None:
    # odds 1 times 3 -> 0.75; a capped product would have made 0.9 * 3 and 0.99 * 3 both 1
    assert float(weigh(0.5, 3.0, 1.0)) == pytest.approx(0.75)
    assert float(weigh(0.5, 3.0, 2.0)) == pytest.approx(0.9)
    high = weigh(np.array([0.9, 0.99]), 3.0, 1.0)
    assert 0.9 < high[0] < high[1] < 1.0
    assert weigh(np.array([0.0, 1.0]), 0.1, 1.0).tolist() == [0.0, 1.0]


def test_a_name_the_counted_homes_lack_is_neutral_unless_another_of_its_names_is_known() -> None:
    answers = Answers(rooms=["kitchen"], holders=["fridge", "pantry"])
    answers.holder_types = {
        "fridge": HolderType({"kitchen": 1.0}, ("refrigerator",), "fridge", ()),
        "pantry": HolderType({"kitchen": 0.8}, ("larder",), "", ()),
    }
    prior = HolderPrior(COUNTS, smoothing=1.0, vocabulary=["fridge", "bottom_cabinet", "sofa", "oven"])
    # oven: a holder of the counted homes that holds nothing in their kitchens -> 1 / 5, as before
    w = prior.weights(["fridge", "refrigerator", "larder", "oven"], ["kitchen"] * 4)
    assert w == pytest.approx([7 / 5, 1.0, 1.0, 1 / 5])
    aliased = prior.with_aliases(answers)
    w = aliased.weights(["fridge", "refrigerator", "larder", "oven"], ["kitchen"] * 4)
    assert w == pytest.approx([7 / 5, 7 / 5, 1.0, 1 / 5])


def test_the_shipped_prior_knows_every_furniture_category_of_the_houses() -> None:
    prior = HolderPrior.load_default()
    assert {"fridge", "bottom cabinet", "sofa", "shelf"} <= prior.vocabulary
    assert float(prior.weights(["nightstand drawer"], ["bedroom"])[0]) == 1.0
