"""The scene-graph schema as text: what SG-RwR-style reasoners are told about the graph."""

from __future__ import annotations

import yaml

from sg_search.scene_graph.model import NODE_KINDS, Affordance, EdgeKind, EdgeOrigin, Layer, NodeState


def schema_yaml() -> str:
    """Node kinds and attributes (with units and frames), edge kinds and their meaning."""
    schema = {
        "frame": "map (REP 105): x forward/east, y left/north, z up; metres",
        "layers": [layer.name.lower() for layer in Layer],
        "node": {
            "id": "string, unique and stable",
            "layer": "one of layers",
            "kind": list(NODE_KINDS),
            "category": "lower case, singular, space separated (e.g. 'coffee table')",
            "position": "[x, y, z] metres in map",
            "bbox": "axis-aligned box: center [x, y, z], size [dx, dy, dz], metres",
            "confidence": "belief in the category, 0..1",
            "parent_id": "parent in the hierarchy",
            "room_id": "room the node lies in, '' if unknown",
            "affordances": [str(a.name).lower() for a in Affordance if a],
            "state": [s.name.lower() for s in NodeState],
            "observation_count": "RGB-D frames that observed the node",
        },
        "edge": {
            "kinds": {
                EdgeKind.HIERARCHY.name.lower(): "parent contains child (building>room>object>nested object)",
                EdgeKind.SPATIAL.name.lower(): "object relation: on, inside, next to, above, below, facing",
                EdgeKind.ADJACENCY.name.lower(): "rooms connected by a door (both directions)",
                EdgeKind.GROUP.name.lower(): "group has member object",
            },
            "origins": [o.name.lower() for o in EdgeOrigin],
        },
    }
    return yaml.safe_dump(schema, sort_keys=False)
