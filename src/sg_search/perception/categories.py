"""Category names: one normal form so that "Passports", "the passport" and "passport" match.

Normal form (as in SCOUT's distilled data): lower case, singular, words separated by one
space ("coffee_table" -> "coffee table"). Plural handling is rule based and covers
household nouns; irregular plurals are listed.
"""

from __future__ import annotations

import re
import unicodedata

MAX_QUERY_CHARS = 200  # a request names an object; a longer text is not a query

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
    """Normal form of a category name: Unicode NFKC, case-folded, singular last word, single
    spaces; letters of any script are kept ("café", "护照"), punctuation and control
    characters are dropped.

    Raises ValueError for text with no letters.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    words = re.sub(r"[_\-./]+", " ", folded.strip()).split()
    words = [re.sub(r"[^\w']", "", w) for w in words]
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
    if len(query) > MAX_QUERY_CHARS:
        raise ValueError(f"query is {len(query)} characters long; at most {MAX_QUERY_CHARS}")
    folded = unicodedata.normalize("NFKC", query).casefold()
    words = re.sub(r"[_\-./?!,]+", " ", folded.strip()).split()
    kept = [w for w in words if w not in _REQUEST_WORDS]
    if not kept:
        raise ValueError(f"query {query!r} names no object")
    return normalise_category(" ".join(kept))
