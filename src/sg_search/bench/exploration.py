"""Frontier-only exploration in the MuJoCo houses (``sg-search bench exploration``).

The simulated robot (:mod:`sg_search.bench.sim_robot`: the stack's occupancy map, frontiers
and navigator, in Habitat's actions, one rendered 160x120 frame each, camera pitched 0.25 rad
down) starts with a full turn, then always drives towards the nearest reachable frontier
(re-chosen every 24 actions); a frontier is given up after three failed navigations.
Coverage = share of the reachable ground truth (the layout raster's traversable cells
connected to the start) whose cell the map holds as free. Geodesic accuracy: after
exploring, distances from the start over the built map against the ground-truth raster, for
reachable points the map also reaches.
Houses: the test split's scenes (layout seed 0), or ``--episodes`` of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.embodied_world import StackConfig
from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes
from sg_search.bench.sim_robot import SimRobot
from sg_search.mapping.occupancy import FREE
from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable
from sg_search.sim.bddl_scenes import scene_names
from sg_search.sim.mujoco.scene import free_regions, layout_for, nearest_free
from sg_search.sim.mujoco.world import CameraConfig, Frame, SimWorld

STEP_BUDGET = 1500
EXPLORE_ACTIONS = 24  # actions towards one frontier before the nearest one is chosen again
TILT = 0.25  # [rad] camera pitched down, so that the floor is seen from ~1.1 m on


def explorer_for(
    world: SimWorld, on_frame: Callable[[Frame], None] | None = None, budget: int = STEP_BUDGET
) -> SimRobot:
    """The simulated robot with the stack's planner parameters and ``budget`` actions."""
    config = StackConfig.load()
    return SimRobot(world, config.planner, budget, on_frame, config.embodied.discrete())


def explore(robot: SimRobot, after: Callable[[], None] = lambda: None) -> None:
    """First frame, a full turn, then the nearest frontier until none is left or out of actions;
    ``after`` runs after each navigation."""
    robot.observe()
    robot.look_around()
    after()
    while not robot.out_of_actions and robot.explore_step(EXPLORE_ACTIONS):
        after()


def reachable_truth(world: SimWorld, start: tuple[float, float]) -> np.ndarray:
    """Cell centres [m] of the layout raster's traversable cells connected to ``start``."""
    labels = free_regions(world)
    ((row, col),) = world.grid.to_cells(np.array([start]))
    cells = np.argwhere(labels == labels[row, col])
    return world.grid.to_metres(cells)


def coverage(explorer: SimRobot, truth: np.ndarray) -> float:
    """Share of ``truth`` points whose map cell is free."""
    cells = explorer.spec.to_cells(truth)
    states = explorer.map.states()
    return float(np.mean(states[cells[:, 0], cells[:, 1]] == FREE))


def explore_house(scene: str, seed: int = 0) -> dict[str, Any]:
    """Explore one house; coverage curve (every 25 actions) and geodesic agreement."""
    with SimWorld(layout_for(scene, seed), camera=CameraConfig(160, 120)) as world:
        start = nearest_free(world, *world.layout.rooms[0].center)
        world.set_pose(*start, 0.0, tilt=TILT)
        robot = explorer_for(world)
        truth = reachable_truth(world, start)
        curve: list[tuple[int, float]] = []

        def sample() -> None:
            if not curve or robot.steps - curve[-1][0] >= 25:
                curve.append((robot.steps, coverage(robot, truth)))

        explore(robot, sample)
        curve.append((robot.steps, coverage(robot, truth)))
        errors = geodesic_errors(robot, world, start, truth)
    return {
        "scene": scene,
        "coverage": curve[-1][1],
        "steps": float(robot.steps),
        "curve": curve,
        "geodesic_rel_err_median": float(np.median(errors)) if len(errors) else float("nan"),
        "geodesic_pairs": float(len(errors)),
    }


def geodesic_errors(
    explorer: SimRobot, world: SimWorld, start: tuple[float, float], truth: np.ndarray
) -> np.ndarray:
    """|d_map - d_truth| / d_truth from the start to up to 200 truth points 2 m or more away."""
    truth_field = DistanceField(
        world.free, world.grid, start, PlannerParams(robot_radius=0.0, snap_radius=0.5)
    )
    mapped = replace(explorer.navigator.params.planners[0], unknown_is_free=False)  # known free space only
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


def _explore_nth(scenes: tuple[str, ...], first: int, seed: int) -> dict[str, Any]:
    return explore_house(scenes[seed - first], first)


def run(options: BenchOptions) -> BenchReport:
    """Every test-split house (at most ``options.episodes``); the curve PNG under ``--out``."""
    scenes = tuple(scene_names("test")[: options.episodes])
    rows = map_episodes(partial(_explore_nth, scenes, options.seed), options, "exploration", jobs=len(scenes))
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
    report.extra = {"curve_png": str(plot_curves(rows, options.out_dir() / "exploration_coverage.png"))}
    return report
