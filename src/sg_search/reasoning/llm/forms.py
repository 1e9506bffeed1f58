"""The forms the LLM reasoners ask their answers in: JSON schemas whose id fields are enums of
the ids the prompt listed, and regular expressions for the text protocols.

A server that constrains decoding (``sg-search llm serve``, vLLM, SGLang with
``llm_structured=json_schema``; ``llm_text_regex`` for the regexes) then cannot answer an id
that was not offered or an answer that does not parse. Strings are capped (``maxLength``,
characters) so that a small model cannot spend its token budget on one field; the reasoners'
own checks stay, for servers that ignore the form.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

REASON_CHARS = 80
"""Longest reason string a schema allows [characters]."""


def text(max_chars: int = REASON_CHARS) -> dict[str, Any]:
    """A string of at most ``max_chars`` characters."""
    return {"type": "string", "maxLength": max_chars}


def one_of(values: Sequence[str | int]) -> dict[str, Any]:
    """Exactly one of ``values`` (strings or integers)."""
    kind = "integer" if values and all(isinstance(v, int) for v in values) else "string"
    return {"type": kind, "enum": list(dict.fromkeys(values))}


def json_object(properties: dict[str, Any], required: Sequence[str] | None = None) -> dict[str, Any]:
    """An object with exactly these properties, in this order (all required unless named)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties if required is None else required),
        "additionalProperties": False,
    }


def either(*alternatives: dict[str, Any]) -> dict[str, Any]:
    """An answer of one of these forms (``anyOf``): e.g. an object choice with its id, or
    "none" without one, so that a constrained model cannot choose an object and name none."""
    return {"anyOf": list(alternatives)}


def array(items: dict[str, Any], min_items: int, max_items: int) -> dict[str, Any]:
    """A list of ``min_items`` to ``max_items`` entries."""
    return {"type": "array", "items": items, "minItems": min_items, "maxItems": max_items}


def choice_schema(key: str, ids: Sequence[str], reason: bool = True) -> dict[str, Any]:
    """``{"<key>": one of ids, "reason": "..."}``: the answer of a reasoner that picks one id."""
    properties: dict[str, Any] = {key: one_of(ids)}
    if reason:
        properties["reason"] = text()
    return json_object(properties)


def alternatives(values: Sequence[str]) -> str:
    """A regex group matching exactly one of ``values`` (escaped)."""
    return "(" + "|".join(re.escape(v) for v in dict.fromkeys(values)) + ")"


def line(max_chars: int = REASON_CHARS) -> str:
    """A regex for 1 to ``max_chars`` characters on one line."""
    return rf"[^\n]{{1,{max_chars}}}"
