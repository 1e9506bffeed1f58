"""Bad input at the search's door: queries of any text and budgets of any number are either
handled or refused with an error that names the field (property-based, with hypothesis)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from world_doubles import WatchedWorld

from sg_search.perception.categories import MAX_QUERY_CHARS, normalise_category, query_category
from sg_search.reasoning import create_reasoner
from sg_search.scene_graph import SceneGraph
from sg_search.search import SearchError, SearchParams, run_search


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("find the café", "café"),
        ("find the CAFE\u0301", "café"),
        ("找到护照", "找到护照"),
        ("Passports!", "passport"),
    ],
)
def test_queries_in_any_script_keep_their_letters(query: str, category: str) -> None:
    assert query_category(query) == category


@given(st.text(max_size=3 * MAX_QUERY_CHARS))
def test_any_text_is_a_category_without_control_characters_or_a_named_refusal(text: str) -> None:
    try:
        category = query_category(text)
    except ValueError as exc:
        assert "query" in str(exc) or "category" in str(exc)
        return
    assert category and category == category.strip() and "  " not in category
    assert not any(c.isspace() and c != " " for c in category)
    assert all(c.isprintable() for c in category)
    assert normalise_category(category) == category  # the normal form is a fixed point


@given(st.text(min_size=MAX_QUERY_CHARS + 1, max_size=10_000))
def test_a_long_text_is_refused_as_too_long(text: str) -> None:
    with pytest.raises(ValueError, match=f"at most {MAX_QUERY_CHARS}"):
        query_category(text)


_NUMBERS = st.floats(allow_nan=True, allow_infinity=True)


@given(timeout=_NUMBERS, period=_NUMBERS, settle=_NUMBERS, steps=st.integers(-5, 5))
def test_budgets_that_cannot_bind_are_refused_naming_the_field(
    timeout: float, period: float, settle: float, steps: int
) -> None:
    try:
        params = SearchParams(max_steps=steps, timeout_s=timeout, step_period_s=period, settle_s=settle)
    except ValueError as exc:
        assert any(name in str(exc) for name in ("max_steps", "timeout_s", "step_period_s", "settle_s"))
        return
    assert params.max_steps >= 1 and params.timeout_s > 0 and not math.isnan(params.timeout_s)
    assert math.isfinite(params.step_period_s) and params.step_period_s >= 0


def test_a_nan_timeout_is_refused_not_waited_forever() -> None:
    with pytest.raises(ValueError, match="timeout_s"):
        SearchParams(timeout_s=math.nan)


def test_the_deadline_ends_a_verification_in_progress() -> None:
    """The clock passes the deadline while the candidate is re-observed: the search ends in
    TIMEOUT, not after the verifier's last observation."""
    from world_doubles import ScriptedWorld

    from sg_search.scene_graph.observations import ObjectInstance, integrate_instances
    from sg_search.search import ExecutionReport, Verifier
    from sg_search.search.verification import CredibilityParams

    graph = SceneGraph()
    integrate_instances(graph, 1, [ObjectInstance("m", "mug", 0.9, (1.0, 0.0, 0.5))])
    now = [0.0]
    observed: list[int] = []

    def seen(_: object) -> bool:  # each re-observation takes 10 s and never confirms the mug
        now[0] += 10.0
        observed.append(1)
        return False

    world = ScriptedWorld(lambda: graph, lambda _: ExecutionReport(True), seen)
    verifier = Verifier(
        world, CredibilityParams(threshold=9.0, max_observations=100), lambda labels, _: [0.0] * len(labels)
    )
    outcome = run_search(
        "mug", create_reasoner("random"), world, params=SearchParams(timeout_s=25.0), verifier=verifier,
        clock=lambda: now[0], sleep=lambda _: None,
    )  # fmt: skip
    assert outcome.error == SearchError.TIMEOUT
    assert len(observed) <= 3


def test_a_search_with_an_empty_graph_and_a_unicode_query_ends_cleanly() -> None:
    outcome = run_search("找到护照", create_reasoner("random"), WatchedWorld(lambda: SceneGraph()),
                         params=SearchParams(max_steps=2, step_period_s=0.0))  # fmt: skip
    assert outcome.error == SearchError.NOT_FOUND and "找到护照" in outcome.message
