"""Every prompt template renders: versioned header, purpose, all fields filled, nothing left over."""

from __future__ import annotations

import string

import pytest

from sg_search.llm import PromptError, available_prompts, load_prompt, render
from sg_search.llm.prompts import PROMPT_DIR

EXPECTED = {
    "distill_system", "distill_holders", "distill_rooms", "distill_categories", "distill_objects",
    "distill_containment", "distill_cooccurrence", "distill_holder_types", "distill_holder_objects",
    "repair_json", "sgnav_subgraphs", "sgnav_edges",
    "msgnav_kss", "msgnav_find", "msgnav_frontier", "msgnav_verify", "sgrwr_reasoner", "sgrwr_retriever",
    "sgrwr_debug", "sgrwr_no_assume", "sgrwr_format", "sgrwr_search_task", "sgrwr_question_task",
    "navgpt_system", "navgpt_step", "navgpt_invalid", "moma_llm", "godhs_rooms", "godhs_carriers",
}  # fmt: skip


def test_the_templates_are_the_expected_set() -> None:
    assert set(available_prompts()) == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_template_renders_every_field(name: str) -> None:
    template = load_prompt(name)
    assert template.version >= 1 and template.purpose and template.body.strip()
    values = {field: f"<{field.upper()}-VALUE>" for field in template.fields}
    text = render(name, **values)
    for value in values.values():
        assert value in text
    leftover = [
        m.group(0) for m in string.Template.pattern.finditer(text) if m.group("named") or m.group("braced")
    ]
    assert not leftover, f"unfilled placeholders {leftover}"
    assert f"# {name} v" not in text and template.purpose not in text  # the header is not sent


def test_rendering_refuses_missing_and_unused_fields() -> None:
    with pytest.raises(PromptError, match=r"missing \['goal'\]"):
        render("msgnav_verify", observed="a mug")
    with pytest.raises(PromptError, match=r"unused \['colour'\]"):
        render("msgnav_verify", goal="mug", observed="a mug", colour="red")
    with pytest.raises(PromptError, match="no prompt template 'nope'; known: distill_categories"):
        load_prompt("nope")


def test_a_template_without_its_versioned_header_is_refused(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bad.txt").write_text("Hello $name\n")
    monkeypatch.setattr("sg_search.llm.prompts.PROMPT_DIR", tmp_path)
    load_prompt.cache_clear()
    try:
        with pytest.raises(PromptError, match="first line must be '# bad v<version>'"):
            load_prompt("bad")
    finally:
        load_prompt.cache_clear()
    assert PROMPT_DIR.is_dir()
