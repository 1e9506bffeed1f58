from __future__ import annotations

import dataclasses

from sg_search.scene_graph import SceneGraph, SceneNode
from sg_search.scene_graph.builder import BuilderParams, SceneGraphBuilder
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.model import Box3D
from sg_search.scene_graph.observations import ObjectInstance
from sg_search.scene_graph.schema import schema_dict, schema_text
from sg_search.scene_graph.views import compressed_text, object_subgraph, scout_view_text


def _scene(two_rooms: SceneGraph) -> SceneGraph:
    builder = SceneGraphBuilder(two_rooms, BuilderParams(), load_related_pairs())
    builder.integrate(
        1,
        [
            ObjectInstance("mug", "mug", 0.9, (1.0, 1.0, 0.5), Box3D((1.0, 1.0, 0.5), (0.1, 0.1, 0.1))),
            ObjectInstance("kettle", "kettle", 0.9, (1.3, 1.0, 0.5), Box3D((1.3, 1.0, 0.5), (0.2, 0.2, 0.2))),
            ObjectInstance("pass", "passport", 0.9, (7.5, 0.5, 0.2)),
        ],
    )
    return two_rooms


def test_object_subgraph_has_ancestors_and_neighbours(two_rooms: SceneGraph) -> None:
    sub = object_subgraph(_scene(two_rooms), "mug")
    assert {n.id for n in sub.nodes} == {"mug", "kettle", "kitchen_0", "building_0", "root"}
    assert "mug --next to--> kettle" in sub.text()


def test_compressed_text_lists_objects_with_room_and_neighbours(two_rooms: SceneGraph) -> None:
    lines = compressed_text(_scene(two_rooms)).splitlines()
    assert "mug: mug, kitchen_0, [kettle]" in lines
    assert "pass: passport, bedroom_0, [nightstand_0]" in lines


def test_scout_view_lists_actionable_nodes(two_rooms: SceneGraph) -> None:
    text = scout_view_text(_scene(two_rooms))
    assert "- bedroom_0: unexplored bedroom" in text
    assert "- fridge_0: closed fridge in kitchen_0" in text
    assert "- pass: passport in nightstand_0" in text


def test_schema_covers_every_model_field() -> None:
    schema = schema_dict()
    assert list(schema["node"]) == [f.name for f in dataclasses.fields(SceneNode)]
    text = schema_text()
    assert "metres" in text and "unexplored" in text and "has member" in text
