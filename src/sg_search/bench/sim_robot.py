"""The simulated robot of the in-process benchmarks: a MuJoCo world's base driven in Habitat's
discrete actions by the stack's one navigator, mapping from its own rendered depth.

The occupancy map, frontier extraction and :class:`~sg_search.planning.navigator.Navigator`
are the frontier planner node's, with its parameters (``frontier_planner`` in
config/sg_search.yaml); :class:`~sg_search.planning.discrete.DiscreteBase` quantises the
navigator's velocity commands into forward 0.25 m / turn 30 degree actions, one rendered
frame each; a forward move slides along a wall it grazes (as Habitat's do), and one that is
blocked outright marks the cells ahead as occupied (a bumper). The world integrates each action
over 1 s, so a frame's stamp (the map's clock, which times out what the bumper marked) is the
count of actions so far. Frame ``map``, metres, radians.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

from sg_search.geometry import Pose2D, Transform
from sg_search.geometry.transforms import quat_from_matrix
from sg_search.mapping.frontier_extraction import FrontierExtractor, FrontierSegment, seen_beyond
from sg_search.mapping.occupancy import CameraIntrinsics, OccupancyMap
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.discrete import DiscreteBase, DiscreteParams
from sg_search.planning.geodesic import DistanceField
from sg_search.planning.navigator import NavError, Navigator, NavResult, turn_towards
from sg_search.sim.mujoco.world import Frame, SimWorld

FULL_TURN = 12  # 30-degree turns in a full turn
MAX_FAILURES = 3  # failed navigations to a frontier (within 0.5 m) before it is given up


_FAILED_BY_CODE = {
    NavError.NO_VALID_PATH: "no way",
    NavError.INVALID_GOAL: "no way",
    NavError.STUCK: "stuck",
    NavError.TIMEOUT: "out of time",
}  # the ends a navigation fails with (KeyError for any other: it would miss the table)

FAILED_DRIVE_ENDS = ("detour", *dict.fromkeys(_FAILED_BY_CODE.values()))
"""How a drive fails (:func:`drive_end`), in the closed-loop table's order."""


def drive_end(result: NavResult) -> str:
    """How a failed drive ended: "detour" (its way grew too long against its first plan), "no
    way" (no path over the map, or a goal off it), "stuck" (no progress after the recoveries)
    or "out of time" (the navigator's timeout)."""
    return "detour" if result.detour else _FAILED_BY_CODE[result.code]


class SimRobot:
    """One simulated base: actions with a budget, the map it builds, the navigator."""

    def __init__(
        self,
        world: SimWorld,
        planner: FrontierPlannerConfig,
        budget: int,
        on_frame: Callable[[Frame], None] | None = None,
        discrete: DiscreteParams | None = None,
    ) -> None:
        self.world = world
        self.on_frame = on_frame
        self.planner = planner
        self.spec = world.layout.map_grid(planner.resolution)
        self.map = OccupancyMap(self.spec, planner.occupancy())
        self.frontiers = FrontierExtractor(planner.min_frontier_cells)
        self.navigator = Navigator(self.spec, self.map.states, planner.navigator())
        self.base = DiscreteBase(self, planner.follower(), discrete)
        fx, fy, cx, cy = world.camera.intrinsics()
        self.intrinsics = CameraIntrinsics(fx, fy, cx, cy)
        self.steps = 0
        self.budget = budget
        self.failures: dict[tuple[float, float], int] = {}  # frontier goal -> failed navigations
        self._field: tuple[int, DistanceField | None] = (-1, None)
        self._frontiers: tuple[tuple[int, int], list[FrontierSegment], DistanceField | None] = (
            (-1, 0),
            [],
            None,
        )
        self.phase = "look-around"  # what the actions are spent on (set by the episode's host)
        self.actions_by_phase: Counter[str] = Counter()
        self.turns = 0  # actions that turned in place
        self.failed_drive_ends: Counter[str] = Counter()  # actions of failed drives, by how each ended
        self.visited: list[tuple[float, float]] = [self.pose()[:2]]  # base positions after each action

    # ------------------------------------------------------------------ the actuator
    def pose(self) -> Pose2D:
        """The base's (x, y, yaw) in ``map``."""
        x, y, yaw = self.world.pose
        return (x, y, yaw)

    def act(self, forward_m: float, turn_rad: float) -> bool:
        """One action, then a frame. A forward move blocked by a wall slides along it (Habitat's
        default, ``allow_sliding``); one that cannot move at all marks what blocked it (the
        bumper) and reports it."""
        before = self.world.pose[:2]
        self.world.step_velocity(forward_m, turn_rad, 1.0)
        moved = forward_m == 0.0 or math.dist(before, self.world.pose[:2]) > 1e-6
        self.steps += 1
        self.actions_by_phase[self.phase] += 1
        self.turns += forward_m == 0.0
        self.visited.append(self.pose()[:2])
        if not moved:
            self._bump(self.world.pose)
        self.observe()
        return moved

    def _bump(self, pose: Pose2D) -> None:
        """The bumper: what a base blocked outright ran into is marked occupied (``bump_marks``:
        less, or nothing, where the marks would leave the base less floor than they cut it off
        from; the frontier planner node's stall alike)."""
        self.map.mark_occupied(self.planner.bump_marks(pose, self.navigator))

    def observe(self) -> None:
        """Render and map one frame (and hand it to ``on_frame``)."""
        frame = self.world.render()
        if self.on_frame is not None:
            self.on_frame(frame)
        pose = frame.T_map_camera
        self.map.integrate_depth(
            frame.depth,
            self.intrinsics,
            Transform(pose[:3, 3].copy(), quat_from_matrix(pose[:3, :3])),
            float(self.steps),  # the world's clock (module docstring)
        )

    @property
    def out_of_actions(self) -> bool:
        """True once the episode's action budget is spent."""
        return self.steps >= self.budget

    # ------------------------------------------------------------------ motions
    def look_around(self) -> None:
        """A full turn in place (30-degree actions)."""
        for _ in range(FULL_TURN):
            if self.out_of_actions:
                return
            self.act(0.0, self.base.params.turn_step_rad)

    def turn_towards(self, heading: float) -> None:
        """Turns until within half a turn step of ``heading`` [rad] (the core's turning, in
        30-degree actions)."""
        turn = self.base.params.turn_step_rad
        turn_towards(
            self.base, heading, turn / 2, self.planner.max_angular, math.inf, lambda: self.out_of_actions
        )

    def drive_to(
        self,
        goal: tuple[float, float],
        tolerance: float,
        max_actions: int,
        max_travel_m: float = math.inf,
        until: Callable[[], bool] = lambda: False,
    ) -> NavResult:
        """The navigator to within ``tolerance`` [m] of ``goal``, in at most ``max_actions`` and
        ``max_travel_m`` metres driven, or until ``until()`` (asked before every action). The
        actions of a drive that fails otherwise (a detour, no path, stuck, out of time) are
        counted in ``failed_drive_ends``, by how the drive ended (:func:`drive_end`)."""
        start, travelled = self.steps, self.world.travelled
        result = self.navigator.navigate(
            self.base,
            goal,
            tolerance,
            should_stop=lambda: (
                self.out_of_actions
                or self.steps - start >= max_actions
                or self.world.travelled - travelled > max_travel_m
                or until()
            ),
        )
        if not result.success and result.code != NavError.CANCELED:
            self.failed_drive_ends[drive_end(result)] += self.steps - start
        return result

    @property
    def failed_drive_actions(self) -> int:
        """Actions of drives that failed (a detour, no way, stuck, out of time), all ends together."""
        return sum(self.failed_drive_ends.values())

    def frontier_seen(self, goal: tuple[float, float], every: int = 3) -> bool:
        """True when no open frontier's goal lies within the planner's ``frontier_seen_m`` of a
        frontier's ``goal`` (the map saw what lay beyond it on the way there) and the base
        stands where the safest clearance lets it (not in a gap it squeezed into on the way: a
        search stopped there found nothing reachable). Asked at every ``every``-th action only
        (the frontiers are extracted anew for it)."""
        if self.steps % every or not self.navigator.roomy(self.world.pose[:2]):
            return False
        return seen_beyond(goal, self.open_frontiers(), self.planner.frontier_seen_m)

    def field(self) -> DistanceField | None:
        """The distance field from the base at the safest clearance that can place it (kept
        until the next action: the map and the pose change only then)."""
        if self._field[0] != self.steps:
            first = next(self.navigator.fields(self.world.pose[:2]), None)
            self._field = (self.steps, first[1] if first is not None else None)
        return self._field[1]

    def open_frontiers(self) -> list[FrontierSegment]:
        """Frontiers reachable over the map at the safest clearance that reaches any (a narrow
        door is passed with less), without those given up; kept until the next action."""
        key = (self.steps, sum(self.failures.values()))  # the map, the pose or a given-up goal changed
        if self._frontiers[0] != key:
            states, found, used = self.map.states(), [], None
            for _, field in self.navigator.fields(self.world.pose[:2]):
                used = field
                found = [
                    s
                    for s in self.frontiers.extract(states, self.spec, field.distance)
                    if sum(n for g, n in self.failures.items() if math.dist(s.goal, g) <= 0.5) < MAX_FAILURES
                ]
                if found:
                    break
            self._frontiers = (key, found, used)
        return self._frontiers[1]

    def frontier_field(self) -> DistanceField | None:
        """The distance field the open frontiers were found in (see :meth:`open_frontiers`)."""
        self.open_frontiers()
        return self._frontiers[2]

    def explore_step(self, max_actions: int) -> bool:
        """Drive towards the nearest open frontier; False when none is left."""
        segments, field = self.open_frontiers(), self.frontier_field()
        if not segments or field is None:
            return False
        goal = min(segments, key=lambda s: field.distance_to(s.goal)).goal
        before = self.steps
        result = self.drive_to(goal, self.planner.goal_tolerance, max_actions)
        paused = result.code == NavError.CANCELED and not self.out_of_actions  # its share of actions used
        if not (result.success or paused) or self.steps == before:
            self.failures[goal] = self.failures.get(goal, 0) + 1  # also: there, yet still a frontier
        return True
