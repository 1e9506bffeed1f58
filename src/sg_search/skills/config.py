"""Parameters of the HSR driver node (``hsr_driver`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.config import require_positive
from sg_search.geometry import frames


@dataclass(frozen=True)
class HsrDriverConfig:
    """See config/sg_search.yaml for the meaning and units of each parameter."""

    odom_frame: str = frames.ODOM
    tf_timeout_s: float = 2.0
    odom_wait_s: float = 10.0
    odom_stale_s: float = 0.5
    controller_wait_s: float = 5.0
    control_rate_hz: float = 20.0
    max_linear_mps: float = 0.2
    max_angular_rps: float = 0.5
    cmd_vel_timeout_s: float = 0.5
    open_motions_file: str = ""
    hand_reach_m: float = 0.6
    hand_height_at_zero_lift_m: float = 0.35
    arm_lift_max_m: float = 0.69
    head_height_m: float = 1.0
    max_handle_distance_m: float = 1.5
    position_tolerance_m: float = 0.01
    heading_tolerance_rad: float = 0.02
    joint_tolerance: float = 0.03
    gripper_open: float = 1.0
    gripper_closed: float = 0.0
    grasp_min_width: float = 0.1
    retreat_m: float = 0.2
    pull_waypoints: int = 10
    head_timeout_s: float = 5.0
    arm_timeout_s: float = 10.0
    base_timeout_s: float = 20.0
    grasp_timeout_s: float = 5.0
    pull_timeout_s: float = 30.0

    def __post_init__(self) -> None:
        positive = (
            "control_rate_hz", "max_linear_mps", "max_angular_rps", "cmd_vel_timeout_s", "hand_reach_m",
            "max_handle_distance_m", "position_tolerance_m", "heading_tolerance_rad", "joint_tolerance",
            "head_timeout_s", "arm_timeout_s", "base_timeout_s", "grasp_timeout_s", "pull_timeout_s",
            "odom_wait_s", "odom_stale_s", "controller_wait_s",
        )  # fmt: skip
        require_positive(self, positive, "hsr_driver")
        if self.pull_waypoints < 1:
            raise ValueError(f"hsr_driver pull_waypoints must be >= 1, got {self.pull_waypoints}")
