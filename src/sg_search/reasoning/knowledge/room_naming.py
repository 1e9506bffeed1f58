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

The model is loaded when a name the answers do not hold is first scored. A host that must not
wait for that (the scene-graph server: the load imports transformers, 5 s on this machine and
over 10 s under load, and a map callback that waits holds up the node's shutdown until it is
killed, its last snapshot unsaved) loads it in the background: until it is loaded, those names
are not known yet, and count from the next naming on. A host may also load it as it starts
(``load_now``; the server's ``knowledge_at_start``), so that the first search meets it loaded.
"""

from __future__ import annotations

import math
import threading
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
    background: bool = False,
    load_now: bool = False,
) -> MapRooms:
    """Room types of the distilled ``answers`` (default: the shipped ones); p(object in room)
    as they state it, else from ``knowledge`` (default: the shipped model, loaded when the first
    name the answers do not hold is scored; with ``background``, in a thread that no naming
    waits for: NaN until it is loaded; with ``load_now``, here, before this returns);
    segmentation and naming by ``params`` (default: the dataclass's, which
    config/sg_search.yaml holds)."""
    answers = answers or shipped_answers()
    written = written_rooms(answers)
    learned = _LearnedModel(knowledge, background and not load_now)
    if load_now:
        learned.get()

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
            model = learned.get()
            values = (
                model.containment([rooms[k] for k in unwritten], [objects[k] for k in unwritten])
                if model is not None
                else [math.nan] * len(unwritten)
            )
            for k, value in zip(unwritten, values, strict=True):
                scores[k] = float(value)
        return scores

    return MapRooms(answers.rooms, containment, params)


class _LearnedModel:
    """The learned model, loaded on first need: at once, or (``background``) in a daemon thread
    that :meth:`get` does not wait for; a failed background load is raised by the next get."""

    def __init__(self, model: KnowledgeModel | None, background: bool) -> None:
        self._model = model
        self._background = background
        self._loader: threading.Thread | None = None
        self._error: Exception | None = None

    def get(self) -> KnowledgeModel | None:
        """The model, or None while it loads in the background."""
        if self._model is None and not self._background:
            self._model = _load_warm()
        elif self._model is None and self._loader is None:
            self._loader = threading.Thread(target=self._load, name="knowledge-model-load", daemon=True)
            self._loader.start()
        if self._error is not None:
            raise self._error
        return self._model

    def _load(self) -> None:
        try:
            model = _load_warm()
        except Exception as exc:  # handed to the caller of get
            self._error = exc
        else:
            self._model = model


def _load_warm() -> KnowledgeModel:
    """The shipped model with its sentence encoder loaded (that happens at the first query)."""
    model = KnowledgeModel.load_default()
    model.containment(["kitchen"], ["cup"])
    return model
