"""Value types of the scene graph. Positions and boxes: ``map`` frame, metres.

The integer values of the enums equal the constants of the ROS messages in
``sg_search_interfaces`` (SceneNode, SceneEdge), so conversion is a cast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

from sg_search.geometry.box import Box3D as Box3D  # re-exported: the graph's nodes carry them
from sg_search.geometry.box import Vec3 as Vec3
from sg_search.geometry.box import _vec3


class Layer(IntEnum):
    """Hierarchy level of a node."""

    ROOT = 0
    BUILDING = 1
    ROOM = 2
    REGION = 3
    OBJECT = 4
    GROUP = 5


class Affordance(IntFlag):
    """What the robot can do with a node (bit mask)."""

    NONE = 0
    NAVIGABLE = 1
    OPENABLE = 2
    INSPECTABLE = 4
    SURFACE = 8
    RECEPTACLE = 16


class NodeState(IntEnum):
    """Exploration state of a node."""

    UNKNOWN = 0
    CLOSED = 1
    OPEN = 2
    EXPLORED = 3
    UNEXPLORED = 4


class EdgeKind(IntEnum):
    """What an edge means."""

    HIERARCHY = 0
    SPATIAL = 1
    ADJACENCY = 2
    GROUP = 3


class EdgeOrigin(IntEnum):
    """Who asserted an edge."""

    GEOMETRY = 0
    LLM = 1
    VLM = 2
    PRIOR = 3


NODE_KINDS = ("root", "building", "room", "region", "frontier", "door", "object", "container", "group")


@dataclass(frozen=True)
class SceneNode:
    """One node. Immutable: changing a node means upserting a new value.

    ``frame_ids`` holds the most recent RGB-D frame indices that saw the node (bounded by
    the graph), the evidence MSGNav's visual edges and VLM checks need.
    """

    id: str
    layer: Layer
    kind: str
    category: str = ""
    position: Vec3 = (0.0, 0.0, 0.0)
    bbox: Box3D | None = None
    confidence: float = 1.0
    parent_id: str = ""
    room_id: str = ""
    affordances: Affordance = Affordance.NONE
    state: NodeState = NodeState.UNKNOWN
    observation_count: int = 0
    frame_ids: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("SceneNode.id must not be empty")
        object.__setattr__(self, "position", _vec3(self.position, f"SceneNode {self.id!r} position"))
        object.__setattr__(self, "confidence", float(self.confidence))
        if self.kind not in NODE_KINDS:
            raise ValueError(f"SceneNode {self.id!r}: kind {self.kind!r} is not one of {NODE_KINDS}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"SceneNode {self.id!r}: confidence {self.confidence} not in [0, 1]")
        if any(v != v for v in self.position):  # NaN check without numpy
            raise ValueError(f"SceneNode {self.id!r}: position {self.position} has NaN")


EdgeKey = tuple[str, str, str]


@dataclass(frozen=True)
class SceneEdge:
    """A directed edge ``source -> target`` with a ``relation`` word."""

    source: str
    target: str
    kind: EdgeKind
    relation: str
    origin: EdgeOrigin = EdgeOrigin.GEOMETRY
    confidence: float = 1.0
    frame_ids: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.source or not self.target:
            raise ValueError(f"SceneEdge {self.key}: source and target must not be empty")
        object.__setattr__(self, "confidence", float(self.confidence))
        if not 0.0 <= self.confidence <= 1.0:  # NaN fails too
            raise ValueError(f"SceneEdge {self.key}: confidence {self.confidence} not in [0, 1]")

    @property
    def key(self) -> EdgeKey:
        """Identity of the edge: two edges with the same key are the same edge."""
        return (self.source, self.target, self.relation)


@dataclass(frozen=True)
class GraphUpdate:
    """Changes that take a graph from ``base_sequence`` to ``sequence`` (or all of it)."""

    sequence: int
    base_sequence: int
    is_full: bool
    nodes: tuple[SceneNode, ...] = ()
    edges: tuple[SceneEdge, ...] = ()
    removed_node_ids: tuple[str, ...] = ()
    removed_edges: tuple[EdgeKey, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the update changes nothing."""
        return not (self.is_full or self.nodes or self.edges or self.removed_node_ids or self.removed_edges)
