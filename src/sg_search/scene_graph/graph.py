"""The scene graph container: typed API over networkx, sequence numbers, incremental updates.

Every change bumps the graph's sequence number (one bump per :meth:`SceneGraph.transaction`),
and :meth:`SceneGraph.updates_since` returns what changed after a given sequence, in the
spirit of Hydra's DsgUpdate. A mirror (a reasoner in another process) applies those
updates with :meth:`SceneGraph.apply` and asks for a full snapshot when it detects a gap.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import networkx as nx

from sg_search.scene_graph.model import (
    EdgeKey,
    EdgeKind,
    GraphUpdate,
    Layer,
    SceneEdge,
    SceneNode,
)


class SequenceGapError(RuntimeError):
    """An incremental update does not start where the mirror is; ask for a full snapshot."""


class SceneGraph:
    """A hierarchical 3D scene graph with change tracking.

    Args:
        history_limit: how many sequence numbers of removals are remembered for
            incremental updates; older requests get a full snapshot.
        max_frame_ids: how many recent frame ids a node or edge keeps as evidence.
    """

    def __init__(self, history_limit: int = 10_000, max_frame_ids: int = 16) -> None:
        if history_limit < 1:
            raise ValueError("history_limit must be >= 1")
        self._graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self._sequence = 0
        self._transaction_sequence: int | None = None
        self._node_changed: dict[str, int] = {}
        self._edge_changed: dict[EdgeKey, int] = {}
        self._oldest_incremental = 0
        self._by_room: dict[str, dict[str, None]] = {}  # room id -> ids of nodes in it (ordered set)
        self._data: dict[str, SceneNode] = {}  # id -> node (faster than networkx's node views)
        self.history_limit = history_limit
        self.max_frame_ids = max_frame_ids

    # ------------------------------------------------------------------ reading
    @property
    def sequence(self) -> int:
        """Sequence number of the latest change (0 for an empty, never changed graph)."""
        return self._sequence

    def __len__(self) -> int:
        return int(self._graph.number_of_nodes())

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._graph

    def node(self, node_id: str) -> SceneNode:
        """The node with this id; ``KeyError`` naming the id if there is none."""
        try:
            return self._data[node_id]
        except KeyError:
            raise KeyError(f"scene graph has no node {node_id!r}") from None

    def get(self, node_id: str) -> SceneNode | None:
        """The node with this id, or None."""
        return self._data.get(node_id)

    def nodes(self, layer: Layer | None = None, kind: str | None = None) -> list[SceneNode]:
        """All nodes, optionally of one layer and/or kind, in insertion order."""
        return [
            n
            for n in self._data.values()
            if (layer is None or n.layer == layer) and (kind is None or n.kind == kind)
        ]

    def rooms(self) -> list[SceneNode]:
        """All room nodes (indexed: rooms are among the few nodes that lie in no room)."""
        return [n for n in self.nodes_in_room("") if n.layer == Layer.ROOM]

    def nodes_in_room(self, room_id: str, layer: Layer | None = None) -> list[SceneNode]:
        """Nodes whose ``room_id`` is ``room_id`` (indexed: cost grows with the room, not the house)."""
        out = [self._data[i] for i in self._by_room.get(room_id, ())]
        return out if layer is None else [n for n in out if n.layer == layer]

    def _store(self, node: SceneNode) -> None:
        old = self.get(node.id)
        if old is not None and old.room_id != node.room_id:
            self._by_room.get(old.room_id, {}).pop(node.id, None)
        self._graph.add_node(node.id)
        self._data[node.id] = node
        self._by_room.setdefault(node.room_id, {})[node.id] = None

    def _drop(self, node_id: str) -> None:
        node = self.get(node_id)
        if node is not None:
            self._by_room.get(node.room_id, {}).pop(node_id, None)
            self._graph.remove_node(node_id)
            del self._data[node_id]

    def edges(self, kind: EdgeKind | None = None) -> list[SceneEdge]:
        """All edges, optionally of one kind."""
        return [
            d["data"] for _, _, d in self._graph.edges(data=True) if kind is None or d["data"].kind == kind
        ]

    def get_edge(self, key: EdgeKey) -> SceneEdge | None:
        """The edge with this (source, target, relation), or None."""
        data = self._graph.get_edge_data(key[0], key[1], key=key[2])
        return None if data is None else data["data"]  # type: ignore[no-any-return]

    def edges_of(self, node_id: str) -> list[SceneEdge]:
        """Edges that start or end at ``node_id``."""
        if node_id not in self._graph:
            return []
        out = [d["data"] for _, _, d in self._graph.out_edges(node_id, data=True)]
        out += [d["data"] for _, _, d in self._graph.in_edges(node_id, data=True)]
        return out

    def children(self, node_id: str) -> list[SceneNode]:
        """Nodes whose ``parent_id`` is ``node_id`` (hierarchy edges)."""
        return [
            self.node(target)
            for _, target, d in self._graph.out_edges(node_id, data=True)
            if d["data"].kind == EdgeKind.HIERARCHY
        ]

    # ------------------------------------------------------------------ writing
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group changes so that they share one sequence number (one per frame, say)."""
        if self._transaction_sequence is not None:
            yield
            return
        self._transaction_sequence = self._sequence + 1
        try:
            yield
        finally:
            self._transaction_sequence = None

    def _touch(self) -> int:
        if self._transaction_sequence is not None:
            self._sequence = self._transaction_sequence
        else:
            self._sequence += 1
        return self._sequence

    def upsert_node(self, node: SceneNode) -> bool:
        """Add or replace a node; return True if anything changed.

        A node with a ``parent_id`` gets a hierarchy edge from its parent, which must exist.
        """
        if len(node.frame_ids) > self.max_frame_ids:
            raise ValueError(
                f"node {node.id!r} carries {len(node.frame_ids)} frame ids; the graph keeps "
                f"at most {self.max_frame_ids} (trim before upserting)"
            )
        if node.parent_id and node.parent_id not in self._graph:
            raise KeyError(f"node {node.id!r}: parent {node.parent_id!r} is not in the graph")
        if node.parent_id == node.id:
            raise ValueError(f"node {node.id!r} cannot be its own parent")
        old = self.get(node.id)
        if old == node:
            return False
        seq = self._touch()
        self._store(node)
        self._node_changed[node.id] = seq
        if old is not None and old.parent_id and old.parent_id != node.parent_id:
            self.remove_edge((old.parent_id, node.id, "contains"))
        if node.parent_id:
            self.upsert_edge(SceneEdge(node.parent_id, node.id, EdgeKind.HIERARCHY, "contains"))
        return True

    def remove_node(self, node_id: str) -> bool:
        """Remove a node, its edges and (recursively) its children; return False if absent."""
        if node_id not in self._graph:
            return False
        for child in self.children(node_id):
            self.remove_node(child.id)
        seq = self._touch()
        for edge in self.edges_of(node_id):
            self._edge_changed[edge.key] = seq
        self._drop(node_id)
        self._node_changed[node_id] = seq
        return True

    def upsert_edge(self, edge: SceneEdge) -> bool:
        """Add or replace an edge between existing nodes; return True if anything changed."""
        for end in (edge.source, edge.target):
            if end not in self._graph:
                raise KeyError(f"edge {edge.key}: node {end!r} is not in the graph")
        if edge.source == edge.target:
            raise ValueError(f"edge {edge.key} is a self-loop")
        data = self._graph.get_edge_data(edge.source, edge.target, key=edge.relation)
        if data is not None and data["data"] == edge:
            return False
        seq = self._touch()
        self._graph.add_edge(edge.source, edge.target, key=edge.relation, data=edge)
        self._edge_changed[edge.key] = seq
        return True

    def remove_edge(self, key: EdgeKey) -> bool:
        """Remove the edge with this (source, target, relation); return False if absent."""
        source, target, relation = key
        if not self._graph.has_edge(source, target, key=relation):
            return False
        seq = self._touch()
        self._graph.remove_edge(source, target, key=relation)
        self._edge_changed[key] = seq
        return True

    # ------------------------------------------------------------------ updates
    def snapshot(self) -> GraphUpdate:
        """The whole graph as a full update."""
        return GraphUpdate(
            sequence=self._sequence,
            base_sequence=0,
            is_full=True,
            nodes=tuple(self.nodes()),
            edges=tuple(self.edges()),
        )

    def updates_since(self, sequence: int) -> GraphUpdate:
        """Changes after ``sequence``; a full snapshot if that is 0 or too old to answer."""
        self._forget_old_removals()
        if sequence <= 0 or sequence < self._oldest_incremental or sequence > self._sequence:
            return self.snapshot()
        nodes, removed_nodes = [], []
        for node_id, seq in self._node_changed.items():
            if seq > sequence:
                node = self.get(node_id)
                if node is None:
                    removed_nodes.append(node_id)
                else:
                    nodes.append(node)
        edges, removed_edges = [], []
        for key, seq in self._edge_changed.items():
            if seq > sequence:
                data = self._graph.get_edge_data(key[0], key[1], key=key[2])
                if data is None:
                    removed_edges.append(key)
                else:
                    edges.append(data["data"])
        return GraphUpdate(
            sequence=self._sequence,
            base_sequence=sequence,
            is_full=False,
            nodes=tuple(nodes),
            edges=tuple(edges),
            removed_node_ids=tuple(removed_nodes),
            removed_edges=tuple(removed_edges),
        )

    def _forget_old_removals(self) -> None:
        """Drop tombstones older than ``history_limit`` sequences (bounded memory)."""
        horizon = self._sequence - self.history_limit
        if horizon <= self._oldest_incremental:
            return
        self._node_changed = {k: s for k, s in self._node_changed.items() if s > horizon or k in self._graph}
        self._edge_changed = {
            k: s
            for k, s in self._edge_changed.items()
            if s > horizon or self._graph.has_edge(k[0], k[1], key=k[2])
        }
        self._oldest_incremental = horizon

    def apply(self, update: GraphUpdate) -> bool:
        """Apply an update from another graph (a mirror); return False if it was stale.

        Raises :class:`SequenceGapError` when an incremental update does not start at this
        graph's sequence; the caller should then request a full snapshot.
        """
        if update.is_full:
            self._graph.clear()
            self._by_room.clear()
            self._data.clear()
            self._node_changed.clear()
            self._edge_changed.clear()
            self._sequence = update.sequence
            self._oldest_incremental = update.sequence
            self._add_all(update.nodes, update.edges, update.sequence)
            return True
        if update.sequence <= self._sequence:
            return False
        if update.base_sequence != self._sequence:
            raise SequenceGapError(
                f"update {update.base_sequence}->{update.sequence} does not apply at {self._sequence}"
            )
        for key in update.removed_edges:
            if self._graph.has_edge(key[0], key[1], key=key[2]):
                self._graph.remove_edge(key[0], key[1], key=key[2])
            self._edge_changed[key] = update.sequence
        for node_id in update.removed_node_ids:
            self._drop(node_id)
            self._node_changed[node_id] = update.sequence
        self._add_all(update.nodes, update.edges, update.sequence)
        self._sequence = update.sequence
        return True

    def _add_all(self, nodes: Iterable[SceneNode], edges: Iterable[SceneEdge], seq: int) -> None:
        for node in nodes:
            self._store(node)
            self._node_changed[node.id] = seq
        for edge in edges:
            if edge.source in self._graph and edge.target in self._graph:
                self._graph.add_edge(edge.source, edge.target, key=edge.relation, data=edge)
                self._edge_changed[edge.key] = seq
