"""Parameters of the MuJoCo sim bridge (``sim_bridge`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.config import require_positive
from sg_search.geometry import frames
from sg_search.sim.mujoco.world import CameraConfig


@dataclass(frozen=True)
class SimBridgeConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    scene: str = "Rs_int"
    layout_seed: int = 0
    start_room: str = ""
    target_query: str = ""
    target_relation: str = ""
    target_holder: str = ""
    width: int = 320
    height: int = 240
    fovy_deg: float = 60.0
    camera_height_m: float = 0.9
    camera_tilt_rad: float = 0.25
    head_lift_max_m: float = 0.4
    look_down_min_rad: float = 0.79
    max_depth_m: float = 20.0
    rate_hz: float = 10.0
    max_linear_mps: float = 0.5
    max_angular_rps: float = 1.0
    cmd_vel_timeout_s: float = 0.5
    reach_m: float = 1.0
    map_frame: str = frames.MAP
    odom_frame: str = frames.ODOM
    base_frame: str = frames.BASE_LINK
    camera_frame: str = frames.CAMERA_OPTICAL

    def __post_init__(self) -> None:
        require_positive(
            self,
            (
                "rate_hz",
                "max_linear_mps",
                "max_angular_rps",
                "cmd_vel_timeout_s",
                "reach_m",
                "fovy_deg",
                "max_depth_m",
            ),
            "sim_bridge",
        )
        if self.head_lift_max_m < 0 or not 0 <= self.look_down_min_rad < 1.5:
            raise ValueError(
                f"sim_bridge head_lift_max_m must be >= 0 (got {self.head_lift_max_m}) and "
                f"look_down_min_rad in [0, 1.5) (got {self.look_down_min_rad})"
            )
        if self.width < 8 or self.height < 8:
            raise ValueError(f"sim_bridge image size must be at least 8x8, got {self.width}x{self.height}")
        if self.target_query and self.target_relation not in ("inside", "ontop", "inroom"):
            raise ValueError(f"target_relation must be inside, ontop or inroom, got {self.target_relation!r}")

    def camera(self) -> CameraConfig:
        """The agent camera."""
        return CameraConfig(self.width, self.height, self.fovy_deg, self.camera_height_m, self.max_depth_m)
