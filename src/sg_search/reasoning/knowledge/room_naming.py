"""Rooms from the map, named with the distilled knowledge: the :class:`MapRooms` that the
scene-graph server and the in-process world host."""

from __future__ import annotations

from collections.abc import Sequence

from sg_search.reasoning.knowledge.datasets import default_data_dir, load_answers
from sg_search.reasoning.knowledge.model import KnowledgeModel
from sg_search.scene_graph.room_layer import MapRooms


def knowledge_map_rooms(knowledge: KnowledgeModel | None = None) -> MapRooms:
    """Room types of the distilled answers; p(object in room) from ``knowledge`` (default: the
    shipped model, loaded when the first room is named)."""
    loaded: list[KnowledgeModel] = [knowledge] if knowledge is not None else []

    def containment(rooms: Sequence[str], objects: Sequence[str]) -> Sequence[float]:
        if not loaded:
            loaded.append(KnowledgeModel.load_default())
        return [float(v) for v in loaded[0].containment(list(rooms), list(objects))]

    return MapRooms(load_answers(default_data_dir() / "llm_answers.yaml").rooms, containment)
