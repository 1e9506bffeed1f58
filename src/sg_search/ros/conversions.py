"""Core value types <-> ``sg_search_interfaces`` messages. Frames pass through unchanged."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import TypeVar

import numpy as np
from geometry_msgs.msg import Point, Vector3
from nav_msgs.msg import OccupancyGrid
from sg_search_interfaces.msg import Box3D as Box3DMsg
from sg_search_interfaces.msg import (
    FrontierArray,
    ObjectObservation,
    ObjectObservationArray,
    SceneGraphUpdate,
)
from sg_search_interfaces.msg import (
    SceneEdge as SceneEdgeMsg,
)
from sg_search_interfaces.msg import (
    SceneNode as SceneNodeMsg,
)
from std_msgs.msg import Header

from sg_search.mapping.grid import GridSpec
from sg_search.scene_graph import (
    Affordance,
    Box3D,
    EdgeKind,
    EdgeOrigin,
    GraphUpdate,
    Layer,
    NodeState,
    SceneEdge,
    SceneNode,
)
from sg_search.scene_graph.frontier_nodes import FrontierObservation
from sg_search.scene_graph.fronts import Front
from sg_search.scene_graph.model import Vec3
from sg_search.scene_graph.observations import ObjectInstance

_ZERO_BOX = Box3DMsg()
E = TypeVar("E", bound=Enum)


def point_to_msg(p: Vec3) -> Point:
    """(x, y, z) [m] -> geometry_msgs/Point."""
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def point_from_msg(p: Point) -> Vec3:
    """geometry_msgs/Point -> (x, y, z) [m]."""
    return (float(p.x), float(p.y), float(p.z))


def fronts_to_msg(fronts: Sequence[Front]) -> list[float]:
    """Container sides (x, y unit vectors in ``map``) -> a flat float32[] (x0, y0, x1, y1, ...)."""
    return [float(v) for front in fronts for v in front]


def fronts_from_msg(values: Sequence[float], field: str) -> tuple[Front, ...]:
    """A flat float32[] ``field`` -> container sides (x, y); ValueError naming the field if
    its length is odd."""
    flat = [float(v) for v in values]
    if len(flat) % 2:
        raise ValueError(f"{field} has an odd length ({len(flat)})")
    return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))


def box_to_msg(box: Box3D | None) -> Box3DMsg:
    """Box3D (None = unknown extent) -> message (all-zero size = unknown)."""
    if box is None:
        return Box3DMsg()
    return Box3DMsg(
        center=point_to_msg(box.center),
        size=Vector3(x=float(box.size[0]), y=float(box.size[1]), z=float(box.size[2])),
    )


def box_from_msg(msg: Box3DMsg) -> Box3D | None:
    """Message -> Box3D; None when the size is all zero (unknown)."""
    size = (float(msg.size.x), float(msg.size.y), float(msg.size.z))
    if not any(size):
        return None
    return Box3D(point_from_msg(msg.center), size)


def node_to_msg(node: SceneNode) -> SceneNodeMsg:
    """Core node -> SceneNode message."""
    return SceneNodeMsg(
        id=node.id,
        layer=int(node.layer),
        kind=node.kind,
        category=node.category,
        position=point_to_msg(node.position),
        bbox=box_to_msg(node.bbox),
        confidence=float(node.confidence),
        parent_id=node.parent_id,
        room_id=node.room_id,
        affordances=int(node.affordances),
        state=int(node.state),
        observation_count=int(node.observation_count),
        frame_ids=[int(f) for f in node.frame_ids],
    )


def node_from_msg(msg: SceneNodeMsg) -> SceneNode:
    """SceneNode message -> core node (validated; ValueError names the node and the field)."""
    where = f"SceneNode {msg.id!r}"
    return SceneNode(
        id=msg.id,
        layer=_enum(Layer, msg.layer, f"{where}: layer"),
        kind=msg.kind,
        category=msg.category,
        position=point_from_msg(msg.position),
        bbox=box_from_msg(msg.bbox),
        confidence=float(msg.confidence),
        parent_id=msg.parent_id,
        room_id=msg.room_id,
        affordances=_enum(Affordance, msg.affordances, f"{where}: affordances"),
        state=_enum(NodeState, msg.state, f"{where}: state"),
        observation_count=int(msg.observation_count),
        frame_ids=tuple(int(f) for f in msg.frame_ids),
    )


def edge_to_msg(edge: SceneEdge) -> SceneEdgeMsg:
    """Core edge -> SceneEdge message."""
    return SceneEdgeMsg(
        source=edge.source,
        target=edge.target,
        kind=int(edge.kind),
        relation=edge.relation,
        origin=int(edge.origin),
        confidence=float(edge.confidence),
        frame_ids=[int(f) for f in edge.frame_ids],
    )


def edge_from_msg(msg: SceneEdgeMsg) -> SceneEdge:
    """SceneEdge message -> core edge (validated; ValueError names the edge and the field)."""
    where = f"SceneEdge {(msg.source, msg.target, msg.relation)}"
    return SceneEdge(
        source=msg.source,
        target=msg.target,
        kind=_enum(EdgeKind, msg.kind, f"{where}: kind"),
        relation=msg.relation,
        origin=_enum(EdgeOrigin, msg.origin, f"{where}: origin"),
        confidence=float(msg.confidence),
        frame_ids=tuple(int(f) for f in msg.frame_ids),
    )


def _enum(cls: type[E], value: int, where: str) -> E:
    try:
        return cls(int(value))
    except ValueError:
        raise ValueError(f"{where} {value} is not one of {[m.value for m in cls]}") from None


def update_to_msg(update: GraphUpdate, header: Header) -> SceneGraphUpdate:
    """Core update -> SceneGraphUpdate message with the given header (frame ``map``)."""
    return SceneGraphUpdate(
        header=header,
        sequence=update.sequence,
        base_sequence=update.base_sequence,
        is_full=update.is_full,
        nodes=[node_to_msg(n) for n in update.nodes],
        edges=[edge_to_msg(e) for e in update.edges],
        removed_node_ids=list(update.removed_node_ids),
        removed_edges=[SceneEdgeMsg(source=s, target=t, relation=r) for s, t, r in update.removed_edges],
    )


def update_from_msg(msg: SceneGraphUpdate) -> GraphUpdate:
    """SceneGraphUpdate message -> core update."""
    return GraphUpdate(
        sequence=int(msg.sequence),
        base_sequence=int(msg.base_sequence),
        is_full=bool(msg.is_full),
        nodes=tuple(node_from_msg(n) for n in msg.nodes),
        edges=tuple(edge_from_msg(e) for e in msg.edges),
        removed_node_ids=tuple(msg.removed_node_ids),
        removed_edges=tuple((e.source, e.target, e.relation) for e in msg.removed_edges),
    )


def frontiers_from_msg(msg: FrontierArray) -> list[FrontierObservation]:
    """The planner's frontier segments -> core frontier observations."""
    return [
        FrontierObservation(
            f.id, point_from_msg(f.centroid), point_from_msg(f.goal), int(f.size), float(f.length)
        )
        for f in msg.frontiers
    ]


def instances_from_msg(msg: ObjectObservationArray) -> list[ObjectInstance]:
    """Perception's observations -> core instances (positions in ``msg.header.frame_id``)."""
    return [
        ObjectInstance(
            instance_id=o.instance_id,
            category=o.category,
            confidence=float(o.confidence),
            centroid=point_from_msg(o.centroid),
            bbox=box_from_msg(o.bbox),
            observation_count=max(1, int(o.observation_count)),
        )
        for o in msg.observations
    ]


def instances_to_msg(
    instances: Sequence[ObjectInstance], header: Header, frame_index: int, removed: Sequence[str] = ()
) -> ObjectObservationArray:
    """Core instances -> ObjectObservationArray (for replay and tests)."""
    return ObjectObservationArray(
        header=header,
        frame_index=int(frame_index),
        observations=[
            ObjectObservation(
                instance_id=i.instance_id,
                category=i.category,
                confidence=float(i.confidence),
                centroid=point_to_msg(i.centroid),
                bbox=box_to_msg(i.bbox),
                observation_count=int(i.observation_count),
            )
            for i in instances
        ],
        removed_instance_ids=list(removed),
    )


def grid_from_msg(msg: OccupancyGrid) -> tuple[GridSpec, np.ndarray]:
    """An OccupancyGrid's geometry and its cells as a (height, width) int8 array; ValueError
    naming the field when the message cannot be a map (sizes that disagree with the data, a
    resolution that is not a positive finite number, an origin that is not finite)."""
    info = msg.info
    if not (math.isfinite(info.resolution) and info.resolution > 0):
        raise ValueError(f"info.resolution must be a positive number of metres, got {info.resolution}")
    if info.width <= 0 or info.height <= 0:
        raise ValueError(f"info.width x info.height must be positive, got {info.width} x {info.height}")
    origin = info.origin.position
    if not (math.isfinite(origin.x) and math.isfinite(origin.y)):
        raise ValueError(f"info.origin.position must be finite, got ({origin.x}, {origin.y})")
    if len(msg.data) != info.width * info.height:
        raise ValueError(
            f"data has {len(msg.data)} cells, info.width x info.height = {info.width} x {info.height}"
        )
    spec = GridSpec(info.resolution, info.width, info.height, origin.x, origin.y)
    return spec, np.asarray(msg.data, dtype=np.int8).reshape(info.height, info.width)
