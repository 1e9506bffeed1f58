"""Parameters of the scene-graph server (``scene_graph_server`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.geometry import frames
from sg_search.scene_graph.builder import BuilderParams
from sg_search.scene_graph.observations import IntegrationParams
from sg_search.scene_graph.relations import RelationParams


@dataclass(frozen=True)
class SceneGraphServerConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    frame_id: str = frames.MAP
    prior_scene_file: str = ""
    history_limit: int = 10_000
    max_frame_ids: int = 16
    full_update_period_s: float = 5.0
    markers_period_s: float = 1.0
    container_margin: float = 0.05
    on_top_tolerance: float = 0.05
    openable_categories: tuple[str, ...] = (
        "cabinet", "fridge", "drawer", "wardrobe", "dishwasher", "oven", "microwave", "nightstand", "dresser",
        "chest", "locker", "washer", "bottom cabinet no top",
    )  # fmt: skip
    receptacle_categories: tuple[str, ...] = (
        "table", "counter", "countertop", "shelf", "bookshelf", "bookcase", "desk", "bed", "sofa", "sink",
        "bathtub", "hamper", "trash can",
    )  # fmt: skip
    next_to_distance: float = 0.8
    vertical_gap: float = 0.05
    max_wall_angle_deg: float = 15.0
    group_radius: float = 1.5
    min_move: float = 0.05
    related_categories_file: str = ""
    snapshot_file: str = ""
    snapshot_period_s: float = 10.0
    sandbox_time_limit_s: float = 5.0
    sandbox_memory_mb: int = 1024
    sandbox_max_concurrent: int = 2
    rooms_from_map: bool = True
    knowledge_at_start: bool = False
    rooms_period_s: float = 5.0
    llm_edges: bool = False
    llm_edges_period_s: float = 5.0
    llm_base_url: str = ""
    llm_model: str = ""
    llm_cache_dir: str = ""
    llm_timeout_s: float = 60.0

    def builder(self) -> BuilderParams:
        """The parameters of :class:`SceneGraphBuilder`."""
        return BuilderParams(
            integration=IntegrationParams(
                container_margin=self.container_margin,
                on_top_tolerance=self.on_top_tolerance,
                openable_categories=self.openable_categories,
                receptacle_categories=self.receptacle_categories,
            ),
            relations=RelationParams(
                next_to_distance=self.next_to_distance,
                vertical_gap=self.vertical_gap,
                max_wall_angle_deg=self.max_wall_angle_deg,
            ),
            group_radius=self.group_radius,
            min_move=self.min_move,
        )
