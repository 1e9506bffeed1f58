"""Integrate perception's fused object instances into the scene graph.

Positions are in the ``map`` frame [m]. Each call handles one RGB-D frame and bumps the
graph's sequence number once. Room membership comes from the room boxes' footprints;
an object whose centroid lies in a container's box becomes that container's child
("on" if it rests above the container's top, else "inside").
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from sg_search.perception.categories import normalise_category
from sg_search.perception.observation import ObjectInstance as ObjectInstance  # re-exported
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import (
    Affordance,
    EdgeKind,
    EdgeOrigin,
    Layer,
    NodeState,
    SceneEdge,
    SceneNode,
    Vec3,
)


@dataclass(frozen=True)
class IntegrationParams:
    """How instances become nodes.

    Attributes:
        container_margin: slack [m] around a container's box when deciding that an object
            lies inside/on it (fused centroids of small objects jitter by a few cm).
        on_top_tolerance: an object whose centroid is within this height [m] below the
            container's top or above it is "on" it, else "inside".
        openable_categories: categories that get the OPENABLE affordance and start CLOSED
            (with every compound they head: "cabinet" covers "kitchen cabinet", see :func:`is_a`).
        receptacle_categories: categories that can hold objects (RECEPTACLE).
    """

    container_margin: float = 0.05
    on_top_tolerance: float = 0.05
    openable_categories: tuple[str, ...] = ()
    receptacle_categories: tuple[str, ...] = ()


@dataclass
class IntegrationResult:
    """What one frame changed."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rooms: set[str] = field(default_factory=set)  # rooms whose content changed (before and after)


def integrate_instances(
    graph: SceneGraph,
    frame_index: int,
    instances: Sequence[ObjectInstance],
    removed_instance_ids: Sequence[str] = (),
    params: IntegrationParams | None = None,
) -> IntegrationResult:
    """Add or update one object node per instance; remove the instances perception dropped
    (merged into another): what one of them held stays, held by its holder until seen again.

    Instances are validated first; a bad one raises ValueError naming it and the graph is
    left unchanged.
    """
    params = params or IntegrationParams()
    prepared = [_validated(instance) for instance in instances]
    ids = [instance.instance_id for instance in instances]
    if len(ids) != len(set(ids)):
        raise ValueError(
            f"duplicate instance ids in one frame: {sorted({i for i in ids if ids.count(i) > 1})}"
        )
    for instance, _ in prepared:
        old = graph.get(instance.instance_id)
        if old is not None and old.kind not in ("object", "container"):
            raise ValueError(f"instance id {instance.instance_id!r} collides with a {old.kind} node")
    rooms = graph.rooms()
    result = IntegrationResult()
    removed: list[SceneNode] = []  # a unit perception merged away may live on under another id
    with graph.transaction():
        for instance_id in removed_instance_ids:
            node = graph.get(instance_id)
            # Only perceived nodes (observation_count > 0) are perception's to remove, not a prior's.
            if node is not None and node.kind in ("object", "container") and node.observation_count > 0:
                for child in graph.children(instance_id):  # held by its holder until seen again
                    graph.upsert_node(replace(child, parent_id=node.parent_id))
                graph.remove_node(instance_id)
                removed.append(node)
                result.removed.append(instance_id)
                result.rooms.add(node.room_id)
        for instance, category in prepared:
            old = graph.get(instance.instance_id)
            node = _node_for(instance, category, old, frame_index, rooms, graph, params, removed)
            if graph.upsert_node(node):
                (result.updated if old else result.added).append(node.id)
                result.rooms.update({node.room_id, old.room_id if old else node.room_id})
            _relate_to_parent(graph, node, params)
    return result


def _validated(instance: ObjectInstance) -> tuple[ObjectInstance, str]:
    if not instance.instance_id:
        raise ValueError("object instance has an empty instance_id")
    if not 0.0 <= instance.confidence <= 1.0:
        raise ValueError(f"instance {instance.instance_id!r}: confidence {instance.confidence} not in [0, 1]")
    if any(v != v or abs(v) > 1e4 for v in instance.centroid):
        raise ValueError(f"instance {instance.instance_id!r}: centroid {instance.centroid} is not finite")
    try:
        category = normalise_category(instance.category)
    except ValueError as exc:
        raise ValueError(f"instance {instance.instance_id!r}: {exc}") from None
    return instance, category


def _node_for(
    instance: ObjectInstance,
    category: str,
    old: SceneNode | None,
    frame_index: int,
    rooms: Sequence[SceneNode],
    graph: SceneGraph,
    params: IntegrationParams,
    removed: Sequence[SceneNode] = (),
) -> SceneNode:
    point = instance.centroid
    # Objects rarely change rooms: try the previous room before scanning all of them.
    previous = graph.get(old.room_id) if old is not None and old.room_id else None
    candidates = [previous, *rooms] if previous is not None else rooms
    room_id = next((r.id for r in candidates if r.bbox is not None and r.bbox.contains_xy(point)), "")
    holder = next(
        (
            c
            for c in graph.nodes_in_room(room_id, Layer.OBJECT)
            if c.kind == "container"
            and c.id != instance.instance_id
            and c.bbox is not None
            and c.bbox.contains(point, margin=params.container_margin)
            and not _held_by(graph, c, instance.instance_id)
        ),
        None,
    )
    parent_id = holder.id if holder else room_id
    affordances = Affordance.NAVIGABLE | Affordance.INSPECTABLE
    # The search owns states once set (opened, explored); perception only creates them.
    state = old.state if old is not None else NodeState.UNKNOWN
    kind = "object"
    if is_a(category, params.openable_categories):
        affordances |= Affordance.OPENABLE | Affordance.RECEPTACLE
        state = old.state if old is not None and old.state != NodeState.UNKNOWN else NodeState.CLOSED
        if old is None:  # the same unit seen anew, opened or searched and closed: not opened twice
            unit = [
                *same_unit(graph, room_id, category, point, instance.instance_id),
                *(n for n in removed if _in_unit(n, room_id, category, point, instance.instance_id)),
            ]  # with what this frame merged away (perception may drop and re-add the survivor too)
            searched = {c.state for c in unit}
            state = max(searched & {NodeState.OPEN, NodeState.EXPLORED}, default=state)
        kind = "container"
    elif is_a(category, params.receptacle_categories):
        affordances |= Affordance.RECEPTACLE | Affordance.SURFACE
        kind = "container"
    frames = (*(old.frame_ids if old else ()), frame_index)
    if old is not None and old.frame_ids and old.frame_ids[-1] == frame_index:
        frames = old.frame_ids
    return SceneNode(
        id=instance.instance_id,
        layer=Layer.OBJECT,
        kind=kind,
        category=category,
        position=point,
        bbox=instance.bbox,
        confidence=instance.confidence,
        parent_id=parent_id,
        room_id=room_id,
        affordances=affordances,
        state=state,
        observation_count=max(instance.observation_count, old.observation_count if old else 0),
        frame_ids=frames[-graph.max_frame_ids :],
    )


def _held_by(graph: SceneGraph, node: SceneNode, holder_id: str) -> bool:
    """True if ``holder_id`` is ``node``'s parent, grandparent, ... (two overlapping boxes must
    not hold each other: the hierarchy would become a cycle)."""
    seen: set[str] = set()
    parent = node.parent_id
    while parent and parent not in seen:
        if parent == holder_id:
            return True
        seen.add(parent)
        above = graph.get(parent)
        parent = above.parent_id if above is not None else ""
    return False


def _relate_to_parent(graph: SceneGraph, node: SceneNode, params: IntegrationParams) -> None:
    """Keep exactly one spatial edge object -> holding container ("on" or "inside")."""
    parent = graph.get(node.parent_id) if node.parent_id else None
    wanted: SceneEdge | None = None
    if parent is not None and parent.kind == "container" and parent.bbox is not None:
        top = parent.bbox.maximum[2]
        relation = "on" if node.position[2] >= top - params.on_top_tolerance else "inside"
        wanted = SceneEdge(node.id, parent.id, EdgeKind.SPATIAL, relation, EdgeOrigin.GEOMETRY)
    for edge in graph.edges_of(node.id):
        stale = edge.source == node.id and edge.relation in ("on", "inside")
        if edge.kind == EdgeKind.SPATIAL and stale and (wanted is None or edge.key != wanted.key):
            graph.remove_edge(edge.key)
    if wanted is not None:
        graph.upsert_edge(wanted)


def holding_relation(graph: SceneGraph, node: SceneNode) -> str:
    """ "on" or "inside" its parent container (the edge :func:`_relate_to_parent` keeps), or ""."""
    for edge in graph.edges_of(node.id):
        if edge.source == node.id and edge.target == node.parent_id and edge.relation in ("on", "inside"):
            return edge.relation
    return ""


def seen_within_reach(graph: SceneGraph, node: SceneNode, base_xy: Sequence[float], reach_m: float) -> bool:
    """True if ``node`` does not open, was seen in the newest frame any node of ``graph`` was
    seen in, and its centre lies within ``reach_m`` [m] (horizontal, ``map``) of the base at
    ``base_xy``: the base already stands where a search ends (within reach, the object in view);
    a drive to another viewpoint can lose the view (behind an opened door, beside the container
    the object lies in)."""
    if node.affordances & Affordance.OPENABLE:
        return False
    latest = max((f for n in graph.nodes() for f in n.frame_ids), default=None)
    centre = node.bbox.center if node.bbox is not None else node.position
    return (
        latest is not None and latest in node.frame_ids
        and math.hypot(centre[0] - base_xy[0], centre[1] - base_xy[1]) <= reach_m
    )  # fmt: skip


def same_unit(
    graph: SceneGraph, room_id: str, category: str, point: Vec3, other_than: str
) -> Iterator[SceneNode]:
    """Objects of ``category`` in ``room_id`` (but ``other_than``) whose box, grown by
    ``OPENED_MARGIN_M``, holds ``point`` [m, map]: opening and closing change a container's
    shape, and perception may then report the same unit as a new instance."""
    return (
        c
        for c in graph.nodes_in_room(room_id, Layer.OBJECT)
        if _in_unit(c, room_id, category, point, other_than)
    )


def current_unit(graph: SceneGraph, node: SceneNode) -> SceneNode | None:
    """``node`` as ``graph`` holds it now: itself, or, where perception merged it into another
    instance or reported it anew after opening changed its shape, the unit of its category in
    its room whose grown box holds its old centre; None if neither is in the graph."""
    now = graph.get(node.id)
    if now is not None:
        return now
    centre = node.bbox.center if node.bbox is not None else node.position
    return next(same_unit(graph, node.room_id, node.category, centre, node.id), None)


def _in_unit(node: SceneNode, room_id: str, category: str, point: Vec3, other_than: str) -> bool:
    """:func:`same_unit`'s test of one node."""
    return (
        node.room_id == room_id and node.category == category and node.id != other_than
        and node.bbox is not None and node.bbox.contains(point, margin=OPENED_MARGIN_M)
    )  # fmt: skip


OPENED_MARGIN_M = 0.3  # an open door reaches about this far beyond the closed unit's box


def is_a(category: str, kinds: Sequence[str]) -> bool:
    """Whether ``category`` is one of ``kinds`` or a compound headed by one: English compounds
    put the head last, so "bottom cabinet" and "kitchen cabinet" are cabinets and "pedestal
    sink" a sink, while "table lamp" is no table. Names from an open-vocabulary detector or a
    user thereby inherit what their head noun affords."""
    return any(category == kind or category.endswith(" " + kind) for kind in kinds)
