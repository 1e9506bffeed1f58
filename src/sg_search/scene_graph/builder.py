"""Everything one perception frame does to the graph, as one sequence-number bump.

instances -> object nodes (room, container) -> geometric relations of what changed ->
groups -> (optionally) one batched LLM call proposing long-range edges for new objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sg_search.scene_graph.frontiers import FrontierObservation, integrate_frontiers
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.groups import RelatedPairs, update_groups
from sg_search.scene_graph.model import EdgeKey, Layer
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
    propose_long_edges,
    update_geometric_relations,
    verify_short_edges,
)


@dataclass(frozen=True)
class BuilderParams:
    """Parameters of every stage; ``group_radius`` in metres."""

    integration: IntegrationParams = field(default_factory=IntegrationParams)
    relations: RelationParams = field(default_factory=RelationParams)
    group_radius: float = 1.5


class SceneGraphBuilder:
    """Feeds perception frames into a graph.

    Args:
        graph: the graph to grow (owned by the caller, e.g. the ROS server).
        related: category pairs that form groups.
        proposer: optional LLM edge proposer (one call per frame with new objects).
        is_unobstructed: optional line-of-sight check on the occupancy map.
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
        # Only objects of these categories can change a group's membership.
        self._grouping_categories = {c for pair in related for c in pair}

    def refresh(self) -> None:
        """Recompute derived structure (relations of all objects, groups), e.g. after loading a prior."""
        with self.graph.transaction():
            objects = [n.id for n in self.graph.nodes(layer=Layer.OBJECT)]
            update_geometric_relations(self.graph, objects, self.params.relations, self._vetoed)
            update_groups(self.graph, self.related, self.params.group_radius)

    def integrate_frontiers(self, frontiers: Sequence[FrontierObservation]) -> list[str]:
        """Replace the frontier nodes (see :func:`integrate_frontiers`); return the ids removed."""
        return integrate_frontiers(self.graph, frontiers)

    def integrate(
        self, frame_index: int, instances: Sequence[ObjectInstance], removed_ids: Sequence[str] = ()
    ) -> IntegrationResult:
        """Apply one frame; ValueError (graph unchanged) if any instance is invalid."""
        with self.graph.transaction():
            result = integrate_instances(
                self.graph, frame_index, instances, removed_ids, self.params.integration
            )
            changed = result.added + result.updated
            if not (changed or result.removed):
                return result
            added = update_geometric_relations(self.graph, changed, self.params.relations, self._vetoed)
            if self.verifier is not None:
                verify_short_edges(self.graph, added, self.verifier, self._vetoed, self.short_edge_stats)
            grouping = [self.graph.get(i) for i in changed] + [None] * len(result.removed)
            if any(n is None or n.category in self._grouping_categories for n in grouping):
                update_groups(self.graph, self.related, self.params.group_radius, result.rooms)
            if self.proposer is not None and result.added:
                propose_long_edges(
                    self.graph,
                    result.added,
                    self.proposer,
                    self.is_unobstructed,
                    self.params.relations,
                    self.long_edge_stats,
                )
        return result
