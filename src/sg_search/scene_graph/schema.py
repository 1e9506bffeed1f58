"""The scene-graph schema, generated from the model so that it cannot drift from it.

:func:`schema_dict` is machine-readable; :func:`schema_yaml` and :func:`schema_text`
are what SG-RwR-style reasoners are given (the text form is prompt-ready).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from sg_search.scene_graph.model import (
    NODE_KINDS,
    Affordance,
    EdgeKind,
    EdgeOrigin,
    Layer,
    NodeState,
    SceneEdge,
    SceneNode,
)

FRAME = "map (REP 103/105): x, y horizontal, z up; all lengths in metres"

NODE_FIELD_DOCS = {
    "id": "unique, stable string id",
    "layer": "hierarchy level, one of layers",
    "kind": "one of node kinds",
    "category": "lower case, singular, space separated (e.g. 'coffee table'); '' if unknown",
    "position": "[x, y, z] in metres, map frame",
    "bbox": "axis-aligned box {center: [x, y, z], size: [dx, dy, dz]} in metres, or null",
    "confidence": "belief in the category, 0..1",
    "parent_id": "id of the parent in the hierarchy ('' for the root)",
    "room_id": "id of the room the node lies in ('' if unknown)",
    "affordances": "subset of affordances",
    "state": "one of states",
    "observation_count": "number of RGB-D frames that observed the node",
    "frame_ids": "indices of the most recent frames that saw the node",
}
EDGE_FIELD_DOCS = {
    "source": "node id",
    "target": "node id",
    "kind": "one of edge kinds",
    "relation": "word(s) saying how source relates to target",
    "origin": "who asserted it, one of edge origins",
    "confidence": "0..1",
    "frame_ids": "frames in which both ends were seen (MSGNav visual edge)",
}
EDGE_KIND_DOCS = {
    EdgeKind.HIERARCHY: "parent 'contains' child: building > room > object > nested object; room > group",
    EdgeKind.SPATIAL: "between objects: on, inside, next to, above, below, opposite to, facing, ...",
    EdgeKind.ADJACENCY: "room to room through a door (present in both directions)",
    EdgeKind.GROUP: "group 'has member' object",
}


def _names(enum: Any) -> list[str]:
    """Lower-case member names (without Affordance.NONE)."""
    return [str(m.name).lower() for m in enum if m.value or enum is not Affordance]


def schema_dict() -> dict[str, Any]:
    """Node and edge attributes (from the dataclasses), enumerations and their meaning."""
    node_fields = [f.name for f in dataclasses.fields(SceneNode)]
    edge_fields = [f.name for f in dataclasses.fields(SceneEdge)]
    missing = [f for f in node_fields if f not in NODE_FIELD_DOCS] + [
        f for f in edge_fields if f not in EDGE_FIELD_DOCS
    ]
    if missing:
        raise RuntimeError(f"schema has no description for fields {missing}")
    return {
        "frame": FRAME,
        "layers": _names(Layer),
        "node_kinds": list(NODE_KINDS),
        "affordances": _names(Affordance),
        "states": _names(NodeState),
        "node": {name: NODE_FIELD_DOCS[name] for name in node_fields},
        "edge": {name: EDGE_FIELD_DOCS[name] for name in edge_fields},
        "edge_kinds": {k.name.lower(): EDGE_KIND_DOCS[k] for k in EdgeKind},
        "edge_origins": _names(EdgeOrigin),
    }


def schema_yaml() -> str:
    """:func:`schema_dict` as YAML."""
    return yaml.safe_dump(schema_dict(), sort_keys=False)


def schema_text() -> str:
    """A prompt-ready description of the graph for LLM reasoners."""
    s = schema_dict()
    lines = [
        "The home is described by a hierarchical 3D scene graph.",
        f"Coordinates: {s['frame']}.",
        f"Layers, top to bottom: {', '.join(s['layers'])}.",
        f"Node kinds: {', '.join(s['node_kinds'])}.",
        "Every node has these attributes:",
        *(f"- {name}: {doc}" for name, doc in s["node"].items()),
        f"Affordances: {', '.join(s['affordances'])}. States: {', '.join(s['states'])}.",
        "Edges have: " + "; ".join(f"{name} ({doc})" for name, doc in s["edge"].items()) + ".",
        "Edge kinds:",
        *(f"- {name}: {doc}" for name, doc in s["edge_kinds"].items()),
    ]
    return "\n".join(lines)
