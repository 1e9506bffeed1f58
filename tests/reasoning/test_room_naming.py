"""Room naming with the distilled knowledge: what the answers state is used as written (under
every synonym), the learned model scores only the names they do not hold; loaded in the
background (the scene-graph server), a naming does not wait for it."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from sg_search.mapping.grid import GridSpec
from sg_search.reasoning.knowledge.datasets import load_answers
from sg_search.reasoning.knowledge.model import KnowledgeModel
from sg_search.reasoning.knowledge.room_naming import knowledge_map_rooms

ANSWERS = """holders: [shelf, fridge]
rooms: [kitchen, bedroom, bathroom]
taxonomy:
  kitchen:
    dairy:
      rooms: {kitchen: 0.9}
      holders: {fridge: 0.8}
      objects: [milk]
holder_types:
  fridge: {rooms: {kitchen: 0.95}, synonyms: [refrigerator], objects: []}
  shelf: {rooms: {kitchen: 0.5, bedroom: 0.4}, objects: []}
"""


class LearnedModelDouble:
    """Stands in for the trained MLP (its scores are beside the point here): 0.3 for every
    pair, and it remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    def containment(self, rooms: Sequence[str], objects: Sequence[str]) -> np.ndarray:
        self.asked += list(zip(rooms, objects, strict=True))
        return np.full(len(rooms), 0.3)


def test_written_rooms_are_used_as_written_and_the_model_scores_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(ANSWERS)
    model = LearnedModelDouble()
    rooms = knowledge_map_rooms(model, load_answers(path))  # type: ignore[arg-type]
    pairs = [("kitchen", "Refrigerator"), ("bedroom", "fridge_3"), ("kitchen", "milk"), ("bathroom", "lamp")]
    scores = rooms.containment([r for r, _ in pairs], [o for _, o in pairs])
    assert scores.tolist() == [0.95, 0.0, 0.9, 0.3]  # a room the answer leaves out: 0
    assert model.asked == [("bathroom", "lamp")]
    assert rooms.room_types == ["kitchen", "bedroom", "bathroom"]


def test_a_model_loading_in_the_background_is_not_waited_for_and_counts_once_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(ANSWERS)
    model, may_load = LearnedModelDouble(), threading.Event()

    def slow_load() -> LearnedModelDouble:  # a load that takes as long as the test lets it
        may_load.wait(10.0)
        return model

    monkeypatch.setattr(KnowledgeModel, "load_default", staticmethod(slow_load))
    rooms = knowledge_map_rooms(answers=load_answers(path), background=True)
    pairs = (["kitchen", "bathroom"], ["milk", "lamp"])

    assert rooms.containment(*pairs).tolist() == [0.9, 0.0]  # the lamp is not known yet
    may_load.set()
    deadline = time.monotonic() + 10.0
    while rooms.containment(*pairs).tolist() != [0.9, 0.3]:  # not remembered as 0
        assert time.monotonic() < deadline, "the loaded model's score never counted"
        time.sleep(0.01)
    assert model.asked[-1] == ("bathroom", "lamp")


def test_a_bathroom_with_cabinets_and_counters_is_named_a_bathroom() -> None:
    """One of the train houses' bathrooms (what the explorer saw in it), which the learned model
    alone called a kitchen: the toilet and the shower stall are a bathroom's."""
    spec = GridSpec(0.1, 40, 40, 0.0, 0.0)
    free = np.ones((40, 40), dtype=bool)
    seen = ["toilet", "countertop", "countertop", "top cabinet", "shower stall"]
    seen += ["bottom cabinet no top", "bottom cabinet no top", "towel rack"]
    _, names = knowledge_map_rooms().segment([(c, (2.0, 2.0)) for c in seen], free, spec)
    assert names == {1: "bathroom"}


def test_a_model_loaded_now_counts_at_the_first_naming(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text(ANSWERS)
    model = LearnedModelDouble()
    monkeypatch.setattr(KnowledgeModel, "load_default", staticmethod(lambda: model))
    rooms = knowledge_map_rooms(answers=load_answers(path), background=True, load_now=True)
    assert model.asked  # loaded (and its encoder warmed by one query) before any naming
    assert rooms.containment(["kitchen", "bathroom"], ["milk", "lamp"]).tolist() == [0.9, 0.3]
