"""``sg-search sim render``: one agent view of a laid-out house, written as files.

rgb.png; depth_mm.png (uint16 millimetres, 0 = no return); instance.png (uint16 instance
ids, 0 = none) with instances.json (id -> [scene-graph id, category]); camera.json
(fx, fy, cx, cy [px], T_map_camera 4x4, optical frame); topdown.png (rooms, furniture and
the agent).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sg_search.sim.mujoco.scene import layout_for, nearest_free
from sg_search.sim.mujoco.world import CameraConfig, SimWorld


def render_view(
    scene: str,
    seed: int,
    out: Path,
    camera: CameraConfig,
    pose: tuple[float, float, float] | None = None,
) -> list[Path]:
    """Render the view from ``pose`` (x, y, yaw) or from the first room's centre; the files."""
    from PIL import Image

    from sg_search.scene_graph import SceneGraph
    from sg_search.scene_graph.draw import draw_top_down
    from sg_search.scene_graph.prior import add_prior

    layout = layout_for(scene, seed)
    out.mkdir(parents=True, exist_ok=True)
    with SimWorld(layout, camera=camera) as world:
        if pose is None:
            pose = (*nearest_free(world, *layout.rooms[0].center), 0.0)
        if not world.is_free(pose[0], pose[1]):
            raise ValueError(f"({pose[0]:.2f}, {pose[1]:.2f}) is inside a wall or furniture of {scene}")
        world.set_pose(*pose)
        frame = world.render()
    files = [out / n for n in ("rgb.png", "depth_mm.png", "instance.png", "instances.json", "camera.json")]
    Image.fromarray(frame.rgb).save(files[0])
    Image.fromarray(np.clip(frame.depth * 1000.0, 0, 65535).astype(np.uint16)).save(files[1])
    Image.fromarray(frame.instance.astype(np.uint16)).save(files[2])
    files[3].write_text(json.dumps({str(k): list(v) for k, v in frame.instances.items()}, indent=1))
    fx, fy, cx, cy = frame.intrinsics
    files[4].write_text(
        json.dumps(
            {"fx": fx, "fy": fy, "cx": cx, "cy": cy, "T_map_camera": frame.T_map_camera.tolist()}, indent=1
        )
    )
    top = draw_top_down(
        add_prior(layout.to_prior(), SceneGraph()),
        out / "topdown.png",
        title=f"{scene} (seed {seed}; layout synthetic)",
        robot=pose,
    )
    return [*files, top]
