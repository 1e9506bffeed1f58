"""SG-Nav groups: objects of related categories standing close together in one room.

Two objects are linked when their categories form a related pair (data file
``sg_search/data/related_categories.yaml`` or your own) and their centroids are at most
``radius`` metres apart (horizontal distance, ``map`` frame) in the same room. A group is
a connected component of at least two linked objects; it is a GROUP-layer node whose
parent is the room and that has GROUP edges to its members.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from pathlib import Path

import networkx as nx
import numpy as np

from sg_search.config import read_yaml
from sg_search.perception.categories import normalise_category
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import EdgeKind, EdgeOrigin, Layer, SceneEdge, SceneNode

RelatedPairs = frozenset[frozenset[str]]


def load_related_pairs(path: Path | str | None = None) -> RelatedPairs:
    """Related category pairs from a YAML file (``pairs: [[a, b], ...]``); the shipped list by default."""
    if path:
        text = Path(path).read_text()
        where = str(path)
    else:
        text = resources.files("sg_search.data").joinpath("related_categories.yaml").read_text()
        where = "related_categories.yaml"
    pairs = (read_yaml(text) or {}).get("pairs")
    if not isinstance(pairs, list):
        raise ValueError(f"{where}: needs a list 'pairs' of [category, category]")
    out = set()
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2):
            raise ValueError(f"{where}: pairs[{i}] must be two categories, got {pair!r}")
        out.add(frozenset(normalise_category(str(c)) for c in pair))
    return frozenset(out)


def group_id(members: Iterable[str]) -> str:
    """Stable id of a group: derived from its smallest member id."""
    return f"group_{min(members)}"


def update_groups(
    graph: SceneGraph, related: RelatedPairs, radius: float = 1.5, rooms: Iterable[str] | None = None
) -> None:
    """Recompute the groups of ``rooms`` (default: every room); unchanged groups are not touched."""
    room_ids = sorted(set(rooms)) if rooms is not None else [r.id for r in graph.nodes(layer=Layer.ROOM)]
    room_ids = [r for r in room_ids if r]
    links = nx.Graph()
    for room_id in room_ids:
        members = graph.nodes_in_room(room_id, Layer.OBJECT)
        if len(members) < 2:
            continue
        xy = np.array([m.position[:2] for m in members])
        close = np.sum((xy[:, None, :] - xy[None, :, :]) ** 2, axis=2) <= radius**2
        for i, j in zip(*np.nonzero(np.triu(close, k=1)), strict=True):
            a, b = members[i], members[j]
            if a.category != b.category and frozenset((a.category, b.category)) in related:
                links.add_edge(a.id, b.id)
    wanted = {group_id(c): sorted(c) for c in nx.connected_components(links) if len(c) >= 2}
    with graph.transaction():
        for room_id in room_ids:
            for old in graph.nodes_in_room(room_id, Layer.GROUP):
                if old.id not in wanted:
                    graph.remove_node(old.id)
        for gid, member_ids in wanted.items():
            members = [graph.node(m) for m in member_ids]
            _write_group(graph, gid, members)


def _write_group(graph: SceneGraph, gid: str, members: list[SceneNode]) -> None:
    room = members[0].room_id
    xs, ys, zs = zip(*(m.position for m in members), strict=True)
    node = SceneNode(
        id=gid,
        layer=Layer.GROUP,
        kind="group",
        category=" + ".join(sorted({m.category for m in members})),
        position=(sum(xs) / len(xs), sum(ys) / len(ys), sum(zs) / len(zs)),
        confidence=min(m.confidence for m in members),
        parent_id=room,
        room_id=room,
    )
    graph.upsert_node(node)
    current = {e.target for e in graph.edges_of(gid) if e.kind == EdgeKind.GROUP and e.source == gid}
    for stale in current - {m.id for m in members}:
        graph.remove_edge((gid, stale, "has member"))
    for member in members:
        graph.upsert_edge(SceneEdge(gid, member.id, EdgeKind.GROUP, "has member", EdgeOrigin.GEOMETRY))
