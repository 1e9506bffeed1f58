"""Rooms from the map, named with the distilled knowledge: the :class:`MapRooms` that the
scene-graph server and the in-process world host.

A region is named from p(room type has the thing) of the things seen in it. Where the distilled
answers state that outright for the name a detector gives — a holder type's rooms under its
name or any synonym (P6: "toilet": bathroom 0.95; "refrigerator" is the fridge), else an
object's rooms (P4) — the answer is used as written; the learned model scores only the names the
answers do not hold. The model generalises to new names but blurs furniture: it put a bed 0.55
in a bedroom and 0.39 in a living room, a swivel chair likeliest in a storage room, and named
32 % of the explored train-house regions right against 46 % with the written answers first
(docs/BENCHMARKS.md, "session 22").
"""

from __future__ import annotations

from collections.abc import Sequence

from sg_search.perception.room_segmentation import RoomSegmentationParams
from sg_search.reasoning.knowledge.datasets import Answers, shipped_answers
from sg_search.reasoning.knowledge.model import KnowledgeModel
from sg_search.reasoning.knowledge.names import knowledge_text
from sg_search.scene_graph.room_layer import MapRooms


def written_rooms(answers: Answers) -> dict[str, dict[str, float]]:
    """Room type -> probability, by name, as the answers state it: every object's rooms (P4),
    then every holder type's rooms under its name and each synonym (P6; a holder's answer wins
    where a name is both). A room the answer leaves out has probability 0."""
    out: dict[str, dict[str, float]] = dict(answers.rooms_of)
    for holder, kind in answers.holder_types.items():
        for name in answers.names_of(holder):
            out[name] = kind.rooms
    return out


def knowledge_map_rooms(
    knowledge: KnowledgeModel | None = None,
    answers: Answers | None = None,
    params: RoomSegmentationParams | None = None,
) -> MapRooms:
    """Room types of the distilled ``answers`` (default: the shipped ones); p(object in room)
    as they state it, else from ``knowledge`` (default: the shipped model, loaded when the first
    name the answers do not hold is scored); segmentation and naming by ``params`` (default:
    the dataclass's, which config/sg_search.yaml holds)."""
    answers = answers or shipped_answers()
    written = written_rooms(answers)
    loaded: list[KnowledgeModel] = [knowledge] if knowledge is not None else []

    def containment(rooms: Sequence[str], objects: Sequence[str]) -> Sequence[float]:
        scores = [0.0] * len(rooms)
        unwritten = []
        for k, (room, obj) in enumerate(zip(rooms, objects, strict=True)):
            stated = written.get(knowledge_text(obj))
            if stated is None:
                unwritten.append(k)
            else:
                scores[k] = stated.get(knowledge_text(room), 0.0)
        if unwritten:
            if not loaded:
                loaded.append(KnowledgeModel.load_default())
            learned = loaded[0].containment([rooms[k] for k in unwritten], [objects[k] for k in unwritten])
            for k, value in zip(unwritten, learned, strict=True):
                scores[k] = float(value)
        return scores

    return MapRooms(answers.rooms, containment, params)
