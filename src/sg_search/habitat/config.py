"""Parameters of the Habitat bridge (``habitat_bridge`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.config import require_positive
from sg_search.geometry import frames


@dataclass(frozen=True)
class HabitatBridgeConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    scene_dataset_config: str = ""
    episodes_file: str = ""
    episode_index: int = 0
    scenes_dir: str = ""
    width: int = 640
    height: int = 480
    hfov_deg: float = 79.0
    camera_height_m: float = 0.9
    rate_hz: float = 10.0
    max_linear_mps: float = 0.5
    max_angular_rps: float = 1.0
    cmd_vel_timeout_s: float = 0.5
    forward_step_m: float = 0.25
    turn_step_deg: float = 30.0
    success_distance_m: float = 1.0
    map_frame: str = frames.MAP
    odom_frame: str = frames.ODOM
    base_frame: str = frames.BASE_LINK
    camera_frame: str = frames.CAMERA_OPTICAL

    def __post_init__(self) -> None:
        require_positive(
            self,
            ("hfov_deg", "camera_height_m", "rate_hz", "max_linear_mps", "max_angular_rps",
             "cmd_vel_timeout_s", "forward_step_m", "turn_step_deg", "success_distance_m"),
            "habitat_bridge",
        )  # fmt: skip
        if self.width < 8 or self.height < 8:
            raise ValueError(
                f"habitat_bridge image size must be at least 8x8, got {self.width}x{self.height}"
            )
