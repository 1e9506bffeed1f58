"""The holder prior: weights relative to a room's uniform share, neutral where it knows
nothing, a clear error for a bad file (its effect on SCOUT: test_utility.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sg_search.reasoning.knowledge.datasets import KnowledgeDataError
from sg_search.reasoning.knowledge.holder_prior import HolderPrior

COUNTS = {("fridge", "kitchen"): 6.0, ("bottom_cabinet", "kitchen"): 2.0, ("sofa", "living_room"): 1.0}


def test_weights_are_shares_over_the_uniform_share_and_neutral_where_unknown() -> None:
    prior = HolderPrior(COUNTS, smoothing=1.0)
    # kitchen: two holders counted, (6 + 1) and (2 + 1) over a mean of (8 + 2) / 2 = 5
    w = prior.weights(
        ["fridge_3", "Bottom Cabinet", "shelf", "shelf"], ["kitchen_0", "kitchen", "kitchen", "bar"]
    )
    assert w == pytest.approx([7 / 5, 3 / 5, 1 / 5, 1.0])


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
    HolderPrior(COUNTS, smoothing=0.5).save(path, {"source": "test"})
    again = HolderPrior.load(path)
    assert again.smoothing == 0.5 and again.counts == HolderPrior(COUNTS, 0.5).counts
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
    assert '"tiers": ["typical"]' in rebuilt and "train split only" in rebuilt
