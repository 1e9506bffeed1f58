"""Frontier-only exploration in the MuJoCo houses (``sg-search bench exploration``).

The agent maps from its own rendered depth (the stack's OccupancyMap, FrontierExtractor and
FMM DistanceField, as the frontier_planner node uses them) and always drives to the
nearest reachable frontier. Actions are Habitat's: forward 0.25 m or turn 30 degrees, one
rendered 160x120 frame each (camera pitched 0.25 rad down); it starts with a full turn. A
blocked move marks the cells ahead as occupied (a bumper), and a frontier is given up after
three failed attempts. Coverage = share of the reachable
ground truth (the layout raster's traversable cells connected to the start) whose cell the
map holds as free. Geodesic accuracy: after exploring, distances from the start over the
built map against the ground-truth raster, for reachable points the map also reaches.
Houses: the test split's scenes (layout seed 0), or ``--episodes`` of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from scipy import ndimage

from sg_search.bench.common import BenchOptions, BenchReport
from sg_search.geometry import Transform
from sg_search.geometry.transforms import quat_from_matrix
from sg_search.mapping.frontiers import FrontierExtractor
from sg_search.mapping.occupancy import FREE, CameraIntrinsics, OccupancyMap
from sg_search.planning.geodesic import DistanceField, PlannerParams, PlanningError, traversable
from sg_search.sim.bddl_scenes import scene_names
from sg_search.sim.mujoco.mjcf import AGENT_RADIUS
from sg_search.sim.mujoco.scene import layout_for, nearest_free
from sg_search.sim.mujoco.world import CameraConfig, Frame, SimWorld

STEP_BUDGET = 1500
REPLAN_EVERY = 8  # actions along a path before planning again
# Plans keep 5 cm more than the base needs (walls are mapped to within a 5 cm cell); where
# that reaches no frontier (a narrow door), 2 cm, then exactly the base's radius. Optimistic:
# unknown cells count as free.
PLANNERS = tuple(
    PlannerParams(robot_radius=AGENT_RADIUS + margin, snap_radius=1.0, unknown_is_free=True)
    for margin in (0.05, 0.02, 0.0)
)
TURN = math.radians(30)
TILT = 0.25  # [rad] camera pitched down, so that the floor is seen from ~1.1 m on
MAX_FAILURES = 3  # attempts at a frontier (within 0.5 m) before it is given up


class Explorer:
    """Maps from rendered depth and follows the nearest frontier; counts actions."""

    def __init__(self, world: SimWorld, on_frame: Callable[[Frame], None] | None = None) -> None:
        self.world = world
        self.on_frame = on_frame
        self.spec = world.layout.grid(0.05, margin=1.0)
        self.map = OccupancyMap(self.spec)
        self.frontiers = FrontierExtractor()
        fx, fy, cx, cy = world.camera.intrinsics()
        self.intrinsics = CameraIntrinsics(fx, fy, cx, cy)
        self.steps = 0
        self.budget = STEP_BUDGET  # actions in all
        self.idle_turns = 0  # turns in place that found nothing reachable
        self.failures: dict[tuple[float, float], int] = {}  # frontier goal -> failed attempts

    def observe(self) -> None:
        """Render and fuse one frame (and hand it to ``on_frame``)."""
        frame = self.world.render()
        if self.on_frame is not None:
            self.on_frame(frame)
        pose = frame.T_map_camera
        self.map.integrate_depth(
            frame.depth, self.intrinsics, Transform(pose[:3, 3].copy(), quat_from_matrix(pose[:3, :3]))
        )

    def act(self, forward: float, turn: float) -> bool:
        """One action, then a frame; a blocked move marks what blocked it (the bumper)."""
        moved = self.world.move(forward, turn)
        self.steps += 1
        if not moved:
            x, y, yaw = self.world.pose
            self.map.mark_occupied(np.array([(x + 0.25 * math.cos(yaw), y + 0.25 * math.sin(yaw))]))
        self.observe()
        return moved

    def turn_towards(self, heading: float) -> None:
        """30-degree turns until within 15 degrees of ``heading``."""
        while self.steps < self.budget:
            error = math.atan2(math.sin(heading - self.world.pose[2]), math.cos(heading - self.world.pose[2]))
            if abs(error) <= TURN / 2:
                return
            self.act(0.0, math.copysign(TURN, error))

    def _stuck(self) -> bool:
        """True after a full turn in place found nothing reachable (or the budget is spent)."""
        self.idle_turns += 1
        return self.idle_turns > 12 or self.steps >= self.budget

    def _failed(self, goal: tuple[float, float]) -> None:
        self.failures[goal] = self.failures.get(goal, 0) + 1

    def step_towards(self) -> bool:
        """Plan to the nearest reachable frontier and follow a few actions; False when none is left."""
        states = self.map.states()
        x, y, _ = self.world.pose
        for params in PLANNERS:  # a tighter clearance only when the safer one reaches nothing
            free = traversable(states, self.spec, params)
            try:
                field = DistanceField(free, self.spec, (x, y), params)
            except PlanningError:
                continue
            segments = [
                s for s in self.frontiers.extract(states, self.spec, field.distance)
                if sum(n for g, n in self.failures.items() if math.dist(s.goal, g) <= 0.5) < MAX_FAILURES
            ]  # fmt: skip
            if segments:
                break
        else:
            self.act(0.0, TURN)  # nothing reachable from here: look around once more
            return not self._stuck()
        goal = min(segments, key=lambda s: field.distance_to(s.goal)).goal
        try:
            path = field.path_to(goal)
        except PlanningError:
            self._failed(goal)
            return True
        status = self._follow(path)
        if status == "blocked" or status == "stalled":
            self._failed(goal)
        return True

    def _follow(self, path: np.ndarray) -> str:
        """Drive along ``path`` for at most REPLAN_EVERY forward moves: "arrived", "replan",
        "blocked" (a move was stopped) or "stalled" (no forward move was needed or possible)."""
        moves = 0
        for wx, wy in path[1:]:
            x, y, _ = self.world.pose
            self.turn_towards(math.atan2(wy - y, wx - x))
            while math.dist((x, y), (wx, wy)) > 0.125 and self.steps < self.budget:
                if not self.act(min(0.25, math.dist((x, y), (wx, wy))), 0.0):
                    return "blocked"
                moves += 1
                x, y, _ = self.world.pose
                if self.steps % REPLAN_EVERY == 0:
                    return "replan"
        return "arrived" if moves else "stalled"

    def fields(self) -> Iterator[tuple[np.ndarray, DistanceField]]:
        """(traversable cells, distance field from the base) over the map, safest clearance
        first (PLANNERS); levels whose field cannot be built are skipped."""
        states = self.map.states()
        for params in PLANNERS:
            free = traversable(states, self.spec, params)
            try:
                yield free, DistanceField(free, self.spec, self.world.pose[:2], params)
            except PlanningError:
                continue

    def path_to(self, goal: tuple[float, float]) -> np.ndarray | None:
        """A path [m] over the map from the base to ``goal`` (the safest clearance that reaches
        it), or None."""
        for _, field in self.fields():
            try:
                return field.path_to(goal)
            except PlanningError:
                continue
        return None

    def drive_to(self, goal: tuple[float, float], tolerance: float, max_actions: int) -> bool:
        """Plan and follow, re-planning as the map grows, until within ``tolerance`` [m] of
        ``goal``; False when no path is left, it is blocked three times or out of actions."""
        start, blocked = self.steps, 0
        while self.steps - start < max_actions and self.steps < self.budget:
            if math.dist(self.world.pose[:2], goal) <= tolerance:
                return True
            path = self.path_to(goal)
            if path is None:
                return False
            status = self._follow(path)
            blocked += status in ("blocked", "stalled")
            if blocked >= MAX_FAILURES:
                break
        return math.dist(self.world.pose[:2], goal) <= tolerance


def reachable_truth(world: SimWorld, start: tuple[float, float]) -> np.ndarray:
    """Cell centres [m] of the layout raster's traversable cells connected to ``start``."""
    labels, _ = ndimage.label(world.free, structure=np.ones((3, 3), dtype=bool))
    ((row, col),) = world.grid.to_cells(np.array([start]))
    cells = np.argwhere(labels == labels[row, col])
    return world.grid.to_metres(cells)


def coverage(explorer: Explorer, truth: np.ndarray) -> float:
    """Share of ``truth`` points whose map cell is free."""
    cells = explorer.spec.to_cells(truth)
    states = explorer.map.states()
    return float(np.mean(states[cells[:, 0], cells[:, 1]] == FREE))


def explore_house(scene: str, seed: int = 0) -> dict[str, Any]:
    """Explore one house; coverage curve (every 25 actions) and geodesic agreement."""
    with SimWorld(layout_for(scene, seed), camera=CameraConfig(160, 120)) as world:
        start = nearest_free(world, *world.layout.rooms[0].center)
        world.set_pose(*start, 0.0, tilt=TILT)
        explorer = Explorer(world)
        truth = reachable_truth(world, start)
        explorer.observe()
        for _ in range(12):
            explorer.act(0.0, TURN)
        curve = [(explorer.steps, coverage(explorer, truth))]
        while explorer.steps < STEP_BUDGET and explorer.step_towards():
            if explorer.steps - curve[-1][0] >= 25:
                curve.append((explorer.steps, coverage(explorer, truth)))
        curve.append((explorer.steps, coverage(explorer, truth)))
        errors = geodesic_errors(explorer, world, start, truth)
    return {
        "scene": scene,
        "coverage": curve[-1][1],
        "steps": float(explorer.steps),
        "curve": curve,
        "geodesic_rel_err_median": float(np.median(errors)) if len(errors) else float("nan"),
        "geodesic_pairs": float(len(errors)),
    }


def geodesic_errors(
    explorer: Explorer, world: SimWorld, start: tuple[float, float], truth: np.ndarray
) -> np.ndarray:
    """|d_map - d_truth| / d_truth from the start to up to 200 truth points 2 m or more away."""
    truth_field = DistanceField(
        world.free, world.grid, start, PlannerParams(robot_radius=0.0, snap_radius=0.5)
    )
    mapped = PlannerParams(robot_radius=AGENT_RADIUS + 0.05, snap_radius=1.0)  # known free space only
    map_free = traversable(explorer.map.states(), explorer.spec, mapped)
    map_field = DistanceField(map_free, explorer.spec, start, mapped)
    rng = np.random.default_rng(0)
    picks = truth[rng.choice(len(truth), size=min(600, len(truth)), replace=False)]
    errors = []
    for point in picks:
        d_true = truth_field.distance_to((float(point[0]), float(point[1])))
        d_map = map_field.distance_to((float(point[0]), float(point[1])))
        if np.isfinite(d_true) and np.isfinite(d_map) and d_true >= 2.0:
            errors.append(abs(d_map - d_true) / d_true)
        if len(errors) >= 200:
            break
    return np.array(errors)


def plot_curves(rows: list[dict[str, Any]], path: Path) -> Path:
    """Coverage against actions, one line per house."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for row in rows:
        steps, values = zip(*row["curve"], strict=True)
        ax.plot(steps, values, label=f"{row['scene']} ({row['coverage']:.2f})")
    ax.axhline(0.9, color="0.6", linestyle="--", linewidth=1)
    ax.set_xlabel("actions (forward 0.25 m / turn 30°)")
    ax.set_ylabel("reachable area mapped free")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("frontier-only exploration, test houses")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run(options: BenchOptions) -> BenchReport:
    """Every test-split house (at most ``options.episodes``); the curve PNG beside --json or in cwd."""
    scenes = scene_names("test")[: options.episodes]
    rows = [explore_house(scene, options.seed) for scene in scenes]
    summary = {
        "houses": float(len(rows)),
        "coverage_mean": float(np.mean([r["coverage"] for r in rows])),
        "coverage_min": float(np.min([r["coverage"] for r in rows])),
        "houses_at_90pct": float(np.mean([r["coverage"] >= 0.9 for r in rows])),
        "steps_mean": float(np.mean([r["steps"] for r in rows])),
        "geodesic_rel_err_median": float(np.nanmedian([r["geodesic_rel_err_median"] for r in rows])),
    }
    summary.update({f"coverage/{r['scene']}": r["coverage"] for r in rows})
    report = BenchReport("exploration", options, summary, rows)
    report.extra = {"curve_png": str(plot_curves(rows, Path("exploration_coverage.png")))}
    return report
