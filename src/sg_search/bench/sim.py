"""The embedded simulator's quality and speed (issue: MuJoCo world).

- back-projection: every 2nd pixel of the depth image, back-projected with the published
  intrinsics and camera pose, against the true hit point of the same pixel ray
  (``mj_multiRay`` on the model); error [mm] median / p95 / max over seeded views of
  ``--episodes`` test houses, at 320x240 and 640x480;
- containers: for test episodes whose target is inside an openable container, pixels of
  the target seen from a free spot in front that has the container in sight (drawers from
  further back, with a 1.3 m head camera), closed and then opened;
- determinism: SHA-256 of one view's RGB, depth and instances rendered here and in a
  second process;
- frame time: RGB + depth + instances, median of 100 frames, at both sizes;
- houses: how many of the 51 bddl scenes lay out and compile into a MuJoCo model.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
from typing import Any

import numpy as np

from sg_search.bench.harness import BenchOptions, BenchReport
from sg_search.sim.bddl_scenes import furniture_specs, load_house, scene_names
from sg_search.sim.episodes import make_episodes
from sg_search.sim.layout import layout_house
from sg_search.sim.mujoco.scene import TARGET_ID, episode_world, facing_viewpoint, random_views
from sg_search.sim.mujoco.world import CameraConfig, Frame, SimWorld

SIZES = ((320, 240), (640, 480))


def backprojection_errors(world: SimWorld, frame: Frame, stride: int = 2) -> np.ndarray:
    """Distances [m] between back-projected depth pixels and the true ray hits."""
    import mujoco

    fx, fy, cx, cy = frame.intrinsics
    h, w = frame.depth.shape
    v, u = np.mgrid[0:h:stride, 0:w:stride]
    z = frame.depth[v, u]
    valid = z > 0
    rays_cam = np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(z)], axis=-1)[valid]
    rotation, origin = frame.T_map_camera[:3, :3], frame.T_map_camera[:3, 3]
    points = (rays_cam * z[valid][:, None]) @ rotation.T + origin
    directions = rays_cam @ rotation.T
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    n = len(directions)
    geom_ids = np.zeros(n, dtype=np.int32)
    distances = np.zeros(n, dtype=np.float64)
    mujoco.mj_multiRay(
        world.model,
        world.data,
        origin.astype(np.float64),
        directions.ravel().astype(np.float64),
        None,
        1,
        world.model.body("agent").id,
        geom_ids,
        distances,
        None,
        n,
        100.0,
    )
    hit = distances >= 0
    truth = origin + directions[hit] * distances[hit][:, None]
    errors: np.ndarray = np.linalg.norm(points[hit] - truth, axis=1)
    return errors


def frame_digest(frame: Frame) -> str:
    """SHA-256 of a frame's RGB, depth and instance bytes."""
    digest = hashlib.sha256()
    for array in (frame.rgb, frame.depth, frame.instance):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def _digest_in_subprocess(scene: str, seed: int, pose: tuple[float, float, float]) -> str:
    code = f"from sg_search.bench.sim import _digest_here; print(_digest_here({scene!r}, {seed}, {pose!r}))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    return out.stdout.strip().splitlines()[-1]


def _digest_here(scene: str, seed: int, pose: tuple[float, float, float]) -> str:
    with SimWorld(layout_house(load_house(scene), seed), camera=CameraConfig(320, 240)) as world:
        world.set_pose(*pose)
        return frame_digest(world.render())


def run(options: BenchOptions) -> BenchReport:
    """All measurements above on ``options.episodes`` test episodes/houses."""
    summary: dict[str, float] = {}
    rows: list[dict[str, Any]] = []
    episodes, _ = make_episodes("test", options.episodes, "typical", options.seed)
    for width, height in SIZES:
        errors, times = [], []
        for i, episode in enumerate(episodes):
            with episode_world(episode, CameraConfig(width, height)) as world:
                for pose in random_views(world, 3, options.seed + i):
                    world.set_pose(*pose)
                    errors.append(backprojection_errors(world, world.render()))
                for _ in range(100 // max(len(episodes), 1) + 1):
                    start = time.perf_counter()
                    world.render()
                    times.append((time.perf_counter() - start) * 1e3)
        e = np.concatenate(errors) * 1e3
        key = f"{width}x{height}"
        summary.update(
            {
                f"{key}/backprojection_mm_median": float(np.median(e)),
                f"{key}/backprojection_mm_p95": float(np.percentile(e, 95)),
                f"{key}/backprojection_mm_p99": float(np.percentile(e, 99)),
                f"{key}/backprojection_share_over_1cm": float(np.mean(e > 10.0)),
                f"{key}/backprojection_mm_max": float(np.max(e)),
                f"{key}/frame_ms_median": float(np.median(times[:100])),
            }
        )
    closed, opened = [], []
    inside, _ = make_episodes("test", 25 * options.episodes, "typical", options.seed)
    for episode in [e for e in inside if e.relation == "inside"][: options.episodes]:
        # A drawer's inside is seen from above: the HSR's head camera (1.3 m), not 0.9 m.
        drawer = furniture_specs()[episode.container].opening == "drawer"
        with episode_world(episode, CameraConfig(320, 240, height_m=1.3 if drawer else 0.9)) as world:
            if episode.container_id not in world.spec.openable:
                continue
            # A drawer comes out towards the camera: look from further back (and open from there).
            travel = world.spec.open_value[episode.container_id] if drawer else 0.0
            gaps = tuple(g + travel for g in (0.8, 0.6, 1.0, 1.2))
            view = facing_viewpoint(world, episode.container_id, gaps=gaps, in_sight=True)
            if view is None:
                rows.append({"episode": episode.to_json(), "error": "no free view with it in sight"})
                continue
            world.set_pose(*view[:3], tilt=view[3])
            closed.append(world.visible_pixels(TARGET_ID))
            world.set_open(episode.container_id, True, reach_m=1.0 + travel)
            opened.append(world.visible_pixels(TARGET_ID))
            rows.append({"episode": episode.to_json(), "closed_px": closed[-1], "open_px": opened[-1]})
    summary["containers/tested"] = float(len(closed))
    summary["containers/closed_px_max"] = float(max(closed, default=0))
    summary["containers/open_px_min"] = float(min(opened, default=0))
    summary["containers/open_visible_share"] = float(np.mean([p > 0 for p in opened])) if opened else 0.0
    scene, seed = episodes[0].scene, episodes[0].layout_seed
    with SimWorld(layout_house(load_house(scene), seed), camera=CameraConfig(320, 240)) as world:
        pose = random_views(world, 1, options.seed)[0]
    summary["determinism/same_digest_two_processes"] = float(
        _digest_here(scene, seed, pose) == _digest_in_subprocess(scene, seed, pose)
    )
    valid = 0
    for name in scene_names():
        try:
            with SimWorld(layout_house(load_house(name), 0), camera=CameraConfig(64, 48)):
                valid += 1
        except Exception as exc:
            rows.append({"scene": name, "error": f"{type(exc).__name__}: {exc}"})
    summary["houses/valid"] = float(valid)
    summary["houses/total"] = float(len(scene_names()))
    return BenchReport("sim", options, summary, rows)
