from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.config import package_share
from sg_search.perception.categories import normalise_category, query_category
from sg_search.scene_graph import EdgeKind, Layer, NodeState, SceneGraph
from sg_search.scene_graph.observations import ObjectInstance, integrate_instances
from sg_search.scene_graph.prior import PriorError, load_prior
from sg_search.scene_graph.query import find_nodes


def test_demo_apartment_loads_with_doors_both_ways() -> None:
    graph = load_prior(package_share() / "config" / "demo" / "apartment.yaml")
    rooms = graph.nodes(layer=Layer.ROOM)
    assert {r.id for r in rooms} == {"hallway_0", "kitchen_0", "living_room_0", "bedroom_0"}
    doors = {(e.source, e.target) for e in graph.edges(EdgeKind.ADJACENCY)}
    assert ("hallway_0", "kitchen_0") in doors and ("kitchen_0", "hallway_0") in doors
    assert graph.node("fridge_0").state == NodeState.CLOSED
    assert graph.node("living_room_0").category == "living room"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rooms: [{id: a, category: kitchen, center: [0, 0], size: [1, 1, 1]}]", "rooms\\[0\\]: bad center"),
        (
            "rooms: [{id: a, category: kitchen, center: [0,0,0], size: [1,1,1]}]\n"
            "furniture: [{id: f, category: fridge, room: b, center: [0,0,0], size: [1,1,1]}]",
            "room 'b'",
        ),
        (
            "rooms: [{id: a, category: kitchen, center: [0,0,0], size: [1,1,1], state: dusty}]",
            "state 'dusty'",
        ),
        ("doors: [[a, b]]", "doors\\[0\\]"),
        ("- just a list", "must be a mapping"),
    ],
)
def test_bad_prior_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    with pytest.raises(PriorError, match=message):
        load_prior(path)


def test_bad_prior_does_not_touch_existing_graph(tmp_path: Path) -> None:
    graph = load_prior(package_share() / "config" / "demo" / "apartment.yaml")
    before = (graph.sequence, len(graph))
    path = tmp_path / "bad.yaml"
    path.write_text("rooms: [{id: x, category: kitchen, center: [0,0,0], size: [1,1,-1]}]")
    with pytest.raises(PriorError):
        load_prior(path, graph)
    assert (graph.sequence, len(graph)) == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Passports", "passport"),
        ("coffee_table", "coffee table"),
        ("Knives", "knife"),
        ("glasses", "glass"),
        ("boxes", "box"),
        ("batteries", "battery"),
        ("dress", "dress"),
        ("remote-controls", "remote control"),
    ],
)
def test_normalise_category(text: str, expected: str) -> None:
    assert normalise_category(text) == expected


def test_query_category_drops_request_words_only() -> None:
    assert query_category("Find the passport!") == "passport"
    assert query_category("something to cook with") == "something to cook with"
    with pytest.raises(ValueError, match="names no object"):
        query_category("find the")


def test_find_nodes_exact_before_partial_and_filters() -> None:
    graph = SceneGraph()
    integrate_instances(
        graph,
        1,
        [
            ObjectInstance("t1", "coffee table", 0.9, (0, 0, 0)),
            ObjectInstance("t2", "table", 0.6, (1, 0, 0)),
            ObjectInstance("t3", "table", 0.8, (2, 0, 0)),
            ObjectInstance("m", "mug", 0.9, (3, 0, 0)),
        ],
    )
    assert [n.id for n in find_nodes(graph, "tables")] == ["t3", "t2", "t1"]
    assert [n.id for n in find_nodes(graph, "table", max_results=1)] == ["t3"]
    assert find_nodes(graph, "sofa") == []
    assert len(find_nodes(graph, kind="object")) == 4
