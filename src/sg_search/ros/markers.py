"""rviz MarkerArray of the scene graph, with namespaces rviz can toggle:
``rooms`` (flat floor patches), ``objects`` (boxes coloured by layer/state), ``edges``
(lines: hierarchy grey, spatial blue, doors green, groups orange), ``labels`` (text).
All markers are in the graph's frame (``map``); ids are stable per node/edge.
"""

from __future__ import annotations

import zlib

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from sg_search.scene_graph import EdgeKind, Layer, NodeState, SceneGraph, SceneNode

ROOM_FLOOR_HEIGHT = 0.02  # [m] thickness of a room's floor patch
DEFAULT_OBJECT_SIZE = 0.15  # [m] cube edge for objects without a box
LABEL_HEIGHT = 0.15  # [m] text size
LABEL_LIFT = 0.25  # [m] text above the node

_STATE_COLOURS = {
    NodeState.CLOSED: (0.85, 0.3, 0.2, 0.8),
    NodeState.OPEN: (0.3, 0.8, 0.3, 0.8),
    NodeState.EXPLORED: (0.5, 0.5, 0.5, 0.6),
    NodeState.UNEXPLORED: (0.9, 0.8, 0.2, 0.6),
}
_EDGE_COLOURS = {
    EdgeKind.HIERARCHY: (0.6, 0.6, 0.6, 0.5),
    EdgeKind.SPATIAL: (0.2, 0.4, 0.9, 0.9),
    EdgeKind.ADJACENCY: (0.2, 0.8, 0.3, 0.9),
    EdgeKind.GROUP: (1.0, 0.6, 0.1, 0.9),
}


def _id(key: str) -> int:
    return zlib.crc32(key.encode()) & 0x7FFFFFFF


def _colour(rgba: tuple[float, float, float, float]) -> ColorRGBA:
    return ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])


def _point(p: tuple[float, float, float]) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def _node_colour(node: SceneNode) -> tuple[float, float, float, float]:
    if node.state in _STATE_COLOURS:
        return _STATE_COLOURS[node.state]
    return (0.2, 0.6, 0.9, 0.8) if node.layer == Layer.OBJECT else (0.8, 0.8, 0.8, 0.4)


def graph_markers(graph: SceneGraph, frame_id: str, stamp: Time) -> MarkerArray:
    """All markers of the graph; a leading DELETEALL clears what was drawn before."""
    header = Header(frame_id=frame_id, stamp=stamp)
    markers = [Marker(header=header, action=Marker.DELETEALL)]
    for node in graph.nodes():
        if node.layer not in (Layer.ROOM, Layer.OBJECT, Layer.REGION, Layer.GROUP):
            continue
        box = Marker(header=header, ns="rooms" if node.layer == Layer.ROOM else "objects", id=_id(node.id))
        box.type, box.action = Marker.CUBE, Marker.ADD
        box.pose.orientation.w = 1.0
        if node.bbox is not None and not node.bbox.empty:
            centre, size = node.bbox.center, node.bbox.size
        else:
            centre, size = node.position, (DEFAULT_OBJECT_SIZE,) * 3
        if node.layer == Layer.ROOM:
            centre, size = (centre[0], centre[1], 0.0), (size[0], size[1], ROOM_FLOOR_HEIGHT)
        box.pose.position = _point(centre)
        box.scale = Vector3(x=float(size[0]), y=float(size[1]), z=float(size[2]))
        box.color = _colour(_node_colour(node))
        markers.append(box)
        label = Marker(header=header, ns="labels", id=_id(node.id), type=Marker.TEXT_VIEW_FACING)
        label.pose.position = _point((node.position[0], node.position[1], node.position[2] + LABEL_LIFT))
        label.pose.orientation.w = 1.0
        label.scale.z = LABEL_HEIGHT
        label.color = _colour((1.0, 1.0, 1.0, 0.9))
        label.text = f"{node.category or node.kind} [{node.id}]"
        markers.append(label)
    for kind, rgba in _EDGE_COLOURS.items():
        lines = Marker(header=header, ns=f"edges/{kind.name.lower()}", id=int(kind), type=Marker.LINE_LIST)
        lines.pose.orientation.w = 1.0
        lines.scale.x = 0.02
        lines.color = _colour(rgba)
        for edge in graph.edges(kind):
            a, b = graph.node(edge.source), graph.node(edge.target)
            lines.points.extend([_point(a.position), _point(b.position)])
        if lines.points:
            markers.append(lines)
    return MarkerArray(markers=markers)
