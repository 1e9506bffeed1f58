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


def query_text(query: str) -> str:
    """The object part of a request ("Find the Mugs" -> "mug"); "" when there is none."""
    try:
        return knowledge_text(query_category(query))
    except ValueError:
        return ""
