"""Parameters of the scene-graph server (``scene_graph_server`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.scene_graph.observations import IntegrationParams


@dataclass(frozen=True)
class SceneGraphServerConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    frame_id: str = "map"
    prior_scene_file: str = ""
    history_limit: int = 10_000
    max_frame_ids: int = 16
    full_update_period_s: float = 5.0
    container_margin: float = 0.05
    on_top_tolerance: float = 0.05
    openable_categories: tuple[str, ...] = ("cabinet", "fridge", "drawer", "wardrobe", "dishwasher", "oven")
    receptacle_categories: tuple[str, ...] = ("table", "counter", "shelf", "desk", "bed", "sofa")

    def integration(self) -> IntegrationParams:
        """The part of the config that governs :func:`integrate_instances`."""
        return IntegrationParams(
            container_margin=self.container_margin,
            on_top_tolerance=self.on_top_tolerance,
            openable_categories=self.openable_categories,
            receptacle_categories=self.receptacle_categories,
        )
