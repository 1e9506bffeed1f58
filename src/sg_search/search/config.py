"""Parameters of the reasoner node (``reasoner`` in config/sg_search.yaml)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sg_search.geometry import frames
from sg_search.search.outcome import SearchParams
from sg_search.search.verification import CredibilityParams


@dataclass(frozen=True)
class ReasonerNodeConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    default_reasoner: str = "scout"
    seed: int = 0
    max_steps: int = 50
    timeout_s: float = 120.0
    step_period_s: float = 0.5
    min_confidence: float = 0.5
    max_failures: int = 5
    unreachable_after_m: float = 1.0
    settle_s: float = 15.0
    close_after_search: bool = True
    look_around: bool = True
    sweep_rooms: bool = True
    unreached_retry_m: float = 2.0
    verify: bool = True
    verify_threshold: float = 0.8
    verify_max_observations: int = 10
    verify_context_floor: float = 0.3
    verify_context_radius_m: float = 3.0
    verify_min_distance_m: float = 1.0
    verify_observation_timeout_s: float = 8.0
    executor_action: str = "execute_affordance"
    executor_wait_s: float = 0.5
    execute_timeout_s: float = 300.0
    graph_wait_s: float = 5.0
    revive_wait_s: float = 5.0
    sensing_nodes: tuple[str, ...] = ("perception", "scene_graph_server", "sim_bridge")
    llm_fallback: str = "scout"
    llm_base_url: str = ""
    llm_model: str = ""
    llm_cache_dir: str = ""
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 2
    llm_max_requests: int = 100
    llm_max_tokens: int = 0
    llm_structured: str = "json_object"
    llm_text_regex: bool = False
    vocabulary_node: str = "perception"
    run_code_timeout_s: float = 30.0
    map_frame: str = frames.MAP
    base_frame: str = frames.BASE_LINK
    kept_frames: int = 16
    still_facing_m: float = 0.03
    still_facing_deg: float = 3.0
    planner_node: str = "frontier_planner"

    def reasoner_params(self, section: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """What :func:`create_reasoner` gets: the shared values (seed, fallback, the LLM
        client's ``llm_*``) and the reasoner's own ``section`` over them."""
        params: dict[str, Any] = {"seed": self.seed, "fallback": self.llm_fallback}
        params.update(
            {k: v for k, v in self.__dict__.items() if k.startswith("llm_") and k != "llm_fallback"}
        )
        params.update(section or {})
        return params

    def search_params(self, max_steps: int = 0, timeout_s: float = 0.0) -> SearchParams:
        """Search budgets; a goal's non-zero ``max_steps``/``timeout_s`` override the defaults."""
        return SearchParams(
            max_steps=max_steps or self.max_steps,
            timeout_s=timeout_s or self.timeout_s,
            step_period_s=self.step_period_s,
            min_confidence=self.min_confidence,
            max_failures=self.max_failures,
            unreachable_after_m=self.unreachable_after_m,
            settle_s=self.settle_s,
            close_after_search=self.close_after_search,
            look_around=self.look_around,
            sweep_rooms=self.sweep_rooms,
            unreached_retry_m=self.unreached_retry_m,
        )

    def credibility(self) -> CredibilityParams:
        """Verification of goal candidates (SG-Nav re-perception)."""
        return CredibilityParams(
            threshold=self.verify_threshold,
            max_observations=self.verify_max_observations,
            context_floor=self.verify_context_floor,
            context_radius_m=self.verify_context_radius_m,
            min_distance_m=self.verify_min_distance_m,
        )


@dataclass(frozen=True)
class ExecutorNodeConfig:
    """Parameters of the affordance_executor node (``affordance_executor`` in config/sg_search.yaml)."""

    manipulation: str = "sim"
    navigate_action: str = "navigate"
    navigate_timeout_s: float = 180.0
    room_arrive_m: float = 1.0
    navigation_retries: int = 0
    open_sides: int = 2
    server_wait_s: float = 2.0
    open_service: str = "open"
    close_service: str = "close"
    open_action: str = "open_container"
    look_action: str = "look_at"
    service_timeout_s: float = 10.0
    manipulation_timeout_s: float = 120.0
    observe_frames: int = 3
    observe_timeout_s: float = 10.0
    map_frame: str = frames.MAP
    base_frame: str = frames.BASE_LINK
    turn_speed_rps: float = 0.6
    heading_tolerance_rad: float = 0.25
    look_timeout_s: float = 15.0
    level_look_ahead_m: float = 3.0
    level_look_height_m: float = 1.2
    graph_wait_s: float = 5.0
    tf_wait_s: float = 5.0
    goal_sender: str = "reasoner"

    def __post_init__(self) -> None:
        if self.manipulation not in ("sim", "hsr"):
            raise ValueError(
                f"affordance_executor manipulation must be 'sim' or 'hsr', got {self.manipulation!r}"
            )
        if not self.room_arrive_m > 0:
            raise ValueError(f"affordance_executor room_arrive_m must be > 0 [m], got {self.room_arrive_m}")
