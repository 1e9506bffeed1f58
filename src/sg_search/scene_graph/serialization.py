"""Scene graph <-> plain JSON-able data, and atomic snapshot files.

The file format is versioned (``FORMAT``/``VERSION``); a snapshot written, loaded and
written again is byte-identical (sorted keys, floats in Python's shortest round-trip form).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.invariants import violations
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

FORMAT = "sg_search.scene_graph"
VERSION = 1


class SnapshotError(ValueError):
    """A snapshot file cannot be read; the message names the file and the problem."""


def node_to_dict(node: SceneNode) -> dict[str, Any]:
    """A node as JSON-able data (enums by name)."""
    return {
        "id": node.id,
        "layer": node.layer.name.lower(),
        "kind": node.kind,
        "category": node.category,
        "position": list(node.position),
        "bbox": None
        if node.bbox is None
        else {"center": list(node.bbox.center), "size": list(node.bbox.size)},
        "confidence": node.confidence,
        "parent_id": node.parent_id,
        "room_id": node.room_id,
        "affordances": [str(a.name).lower() for a in Affordance if a and a in node.affordances],
        "state": node.state.name.lower(),
        "observation_count": node.observation_count,
        "frame_ids": list(node.frame_ids),
    }


def node_from_dict(data: dict[str, Any]) -> SceneNode:
    """Inverse of :func:`node_to_dict`; KeyError/ValueError on malformed data."""
    affordances = Affordance.NONE
    for name in data["affordances"]:
        affordances |= Affordance[name.upper()]
    bbox = data["bbox"]
    return SceneNode(
        id=data["id"],
        layer=Layer[data["layer"].upper()],
        kind=data["kind"],
        category=data["category"],
        position=tuple(float(v) for v in data["position"]),  # type: ignore[arg-type]
        bbox=None if bbox is None else Box3D(tuple(bbox["center"]), tuple(bbox["size"])),  # type: ignore[arg-type]
        confidence=float(data["confidence"]),
        parent_id=data["parent_id"],
        room_id=data["room_id"],
        affordances=affordances,
        state=NodeState[data["state"].upper()],
        observation_count=int(data["observation_count"]),
        frame_ids=tuple(int(f) for f in data["frame_ids"]),
    )


def edge_to_dict(edge: SceneEdge) -> dict[str, Any]:
    """An edge as JSON-able data."""
    return {
        "source": edge.source,
        "target": edge.target,
        "kind": edge.kind.name.lower(),
        "relation": edge.relation,
        "origin": edge.origin.name.lower(),
        "confidence": edge.confidence,
        "frame_ids": list(edge.frame_ids),
    }


def edge_from_dict(data: dict[str, Any]) -> SceneEdge:
    """Inverse of :func:`edge_to_dict`."""
    return SceneEdge(
        source=data["source"],
        target=data["target"],
        kind=EdgeKind[data["kind"].upper()],
        relation=data["relation"],
        origin=EdgeOrigin[data["origin"].upper()],
        confidence=float(data["confidence"]),
        frame_ids=tuple(int(f) for f in data["frame_ids"]),
    )


def graph_to_dict(graph: SceneGraph | GraphUpdate) -> dict[str, Any]:
    """The whole graph (or a full snapshot of it) with its sequence number, format and version."""
    snapshot = graph.snapshot() if isinstance(graph, SceneGraph) else graph
    if not snapshot.is_full:
        raise ValueError("graph_to_dict needs a full snapshot, not an incremental update")
    return {
        "format": FORMAT,
        "version": VERSION,
        "sequence": snapshot.sequence,
        "nodes": [node_to_dict(n) for n in snapshot.nodes],
        "edges": [edge_to_dict(e) for e in snapshot.edges],
    }


def graph_from_dict(data: dict[str, Any], graph: SceneGraph | None = None) -> SceneGraph:
    """Load :func:`graph_to_dict` output (replacing the content of ``graph`` if given)."""
    if data.get("format") != FORMAT:
        raise SnapshotError(f"not a scene graph snapshot (format {data.get('format')!r})")
    if data.get("version") != VERSION:
        raise SnapshotError(f"snapshot version {data.get('version')!r}; this build reads {VERSION}")
    try:
        nodes = tuple(node_from_dict(n) for n in data["nodes"])
        edges = tuple(edge_from_dict(e) for e in data["edges"])
        sequence = int(data["sequence"])
    except (KeyError, ValueError, TypeError) as exc:
        raise SnapshotError(f"malformed snapshot: {exc!r}") from None
    full = GraphUpdate(sequence=sequence, base_sequence=0, is_full=True, nodes=nodes, edges=edges)
    candidate = SceneGraph()
    candidate.apply(full)
    problems = violations(candidate)
    if problems:
        raise SnapshotError(f"inconsistent snapshot: {problems[0]} (and {len(problems) - 1} more)")
    target = graph if graph is not None else candidate
    if target is not candidate:
        target.apply(full)
    return target


def dumps(graph: SceneGraph | GraphUpdate) -> str:
    """Deterministic JSON text of the graph."""
    return json.dumps(graph_to_dict(graph), sort_keys=True, indent=1) + "\n"


def save_snapshot(graph: SceneGraph | GraphUpdate, path: Path | str) -> None:
    """Write the graph (or a full snapshot taken earlier, e.g. under a lock) to ``path``
    atomically: temp file in the same folder, fsync, rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dumps(graph)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_snapshot(path: Path | str, graph: SceneGraph | None = None) -> SceneGraph:
    """Read a snapshot written by :func:`save_snapshot`."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise SnapshotError(f"cannot read snapshot {path}: {exc}") from None
    try:
        return graph_from_dict(data, graph)
    except SnapshotError as exc:
        raise SnapshotError(f"{path}: {exc}") from None
