"""SG-Nav re-perception credibility: accumulation, verdicts, context from neighbours."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sg_search.scene_graph import Layer, SceneGraph, SceneNode
from sg_search.search.verification import (
    Credibility,
    CredibilityParams,
    Verdict,
    context_support,
    follow_candidate,
    goal_confidence,
)

PARAMS = CredibilityParams()  # SG-Nav: threshold 0.8 within 10 observations


def _object(node_id: str, category: str, x: float, confidence: float = 0.9) -> SceneNode:
    return SceneNode(node_id, Layer.OBJECT, "object", category, (x, 0.0, 0.5), confidence=confidence)


def test_confident_observations_accept_within_the_budget() -> None:
    credibility = Credibility("c", PARAMS)
    verdicts = [credibility.add(0.9, 0.5) for _ in range(2)]
    assert verdicts == [Verdict.PENDING, Verdict.ACCEPTED]  # 0.45 + 0.45 >= 0.8
    assert "0.90/0.80 after 2 observations" in credibility.summary()


def test_a_candidate_never_seen_again_is_rejected_after_n_max() -> None:
    credibility = Credibility("c", PARAMS)
    verdicts = [credibility.add(0.0, 1.0) for _ in range(PARAMS.max_observations)]
    assert verdicts[-1] == Verdict.REJECTED and verdicts[:-1] == [Verdict.PENDING] * 9


def test_weak_evidence_is_rejected_even_when_it_accumulates() -> None:
    credibility = Credibility("c", PARAMS)
    for _ in range(PARAMS.max_observations):
        verdict = credibility.add(0.25, 0.3)  # 10 x 0.075 = 0.75 < 0.8
    assert verdict == Verdict.REJECTED


def test_context_rises_with_related_neighbours_and_falls_with_distance() -> None:
    graph = SceneGraph()
    candidate = _object("cand", "toothbrush", 0.0)

    def cooc(labels: Sequence[str], goal: str) -> list[float]:
        return [0.9 if label == "sink" else 0.0 for label in labels]

    graph.upsert_node(candidate)
    alone = context_support(graph, candidate, "toothbrush", cooc, PARAMS)
    assert alone == pytest.approx(PARAMS.context_floor)
    graph.upsert_node(_object("far_sink", "sink", 2.5))
    far = context_support(graph, candidate, "toothbrush", cooc, PARAMS)
    graph.upsert_node(_object("near_sink", "sink", 0.5))
    near = context_support(graph, candidate, "toothbrush", cooc, PARAMS)
    assert alone < far < near <= 1.0
    assert far == pytest.approx(PARAMS.context_floor + 0.9 / 2.5)
    graph.upsert_node(_object("sofa", "sofa", 0.3))  # unrelated: adds nothing
    assert context_support(graph, candidate, "toothbrush", cooc, PARAMS) == pytest.approx(near)


def test_goal_confidence_is_zero_once_perception_relabels_or_drops_the_candidate() -> None:
    assert goal_confidence(_object("c", "mug", 0.0, 0.7), "mug") == pytest.approx(0.7)
    assert goal_confidence(_object("c", "bowl", 0.0, 0.7), "mug") == 0.0
    assert goal_confidence(None, "mug") == 0.0


def test_invalid_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="max_observations"):
        CredibilityParams(max_observations=0)


def test_a_candidate_merged_into_another_instance_is_followed() -> None:
    graph = SceneGraph()
    candidate = _object("obj_3", "mug", 1.0)
    graph.upsert_node(_object("obj_9", "mug", 1.2))  # fusion merged obj_3 into obj_9
    graph.upsert_node(_object("obj_5", "mug", 3.0))
    followed = follow_candidate(graph, candidate, "mug")
    assert followed is not None and followed.id == "obj_9"
    assert follow_candidate(graph, _object("obj_4", "mug", 6.0), "mug") is None
    graph.upsert_node(candidate)
    assert follow_candidate(graph, candidate, "mug") == candidate
