"""Everything one perception frame does to the graph, as one sequence-number bump.

instances -> object nodes (room, container) -> geometric relations of what changed ->
groups -> (optionally) one batched LLM call proposing long-range edges for new objects.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from sg_search.scene_graph.frontier_nodes import FrontierObservation, integrate_frontiers
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.groups import RelatedPairs, update_groups
from sg_search.scene_graph.model import EdgeKey, Layer, SceneEdge, SceneNode, Vec3
from sg_search.scene_graph.observations import (
    IntegrationParams,
    IntegrationResult,
    ObjectInstance,
    integrate_instances,
)
from sg_search.scene_graph.relations import (
    EdgeProposer,
    LongEdgeStats,
    ObstructionCheck,
    RelationParams,
    ShortEdgeStats,
    ShortEdgeVerifier,
    add_long_edges,
    edge_proposal_prompt,
    long_edge_pairs,
    update_geometric_relations,
    verify_short_edges,
)


@dataclass(frozen=True)
class BuilderParams:
    """Parameters of every stage; ``group_radius`` and ``min_move`` in metres."""

    integration: IntegrationParams = field(default_factory=IntegrationParams)
    relations: RelationParams = field(default_factory=RelationParams)
    group_radius: float = 1.5
    min_move: float = 0.05


class SceneGraphBuilder:
    """Feeds perception frames into a graph.

    Derived structure follows the objects with hysteresis: an object's relations and groups
    are recomputed when it is new, removed, re-categorised or has moved more than
    ``min_move`` metres since they were last computed (fused centroids jitter by a few cm
    from frame to frame; recomputing on jitter only churns the graph).

    Long-range edges are not proposed inside :meth:`integrate`: an LLM call takes seconds
    and must not hold up perception. New objects queue up and :meth:`propose_pending`
    (called by the LLM client's host, off the perception path) sends ONE batched prompt for
    all of them.

    Args:
        graph: the graph to grow (owned by the caller, e.g. the ROS server).
        related: category pairs that form groups.
        proposer: optional LLM edge proposer.
        is_unobstructed: optional line-of-sight check on the occupancy map.
        verifier: optional VLM check of new short-range relations.
    """

    def __init__(
        self,
        graph: SceneGraph,
        params: BuilderParams,
        related: RelatedPairs,
        proposer: EdgeProposer | None = None,
        is_unobstructed: ObstructionCheck | None = None,
        verifier: ShortEdgeVerifier | None = None,
    ) -> None:
        self.graph = graph
        self.params = params
        self.related = related
        self.proposer = proposer
        self.is_unobstructed = is_unobstructed
        self.verifier = verifier
        self.long_edge_stats = LongEdgeStats()
        self.short_edge_stats = ShortEdgeStats()
        self._vetoed: set[EdgeKey] = set()
        self._pending_new: list[str] = []
        self._derived_at: dict[str, tuple[Vec3, str]] = {}  # id -> (position, category) last used
        # Only objects of these categories can change a group's membership.
        self._grouping_categories = {c for pair in related for c in pair}

    def refresh(self) -> None:
        """Recompute derived structure (relations of all objects, groups), e.g. after loading a prior."""
        with self.graph.transaction():
            objects = self.graph.nodes(layer=Layer.OBJECT)
            update_geometric_relations(
                self.graph, [n.id for n in objects], self.params.relations, self._vetoed
            )
            update_groups(self.graph, self.related, self.params.group_radius)
            self._derived_at = {n.id: (n.position, n.category) for n in objects}

    def integrate_frontiers(self, frontiers: Sequence[FrontierObservation]) -> list[str]:
        """Replace the frontier nodes (see :func:`integrate_frontiers`); return the ids removed."""
        return integrate_frontiers(self.graph, frontiers)

    def _moved(self, ids: Sequence[str]) -> list[SceneNode]:
        """Nodes among ``ids`` that are new, re-categorised or moved beyond ``min_move``."""
        out = []
        for node_id in ids:
            node = self.graph.get(node_id)
            if node is None:
                continue
            last = self._derived_at.get(node_id)
            if (
                last is None
                or last[1] != node.category
                or math.dist(last[0], node.position) > self.params.min_move
            ):
                out.append(node)
        return out

    def integrate(
        self, frame_index: int, instances: Sequence[ObjectInstance], removed_ids: Sequence[str] = ()
    ) -> IntegrationResult:
        """Apply one frame; ValueError (graph unchanged) if any instance is invalid."""
        with self.graph.transaction():
            result = integrate_instances(
                self.graph, frame_index, instances, removed_ids, self.params.integration
            )
            moved = self._moved(result.added + result.updated)
            for node_id in result.removed:
                self._derived_at.pop(node_id, None)
            if not (moved or result.removed):
                return result
            added = update_geometric_relations(
                self.graph, [n.id for n in moved], self.params.relations, self._vetoed
            )
            if self.verifier is not None:
                verify_short_edges(self.graph, added, self.verifier, self._vetoed, self.short_edge_stats)
            if result.removed or any(n.category in self._grouping_categories for n in moved):
                update_groups(self.graph, self.related, self.params.group_radius, result.rooms)
            for node in moved:
                self._derived_at[node.id] = (node.position, node.category)
        if self.proposer is not None:
            self._pending_new += result.added
        return result

    def propose_pending(self, lock: AbstractContextManager[Any] | None = None) -> list[SceneEdge]:
        """One batched long-edge proposal for every object added since the last call; the kept
        edges. A host that shares the graph between threads passes its ``lock``: it is held to
        collect the pairs and to add the edges, not while the model thinks."""
        guard = lock if lock is not None else nullcontext()
        with guard:
            pending, self._pending_new = self._pending_new, []
            pairs = long_edge_pairs(self.graph, pending) if self.proposer is not None else []
        if self.proposer is None or not pairs:
            return []
        proposals = self.proposer.propose(edge_proposal_prompt(pairs), pairs)
        with guard:
            kept = add_long_edges(self.graph, pairs, proposals, self.is_unobstructed, self.params.relations)
            self.long_edge_stats.record(len(pairs), len(proposals), len(kept))
        return kept
