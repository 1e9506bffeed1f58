"""Small scenes built in code."""

from __future__ import annotations

import pytest

from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.prior import add_prior


def two_room_document() -> dict:  # type: ignore[type-arg]
    """Kitchen (x 0..4) and bedroom (x 4..8), each 4 m deep; a fridge and a nightstand."""
    return {
        "rooms": [
            {"id": "kitchen_0", "category": "kitchen", "center": [2.0, 2.0, 1.25], "size": [4.0, 4.0, 2.5]},
            {
                "id": "bedroom_0",
                "category": "bedroom",
                "center": [6.0, 2.0, 1.25],
                "size": [4.0, 4.0, 2.5],
                "state": "unexplored",
            },
        ],
        "doors": [["kitchen_0", "bedroom_0"]],
        "furniture": [
            {
                "id": "fridge_0",
                "category": "fridge",
                "room": "kitchen_0",
                "center": [0.5, 3.5, 0.9],
                "size": [0.7, 0.7, 1.8],
                "affordances": ["openable", "receptacle"],
                "state": "closed",
            },
            {
                "id": "nightstand_0",
                "category": "nightstand",
                "room": "bedroom_0",
                "center": [7.5, 0.5, 0.3],
                "size": [0.5, 0.4, 0.6],
                "affordances": ["openable", "receptacle", "surface"],
                "state": "closed",
            },
        ],
    }


@pytest.fixture
def two_rooms() -> SceneGraph:
    return add_prior(two_room_document(), SceneGraph())
