"""What watching a search costs: milliseconds per logged item of the live view (sg_search.view).

A test-split house is laid out and rendered at the demo's camera size (640x480); the robot
turns in place in steps of 30 degrees (``--episodes`` frames), depth is fused into an 800x800
occupancy grid as the planner does, and the house's full scene graph (every room and piece of
furniture, from its layout) stands in for a late-search graph. Each frame is logged as the
``live_view`` node logs it, into a ``.rrd`` file: robot pose, graph, camera (RGB as JPEG, depth,
instances) and map. Reported: mean and 95th-percentile ms per item, the ms per frame at the
node's default periods. (A turning robot's file size says little about a search's: the
demo's run.rrd is measured in docs/BENCHMARKS.md instead.)
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from sg_search.bench.harness import BenchOptions, BenchReport
from sg_search.geometry.transforms import Transform, quat_from_matrix
from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import CameraIntrinsics, OccupancyMap
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.prior import add_prior
from sg_search.sim.bddl_scenes import load_house
from sg_search.sim.episodes import make_episodes
from sg_search.sim.layout import layout_house
from sg_search.view import CameraFrame, SearchLog
from sg_search.view.config import LiveViewConfig

_DEFAULTS = LiveViewConfig()
PERIODS_S = {  # how often the node logs each item [s]
    "robot": _DEFAULTS.period_s,
    "graph": _DEFAULTS.period_s,
    "camera": _DEFAULTS.camera_period_s,
    "map": _DEFAULTS.map_period_s,
}


def run(options: BenchOptions) -> BenchReport:
    """Log ``options.episodes`` frames of one test house (``--seed`` picks it)."""
    from sg_search.sim.mujoco.world import CameraConfig, SimWorld

    episode = make_episodes("test", 40, seed=0)[0][options.seed % 40]
    layout = layout_house(load_house(episode.scene), episode.layout_seed)
    graph = add_prior(layout.to_prior(), SceneGraph())
    grid = OccupancyMap(GridSpec())
    times: dict[str, list[float]] = {name: [] for name in PERIODS_S}
    with tempfile.TemporaryDirectory() as folder, SimWorld(layout, camera=CameraConfig(640, 480)) as world:
        path = Path(folder) / "run.rrd"
        log = SearchLog.to_file(path)
        for i in range(options.episodes):
            if i:
                world.move(0.0, math.radians(30.0))
            frame = world.render()
            t = frame.T_map_camera
            fx, fy, cx, cy = frame.intrinsics
            grid.integrate_depth(
                frame.depth,
                CameraIntrinsics(fx, fy, cx, cy),
                Transform(t[:3, 3].copy(), quat_from_matrix(t[:3, :3])),
            )
            states = grid.states()
            kinds = dict.fromkeys(frame.instances, "object")  # colours do not change the cost
            log.set_time(float(i))
            x, y, yaw = world.pose
            items: dict[str, Callable[[], None]] = {
                "robot": lambda: log.robot(x, y, yaw),  # noqa: B023 - called right away
                "graph": lambda: log.graph(graph),
                "camera": lambda: log.camera(
                    CameraFrame(t, frame.intrinsics, frame.rgb, frame.depth, frame.instance, kinds)  # noqa: B023
                ),
                "map": lambda: log.map(states, grid.spec),  # noqa: B023
            }
            for name, call in items.items():
                start = time.perf_counter()
                call()
                times[name].append(1e3 * (time.perf_counter() - start))
        log.close()
    summary: dict[str, float] = {}
    for name, values in times.items():
        summary[f"{name}_ms_mean"] = float(np.mean(values))
        summary[f"{name}_ms_p95"] = float(np.percentile(values, 95))
    # Per second of search at the node's periods, then per logged frame (every period_s).
    per_second = sum(float(np.mean(times[n])) / PERIODS_S[n] for n in PERIODS_S)
    summary["ms_per_second_of_search"] = per_second
    summary["ms_per_frame_at_default_periods"] = per_second * PERIODS_S["robot"]
    summary["nodes_in_graph"] = float(len(graph.nodes()))
    return BenchReport("live-view", options, summary, [])
