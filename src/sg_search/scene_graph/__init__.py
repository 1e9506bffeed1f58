"""The hierarchical 3D scene graph: typed nodes and edges, sequence-numbered updates.

Layers: root -> building -> room -> region/frontier -> object/container -> nested object,
with SG-Nav groups aside. Positions are in the ``map`` frame, metres.
"""

from sg_search.scene_graph.graph import SceneGraph, SequenceGapError
from sg_search.scene_graph.model import (
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

__all__ = [
    "Affordance",
    "Box3D",
    "EdgeKind",
    "EdgeOrigin",
    "GraphUpdate",
    "Layer",
    "NodeState",
    "SceneEdge",
    "SceneGraph",
    "SceneNode",
    "SequenceGapError",
]
