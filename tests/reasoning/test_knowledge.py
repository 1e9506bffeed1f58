"""The shipped knowledge: API, sanity of what it learned, bad input, integrity of its files."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from sg_search.reasoning.knowledge import KnowledgeModel, KnowledgeWeightsError
from sg_search.reasoning.knowledge.datasets import (
    KnowledgeDataError,
    build_datasets,
    default_data_dir,
    load_answers,
    read_jsonl,
)
from sg_search.reasoning.knowledge.model import METADATA_FILE, WEIGHTS_FILE, sha256_of


@pytest.fixture(scope="module")
def km() -> KnowledgeModel:
    return KnowledgeModel.load_default()


def test_containment_and_cooccurrence_separate_likely_from_unlikely(km: KnowledgeModel) -> None:
    rooms = km.containment(
        ["kitchen", "garage", "bathroom", "bedroom"], ["plate", "plate", "toothbrush", "toothbrush"]
    )
    assert rooms[0] > rooms[1] + 0.3 and rooms[2] > rooms[3] + 0.3
    # SCOUT's point: similarity confuses milk ~ fridge ~ oven; the learned model does not.
    holders = km.cooccurrence(
        ["fridge", "oven", "bookcase", "sink"], ["milk carton", "milk carton", "book", "book"]
    )
    assert holders[0] > holders[1] + 0.5 and holders[2] > holders[3] + 0.5


def test_odd_text_still_gets_a_score_in_the_unit_interval(km: KnowledgeModel) -> None:
    rooms = ["", "   ", "Kitchen_0", "moon base", "kitchen"]
    objects = ["", "   ", "Mugs", "flux capacitor", "mug"]
    for scores in (km.containment(rooms, objects), km.cooccurrence(rooms, objects)):
        assert scores.shape == (5,) and np.all(np.isfinite(scores))
        assert np.all((scores >= 0.0) & (scores <= 1.0))
    same = km.containment(["Kitchen_0", "kitchen"], ["Mugs", "mug"])
    assert same[0] == pytest.approx(same[1])
    assert km.containment([], []).shape == (0,)
    with pytest.raises(ValueError, match="element-wise"):
        km.containment(["kitchen"], ["mug", "plate"])


def test_corrupt_or_replaced_weights_are_refused_with_file_and_hash(tmp_path: Path) -> None:
    for name in (WEIGHTS_FILE, METADATA_FILE):
        shutil.copy(default_data_dir() / name, tmp_path / name)
    expected = json.loads((tmp_path / METADATA_FILE).read_text())["weights_sha256"]
    assert sha256_of(tmp_path / WEIGHTS_FILE) == expected
    data = bytearray((tmp_path / WEIGHTS_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (tmp_path / WEIGHTS_FILE).write_bytes(bytes(data))
    with pytest.raises(KnowledgeWeightsError) as error:
        KnowledgeModel.load(tmp_path)
    assert str(tmp_path / WEIGHTS_FILE) in str(error.value) and expected in str(error.value)
    (tmp_path / METADATA_FILE).write_text("{not json")
    with pytest.raises(KnowledgeWeightsError, match=METADATA_FILE):
        KnowledgeModel.load(tmp_path)


def test_shipped_datasets_are_rebuilt_byte_for_byte_from_the_shipped_answers(tmp_path: Path) -> None:
    counts = build_datasets(default_data_dir() / "llm_answers.yaml", tmp_path)
    for kind, count in counts.items():
        shipped = default_data_dir() / f"{kind}.jsonl"
        assert (tmp_path / f"{kind}.jsonl").read_bytes() == shipped.read_bytes()
        provenance, pairs = read_jsonl(shipped)
        assert len(pairs) == count and provenance["kind"] == kind and provenance["objects"] >= 2000
        assert all(0.0 <= p.score <= 1.0 for p in pairs)
    answers = load_answers(default_data_dir() / "llm_answers.yaml")
    assert len(answers.rooms_of) >= 2000 and "kitchen" in answers.rooms


def test_a_bad_answers_file_names_the_entry(tmp_path: Path) -> None:
    bad = tmp_path / "answers.yaml"
    bad.write_text(
        "holders: [shelf]\nrooms: [kitchen]\ntaxonomy:\n  kitchen:\n    cookware:\n"
        "      rooms: {attic: 0.5}\n      holders: {shelf: 0.5}\n      objects: [pan]\n"
    )
    with pytest.raises(KnowledgeDataError, match=r"kitchen/cookware.*attic"):
        load_answers(bad)
    with pytest.raises(KnowledgeDataError, match="not an answers file"):
        bad.write_text("just text")
        load_answers(bad)


@pytest.mark.skipif(
    os.environ.get("SG_SEARCH_VISION") == "1", reason="the vision venv has torch 2.14.1 and torchvision"
)
def test_torch_stays_the_cpu_build_without_torchvision() -> None:
    import torch

    assert torch.__version__.startswith("2.13.0"), torch.__version__
    assert not torch.cuda.is_available()
    assert importlib.util.find_spec("torchvision") is None, "torchvision beside torch 2.13 breaks SBERT"
