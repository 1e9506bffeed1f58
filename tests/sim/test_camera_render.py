"""The two-pass camera renderer gives, to the bit, what MuJoCo's own ``Renderer`` gives in its
three passes (RGB, depth, segmentation), from any pose of the base and head."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sg_search.sim.mujoco.camera_render import CameraRenderer
from sg_search.sim.mujoco.mjcf import SmallObject
from sg_search.sim.mujoco.scene import facing_viewpoint, layout_for
from sg_search.sim.mujoco.world import CameraConfig, SimWorld

FRIDGE = "kitchen_0/fridge_0"


@pytest.fixture(scope="module")
def world() -> Iterator[SimWorld]:
    layout = layout_for("Rs_int", 0)
    with SimWorld(
        layout, [SmallObject("target", "milk carton", "inside", FRIDGE)], CameraConfig(160, 120)
    ) as w:
        view = facing_viewpoint(w, FRIDGE, gaps=(0.8,))
        assert view is not None
        w.set_pose(*view[:3], tilt=view[3])
        w.set_open(FRIDGE, True)  # the milk carton shows
        yield w


def _three_passes(world: SimWorld) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MuJoCo's Renderer: RGB, depth and (geom id where the pixel shows a geom, else -1)."""
    import mujoco  # after sg_search.sim.mujoco chose the GL backend

    with mujoco.Renderer(world.model, world.camera.height, world.camera.width) as r:
        r.update_scene(world.data, camera="agent_camera")
        rgb = r.render().copy()
        r.enable_depth_rendering()
        r.update_scene(world.data, camera="agent_camera")
        depth = r.render().copy()
        r.enable_segmentation_rendering()
        r.update_scene(world.data, camera="agent_camera")
        seg = r.render()
    geom = np.where(seg[..., 1] == int(mujoco.mjtObj.mjOBJ_GEOM), seg[..., 0], -1)
    return rgb, depth, geom


@settings(max_examples=12, deadline=None)
@given(
    cell=st.integers(0, 10**6),
    yaw=st.floats(-np.pi, np.pi),
    tilt=st.floats(-0.9, 0.3),
    lift=st.floats(0.0, 0.3),
)
def test_two_passes_render_what_three_do(
    world: SimWorld, cell: int, yaw: float, tilt: float, lift: float
) -> None:
    free = np.argwhere(world.free)
    x, y = world.grid.to_metres(free[cell % len(free)][None])[0]
    world.set_pose(float(x), float(y), yaw, tilt=tilt, lift=lift)
    renderer = CameraRenderer(world.model, "agent_camera", world.camera.width, world.camera.height)
    try:
        rgb, depth, geom = renderer.render(world.data)
    finally:
        renderer.close()
    want_rgb, want_depth, want_geom = _three_passes(world)
    assert np.array_equal(rgb, want_rgb)
    assert np.array_equal(depth, want_depth)
    assert np.array_equal(geom, want_geom)
    assert (geom >= 0).any() and (depth > 0).any()  # the view shows something


def test_a_closed_renderer_says_so(world: SimWorld) -> None:
    renderer = CameraRenderer(world.model, "agent_camera", world.camera.width, world.camera.height)
    renderer.close()
    renderer.close()
    with pytest.raises(RuntimeError, match="closed"):
        renderer.render(world.data)


def test_an_unknown_camera_or_an_image_larger_than_the_framebuffer_is_refused(world: SimWorld) -> None:
    with pytest.raises(ValueError, match="no camera 'eye'"):
        CameraRenderer(world.model, "eye", 160, 120)
    width = world.model.vis.global_.offwidth + 1
    with pytest.raises(ValueError, match="offscreen framebuffer"):
        CameraRenderer(world.model, "agent_camera", width, 120)
