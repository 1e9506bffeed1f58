"""Load a known scene (rooms, doors, furniture) from a YAML file into a scene graph.

A prior is what a lab knows before the robot starts: a room segmentation of its
mapped apartment and the big furniture. Format (``map`` frame, metres)::

    frame_id: map
    rooms:
      - {id: kitchen_0, category: kitchen, center: [4.0, 2.0, 1.25], size: [4.0, 3.0, 2.5],
         state: explored}            # or unexplored (known to exist, not yet seen)
    doors:
      - [kitchen_0, living_room_0]
    furniture:
      - {id: fridge_0, category: fridge, room: kitchen_0, center: [...], size: [...],
         affordances: [openable, receptacle], state: closed}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sg_search.config import read_yaml
from sg_search.perception.categories import normalise_category
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import (
    Affordance,
    Box3D,
    EdgeKind,
    EdgeOrigin,
    Layer,
    NodeState,
    SceneEdge,
    SceneNode,
)

ROOT_ID = "root"
BUILDING_ID = "building_0"


class PriorError(ValueError):
    """The prior scene file is malformed; the message names the file and the entry."""


def load_prior(path: Path | str, graph: SceneGraph | None = None) -> SceneGraph:
    """Read a prior scene file into ``graph`` (a new one by default) in one transaction."""
    path = Path(path)
    try:
        document = read_yaml(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise PriorError(f"cannot read prior scene {path}: {exc}") from exc
    if not isinstance(document, dict):
        raise PriorError(f"prior scene {path} must be a mapping with 'rooms'")
    return add_prior(document, graph if graph is not None else SceneGraph(), source=str(path))


def add_prior(document: dict[str, Any], graph: SceneGraph, source: str = "prior") -> SceneGraph:
    """Add rooms, doors and furniture described by ``document`` (see module docstring), all or
    nothing: a malformed document raises :class:`PriorError` naming the entry and adds nothing."""
    if not isinstance(document, dict):
        raise PriorError(f"{source}: a prior is a mapping with 'rooms', got {type(document).__name__}")
    for key in ("rooms", "furniture", "doors"):
        if not isinstance(document.get(key) or [], list):
            raise PriorError(f"{source}: '{key}' must be a list")
    nodes: list[SceneNode] = [
        SceneNode(ROOT_ID, Layer.ROOT, "root"),
        SceneNode(BUILDING_ID, Layer.BUILDING, "building", parent_id=ROOT_ID),
    ]
    room_ids = set()
    for i, room in enumerate(document.get("rooms") or []):
        where = f"{source}: rooms[{i}]"
        box = _box(room, where)
        node = SceneNode(
            id=_str(room, "id", where),
            layer=Layer.ROOM,
            kind="room",
            category=_category(room, where),
            position=box.center,
            bbox=box,
            parent_id=BUILDING_ID,
            affordances=Affordance.NAVIGABLE,
            state=_state(room.get("state", "explored"), where),
        )
        room_ids.add(node.id)
        nodes.append(node)
    for i, item in enumerate(document.get("furniture") or []):
        where = f"{source}: furniture[{i}]"
        room_id = _str(item, "room", where)
        if room_id not in room_ids:
            raise PriorError(f"{where}: room {room_id!r} is not among the rooms")
        box = _box(item, where)
        affordances = Affordance.NAVIGABLE | Affordance.INSPECTABLE
        names = item.get("affordances") or []
        if not isinstance(names, list):
            raise PriorError(f"{where}: 'affordances' must be a list of names")
        for name in names:
            try:
                affordances |= Affordance[str(name).upper()]
            except KeyError:
                raise PriorError(f"{where}: unknown affordance {name!r}") from None
        nodes.append(
            SceneNode(
                id=_str(item, "id", where),
                layer=Layer.OBJECT,
                kind="container" if affordances & (Affordance.RECEPTACLE | Affordance.OPENABLE) else "object",
                category=_category(item, where),
                position=box.center,
                bbox=box,
                parent_id=room_id,
                room_id=room_id,
                affordances=affordances,
                state=_state(item.get("state", "unknown"), where),
            )
        )
    doors = _doors(document, room_ids, source)
    ids = [n.id for n in nodes]
    if len(ids) != len(set(ids)):
        raise PriorError(f"{source}: node ids are not unique")
    with graph.transaction():
        for node in nodes:
            graph.upsert_node(node)
        for a, b in doors:
            for s, t in ((a, b), (b, a)):
                graph.upsert_edge(SceneEdge(s, t, EdgeKind.ADJACENCY, "door", EdgeOrigin.PRIOR))
    return graph


def _doors(document: dict[str, Any], room_ids: set[str], source: str) -> list[list[str]]:
    doors = []
    for i, pair in enumerate(document.get("doors") or []):
        known = isinstance(pair, list) and all(isinstance(p, str) and p in room_ids for p in pair)
        if not (known and len(pair) == 2):
            raise PriorError(f"{source}: doors[{i}] must be a pair of known room ids, got {pair!r}")
        doors.append(pair)
    return doors


def _str(entry: Any, key: str, where: str) -> str:
    if not isinstance(entry, dict) or not isinstance(entry.get(key), str) or not entry[key]:
        raise PriorError(f"{where}: needs a non-empty string '{key}'")
    return str(entry[key])


def _category(entry: dict[str, Any], where: str) -> str:
    try:
        return normalise_category(_str(entry, "category", where))
    except ValueError as exc:
        raise PriorError(f"{where}: {exc}") from None


def _box(entry: dict[str, Any], where: str) -> Box3D:
    try:
        center = tuple(float(v) for v in entry["center"])
        size = tuple(float(v) for v in entry["size"])
        if len(center) != 3 or len(size) != 3:
            raise ValueError("center and size need 3 numbers each")
        return Box3D(center, size)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError) as exc:
        raise PriorError(f"{where}: bad center/size: {exc}") from None


def _state(name: Any, where: str) -> NodeState:
    try:
        return NodeState[str(name).upper()]
    except KeyError:
        raise PriorError(f"{where}: unknown state {name!r}") from None
