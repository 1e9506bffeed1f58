"""Worlds for episodes and views: where the target goes and where the agent may stand."""

from __future__ import annotations

import math
import random

import numpy as np
from scipy import ndimage

from sg_search.sim.bddl_scenes import load_house
from sg_search.sim.episodes import Episode
from sg_search.sim.layout import HouseLayout, layout_house
from sg_search.sim.metrics import distance_to_success, reachable_cells
from sg_search.sim.mujoco.mjcf import SmallObject, drawer_floor, inner_floor
from sg_search.sim.mujoco.world import CameraConfig, SimError, SimWorld

TARGET_ID = "target"


def episode_objects(episode: Episode) -> list[SmallObject]:
    """The episode's target as a small object ``target`` where the episode puts it."""
    holder = episode.container_id or episode.room_id
    return [SmallObject(TARGET_ID, episode.query, episode.relation, holder)]


def episode_world(episode: Episode, camera: CameraConfig | None = None) -> SimWorld:
    """The episode's house with the target placed and the agent at the start room's centre
    (or the nearest free spot to it)."""
    layout = layout_house(load_house(episode.scene), episode.layout_seed)
    world = SimWorld(layout, episode_objects(episode), camera)
    x, y = start_point(world, episode.start_room_id)
    world.set_pose(x, y, 0.0)
    return world


def solvable(episode: Episode) -> bool:
    """True if an agent can succeed in the episode, as ObjectNav keeps only such episodes: the
    base can drive from the start into the success region (a free cell within 1 m of the
    target, over the world's own collision map), and a target inside a container that opens can
    be seen (:func:`opens_from_its_room`). A target in a pocket the base cannot enter (behind
    a run of cabinets), or in a cabinet whose front other furniture closes off, makes an
    episode no agent can succeed in."""
    with episode_world(episode) as world:
        if not math.isfinite(distance_to_success(world, TARGET_ID)):
            return False
        return episode.relation != "inside" or opens_from_its_room(world, episode.container_id)


def opens_from_its_room(world: SimWorld, container_id: str, reach_m: float = 1.0) -> bool:
    """True if the container does not open (what lies in it is seen without opening it), or
    the base can drive from where it stands to a cell from which the simulator lets it open the
    container within ``reach_m`` [m] (:meth:`SimWorld.check_opens_from`: a cell of its room)."""
    if container_id not in world.spec.openable:
        return True
    item = next(f for f in world.layout.furniture if f.furniture_id == container_id)
    centres, _ = reachable_cells(world)
    half = np.asarray(item.size[:2]) / 2 + reach_m
    near = np.all(np.abs(centres - np.asarray(item.center[:2])) <= half, axis=1)
    for x, y in centres[near]:
        try:
            world.check_opens_from(container_id, (float(x), float(y)), reach_m)
        except SimError:
            continue
        return True
    return False


MIN_REGION_M2 = 1.0  # [m^2] free regions smaller than this are pockets between furniture
MIN_START_TO_TARGET_M = 2.0
"""[m] An episode starts at least this far (straight line) from its target: outside the 1 m
success region by one more success distance, as ObjectNav's datasets start outside theirs.
Without it a one-room house starts the robot on top of an "in the room" target."""


def start_point(world: SimWorld, room_id: str) -> tuple[float, float]:
    """Where an episode starts [m, layout frame]: the free cell nearest the centre of
    ``room_id`` (see :func:`nearest_free`) that is at least ``MIN_START_TO_TARGET_M`` from the
    target (if the world has one)."""
    try:
        x, y = (float(v) for v in world.data.body(TARGET_ID).xpos[:2])
    except KeyError:
        return nearest_free(world, *world.layout.room(room_id).center)
    return nearest_free(world, *world.layout.room(room_id).center, away_from=((x, y), MIN_START_TO_TARGET_M))


def free_regions(world: SimWorld) -> np.ndarray:
    """The layout raster's connected free regions (8-connected; 0 = not free), per cell."""
    regions, _ = ndimage.label(world.free, structure=np.ones((3, 3), dtype=bool))
    return np.asarray(regions)


def nearest_free(
    world: SimWorld, x: float, y: float, away_from: tuple[tuple[float, float], float] | None = None
) -> tuple[float, float]:
    """The free raster cell centre nearest to (x, y) [m] from which the base can drive: in a
    connected free region of at least ``MIN_REGION_M2`` (a room's centre between a table's
    chairs can be a free pocket a few centimetres wide that the base never leaves);
    ``away_from`` = (point, distance [m]): only cells at least that far from the point."""
    regions = free_regions(world)
    cells = np.bincount(regions.ravel())
    cells[0] = 0  # not free
    rows, cols = np.nonzero((cells * world.grid.resolution**2 >= MIN_REGION_M2)[regions])
    centres = world.grid.to_metres(np.stack([rows, cols], axis=1))
    if away_from is not None:
        (px, py), distance = away_from
        centres = centres[np.hypot(centres[:, 0] - px, centres[:, 1] - py) >= distance]
    if not len(centres):
        raise ValueError(
            f"{world.layout.scene}: no free region of {MIN_REGION_M2} m^2 in the layout"
            + (f" at least {away_from[1]} m from {away_from[0]}" if away_from else "")
        )
    best = int(np.argmin(np.hypot(centres[:, 0] - x, centres[:, 1] - y)))
    return float(centres[best, 0]), float(centres[best, 1])


def random_views(world: SimWorld, n: int, seed: int) -> list[tuple[float, float, float]]:
    """``n`` seeded free poses (x, y, yaw) spread over the house."""
    rng = random.Random(seed)
    rows, cols = np.nonzero(world.free)
    centres = world.grid.to_metres(np.stack([rows, cols], axis=1))
    picks = [centres[rng.randrange(len(centres))] for _ in range(n)]
    return [(float(p[0]), float(p[1]), rng.uniform(-math.pi, math.pi)) for p in picks]


def layout_for(scene: str, seed: int) -> HouseLayout:
    """The laid-out house (SceneError naming close matches for an unknown scene)."""
    return layout_house(load_house(scene), seed)


def facing_viewpoint(
    world: SimWorld, node_id: str, gaps: tuple[float, ...] = (0.8, 0.6, 1.0, 1.2), in_sight: bool = False
) -> tuple[float, float, float, float] | None:
    """A free pose (x, y, yaw, tilt) in front of furniture ``node_id``, looking at where its
    content lies (a drawer's floor, else just above the bottom): the first free spot at
    ``gaps`` metres from its front (also shifted sideways by up to 0.3 m); with ``in_sight``,
    also the first from which a render shows the item at the image centre (nothing else in
    between). None if every candidate is blocked. Leaves the agent where it was."""
    item = next((f for f in world.layout.furniture if f.furniture_id == node_id), None)
    if item is None or node_id not in world.spec.fronts:
        return None
    nx, ny = world.spec.fronts[node_id]
    depth = abs(nx) * item.size[0] + abs(ny) * item.size[1]
    for gap in gaps:
        for side in (0.0, 0.3, -0.3):
            x = item.center[0] + nx * (depth / 2 + gap) - ny * side
            y = item.center[1] + ny * (depth / 2 + gap) + nx * side
            if world.is_free(x, y):
                floor = (  # what lies inside stands here
                    item.center[2] + drawer_floor(item)
                    if item.opening == "drawer"
                    else inner_floor(item) + 0.08
                )
                drop = world.camera.height_m - floor
                yaw = math.atan2(item.center[1] - y, item.center[0] - x)
                view = (x, y, yaw, math.atan2(drop, gap + depth / 2))
                if not in_sight or _centre_shows(world, view, node_id):
                    return view
    return None


def _centre_shows(world: SimWorld, view: tuple[float, float, float, float], node_id: str) -> bool:
    pose, tilt = world.pose, world.tilt
    world.set_pose(*view[:3], tilt=view[3])
    instance = world.render().instance
    world.set_pose(*pose, tilt=tilt)
    h, w = instance.shape
    return bool(instance[h // 2, w // 2] == world.instance_id.get(node_id, -1))
