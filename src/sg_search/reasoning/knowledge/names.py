"""Text the knowledge models embed: one normal form for rooms, furniture, objects and queries.

Scene-graph labels arrive as "kitchen_0", "bottom_cabinet_12" or "Mugs"; the distilled data
uses "kitchen", "bottom cabinet", "mug". Anything (an empty query included) maps to some
text, so that a score can always be computed: that is the point of embeddings.
"""

from __future__ import annotations

import re

from sg_search.perception.categories import normalise_category, query_category


def knowledge_text(name: str) -> str:
    """Lower case, singular, space separated, trailing instance numbers dropped
    ("bottom_cabinet_12" -> "bottom cabinet"); "" for text with no word."""
    stripped = re.sub(r"([_\s-]+\d+)+\s*$", "", name.strip())
    try:
        return normalise_category(stripped)
    except ValueError:
        return ""


# words that name a vessel or an amount of something: "bottle of detergent", "jar of honey"
_VESSELS = (
    "bag|basket|bottle|bowl|box|bucket|bunch|can|carton|case|container|crate|cup|glass|jar|jug|"
    "loaf|mug|pack|package|packet|piece|pot|roll|sack|slice|tin|tray|tub|tube"
)
_VESSEL_OF = re.compile(rf"^(?:{_VESSELS})e?s? of (.+)$")


def contents_text(name: str) -> str:
    """The object the knowledge scores for ``name``: what a vessel holds ("bottles of vodka" ->
    "vodka", "box of baking soda" -> "baking soda"), else :func:`knowledge_text`. A packaged
    good is kept where its contents are, and the distilled data names the contents, not the
    package, so the package's phrase would be scored by whichever neighbours it has."""
    text = knowledge_text(name)
    match = _VESSEL_OF.match(text)
    return match.group(1) if match else text


def query_text(query: str) -> str:
    """The object part of a request ("Find the Mugs" -> "mug"); "" when there is none."""
    try:
        return knowledge_text(query_category(query))
    except ValueError:
        return ""
