"""Category names: one normal form so that "Passports", "the passport" and "passport" match.

Normal form (as in SCOUT's distilled data): lower case, singular, words separated by one
space ("coffee_table" -> "coffee table"). Plural handling is rule based and covers
household nouns; irregular plurals are listed.
"""

from __future__ import annotations

import re

_IRREGULAR = {
    "knives": "knife",
    "shelves": "shelf",
    "leaves": "leaf",
    "loaves": "loaf",
    "dishes": "dish",
    "glasses": "glass",
    "boxes": "box",
    "mice": "mouse",
    "people": "person",
    "teeth": "tooth",
    "feet": "foot",
}
_KEEP = {"glass", "dress", "mattress", "grass", "bus", "lens", "series", "news", "scissors", "pants", "jeans"}
_REQUEST_WORDS = {
    "find",
    "the",
    "a",
    "an",
    "my",
    "some",
    "please",
    "me",
    "get",
    "where",
    "is",
    "search",
    "for",
}


def singular(word: str) -> str:
    """Singular form of one lower-case English noun (rule based)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word in _KEEP or len(word) <= 3 or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def normalise_category(text: str) -> str:
    """Normal form of a category name: lower case, singular last word, single spaces.

    Raises ValueError for text with no letters.
    """
    words = re.sub(r"[_\-./]+", " ", text.strip().lower()).split()
    words = [re.sub(r"[^a-z0-9' ]", "", w) for w in words]
    words = [w for w in words if w]
    if not words or not any(c.isalpha() for c in "".join(words)):
        raise ValueError(f"category {text!r} contains no word")
    words[-1] = singular(words[-1])
    return " ".join(words)


def query_category(query: str) -> str:
    """The object category in a free-text request ("find the passport" -> "passport").

    Only request words are dropped; descriptive queries ("something to cook with") are kept
    whole for reasoners that embed them.
    """
    words = re.sub(r"[_\-./?!,]+", " ", query.strip().lower()).split()
    kept = [w for w in words if w not in _REQUEST_WORDS]
    if not kept:
        raise ValueError(f"query {query!r} names no object")
    return normalise_category(" ".join(kept))
