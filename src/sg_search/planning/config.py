"""Parameters of the frontier_planner node (``frontier_planner`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry import Pose2D, frames
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import OccupancyParams
from sg_search.planning.follower import FollowerParams
from sg_search.planning.geodesic import PlannerParams
from sg_search.planning.navigator import Navigator, NavigatorParams
from sg_search.planning.stall import disc_points, point_ahead
from sg_search.planning.viewpoints import ViewpointParams


@dataclass(frozen=True)
class FrontierPlannerConfig:
    """See config/sg_search.yaml for meaning and units."""

    def __post_init__(self) -> None:
        if not self.clearance_margins or min(self.clearance_margins) < 0:
            raise ValueError("frontier_planner clearance_margins needs at least one margin, none negative")
        if not self.frontier_seen_m > 0:
            raise ValueError(f"frontier_planner frontier_seen_m must be > 0 m, not {self.frontier_seen_m}")
        if not self.bump_size_m >= 0:
            raise ValueError(f"frontier_planner bump_size_m must be >= 0 m, not {self.bump_size_m}")

    map_frame: str = frames.MAP
    base_frame: str = frames.BASE_LINK
    resolution: float = 0.05
    width: int = 800
    height: int = 800
    origin_x: float = -20.0
    origin_y: float = -20.0
    max_range: float = 5.0
    obstacle_min_z: float = 0.1
    obstacle_max_z: float = 1.5
    pixel_stride: int = 4
    depth_scale: float = 0.001
    robot_radius: float = 0.2
    clearance_margins: tuple[float, ...] = (0.05, 0.02, 0.0)
    unknown_is_free: bool = True
    min_frontier_cells: int = 8
    frontier_seen_m: float = 1.0
    update_period_s: float = 0.5
    control_period_s: float = 0.1
    max_linear: float = 0.3
    max_angular: float = 0.8
    goal_tolerance: float = 0.15
    stuck_window_s: float = 5.0
    stall_window_s: float = 2.0
    stall_progress_m: float = 0.03
    bump_memory_s: float = 50.0
    bump_shut_in_m2: float = 1.0
    bump_size_m: float = 0.1
    max_recoveries: int = 3
    navigate_timeout_s: float = 120.0
    replan_period_s: float = 5.0
    detour_factor: float = 2.0
    detour_slack_m: float = 2.0
    escape_area_m2: float = 0.5
    approach_radii: tuple[float, ...] = (0.6, 0.75, 0.9)
    reach_radii: tuple[float, ...] = (0.6, 0.7, 0.8)
    reach_tolerance_m: float = 0.1
    viewpoint_path_cost: float = 0.1
    tf_timeout_s: float = 0.2
    goal_sender: str = "affordance_executor"
    map_file: str = ""
    map_save_period_s: float = 10.0

    def grid(self) -> GridSpec:
        """The map's geometry."""
        return GridSpec(self.resolution, self.width, self.height, self.origin_x, self.origin_y)

    def occupancy(self) -> OccupancyParams:
        """Sensor model."""
        return OccupancyParams(
            max_range=self.max_range,
            obstacle_min_z=self.obstacle_min_z,
            obstacle_max_z=self.obstacle_max_z,
            pixel_stride=self.pixel_stride,
            contact_s=self.bump_memory_s,
        )

    def planner(self) -> PlannerParams:
        """Traversability at the safest clearance (distances reported to reasoners)."""
        return self.planners()[0]

    def planners(self) -> tuple[PlannerParams, ...]:
        """Traversability per clearance, safest first."""
        return tuple(
            PlannerParams(
                robot_radius=self.robot_radius + margin, unknown_is_free=self.unknown_is_free, snap_radius=1.0
            )
            for margin in self.clearance_margins
        )

    def navigator(self) -> NavigatorParams:
        """The navigator: clearances, controller, limits."""
        return NavigatorParams(
            self.planners(),
            self.follower(),
            self.navigate_timeout_s,
            self.replan_period_s,
            detour_factor=self.detour_factor,
            detour_slack_m=self.detour_slack_m,
            escape_area_m2=self.escape_area_m2,
        )

    def follower(self) -> FollowerParams:
        """Controller."""
        return FollowerParams(
            max_linear=self.max_linear,
            max_angular=self.max_angular,
            goal_tolerance=self.goal_tolerance,
            stuck_window_s=self.stuck_window_s,
            max_recoveries=self.max_recoveries,
        )

    def viewpoints(self, within_reach: bool = False) -> ViewpointParams:
        """VVD candidates: to see an object, or within reach of it (to manipulate it)."""
        return ViewpointParams(
            radii=self.reach_radii if within_reach else self.approach_radii,
            path_cost=self.viewpoint_path_cost,
        )

    def bump_marks(self, pose: Pose2D, navigator: Navigator) -> NDArray[np.float64]:
        """(N, 2) points [m, ``map``] a base at ``pose`` blocked outright marks occupied (the
        in-process robot's bumper and the node's stall): the cells of a disc of ``bump_size_m``
        whose near edge is the first cell beyond the base's radius, straight ahead; where those
        would leave the base less floor than they cut it off from, or shut it in
        (``Navigator.parted_by``, ``bump_shut_in_m2``: a bump in a doorway, or at a dead end's
        only way out), the one cell ahead; where that would too, none (the follower backs off
        and re-plans)."""
        for size in dict.fromkeys((self.bump_size_m, 0.0)):
            ahead = point_ahead(pose, self.robot_radius + self.resolution + size)
            marks = disc_points(ahead, size, self.resolution)
            if not navigator.parted_by(pose[:2], marks, self.bump_shut_in_m2):
                return marks
        return np.zeros((0, 2))

    @property
    def reach_m(self) -> float:
        """How far [m] from an object's centre the base may stand to be within reach: the
        largest reach circle plus the tolerance of arriving on it."""
        return max(self.reach_radii) + self.reach_tolerance_m
