"""A MuJoCo house the agent moves through and renders on the CPU (Mesa EGL, or OSMesa).

Frames (:class:`Frame`): RGB uint8 (H, W, 3); depth float32 metres along the optical axis
(z-depth), **0 where nothing was hit** (beyond ``max_depth_m``); instance int32 ids (0 =
background/none) with a table id -> (scene-graph node id, category); intrinsics fx, fy, cx,
cy in pixels (``fx = fy = (H/2)/tan(fovy/2)``, ``cx = (W-1)/2``, ``cy = (H-1)/2``, MuJoCo's
own projection); ``T_map_camera``, the 4x4 pose of the optical frame (x right, y down, z
forward, REP 103 camera convention) in ``map``.

The base moves kinematically: a velocity command or a discrete action moves it only if the
new footprint is free on :func:`~sg_search.sim.mujoco.collision.collision_raster` (the drawn
walls and furniture; 0.2 m radius), so the state is always valid. ``open``/``close`` set a container's hinge.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from sg_search.planning.viewpoints import beyond_face, in_front
from sg_search.sim.layout import HouseLayout
from sg_search.sim.mujoco.camera_render import CameraRenderer
from sg_search.sim.mujoco.mjcf import SmallObject, build_mjcf

TILT_RANGE = (-0.8, 1.2)  # [rad] the camera's tilt limits (positive looks down)
# [m] how far past the hinged edge of a door the base centre may stand to open it: the
# tolerance a drive to a reach viewpoint ends within (planning reach_tolerance_m)
HINGE_MARGIN_M = 0.1


class SimError(ValueError):
    """A request the simulator refuses (the message says why); the state is unchanged."""


class WrongSideError(SimError):
    """An open or close refused because the base does not stand in front of the face the
    container opens towards."""


@dataclass(frozen=True)
class CameraConfig:
    """Agent camera: size [px], vertical field of view [deg], height above the floor [m],
    and the farthest valid depth [m]."""

    width: int = 640
    height: int = 480
    fovy_deg: float = 60.0
    height_m: float = 0.9
    max_depth_m: float = 20.0

    def intrinsics(self) -> tuple[float, float, float, float]:
        """(fx, fy, cx, cy) in pixels."""
        f = (self.height / 2) / math.tan(math.radians(self.fovy_deg) / 2)
        return f, f, (self.width - 1) / 2, (self.height - 1) / 2


@dataclass
class Frame:
    """One rendered frame (see the module docstring for units and frames)."""

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    intrinsics: tuple[float, float, float, float]
    T_map_camera: np.ndarray
    instances: dict[int, tuple[str, str]] = field(default_factory=dict)


class SimWorld:
    """One house with placed objects, an agent and a renderer. Call :meth:`close` (or use
    ``with``) to release the GL context."""

    def __init__(
        self,
        layout: HouseLayout,
        objects: list[SmallObject] | None = None,
        camera: CameraConfig | None = None,
    ) -> None:
        import mujoco

        from sg_search.sim.mujoco.collision import collision_raster

        self.layout = layout
        self.camera = camera or CameraConfig()
        self.spec = build_mjcf(layout, objects, self.camera.width, self.camera.height, self.camera.fovy_deg)
        self._mj = mujoco
        self.model = mujoco.MjModel.from_xml_string(self.spec.xml)
        extent = float(self.model.stat.extent)
        self.model.vis.map.znear = 0.05 / extent
        self.model.vis.map.zfar = max(self.camera.max_depth_m * 1.5, 1.0) / extent
        self.data = mujoco.MjData(self.model)
        try:
            self._renderer: CameraRenderer | None = CameraRenderer(
                self.model, "agent_camera", self.camera.width, self.camera.height
            )
        except (mujoco.FatalError, RuntimeError) as exc:
            raise SimError(
                f"no OpenGL context ({exc}); MUJOCO_GL is {os.environ.get('MUJOCO_GL')!r}: use egl (Mesa) or "
                "osmesa (apt install libosmesa6), set before anything imports mujoco"
            ) from exc
        self.free, self.grid = collision_raster(layout)
        self._build_instance_table()
        self.pose = (layout.rooms[0].center[0], layout.rooms[0].center[1], 0.0)
        self.tilt = 0.0
        self.lift = 0.0  # [m] the head raised above camera.height_m (a torso lift); 0 while driving
        self.actions = 0  # move/turn commands executed (one per call of move)
        self.travelled = 0.0  # [m] path length of the base
        self.render_s = 0.0  # [s] wall time spent rendering (the floor of an episode's cost)
        self.opens = 0  # successful open actions on a closed container
        self._opened_for: dict[str, str] = {}  # a caller's node id -> the container its last open opened
        self.set_pose(*self.pose)

    # ------------------------------------------------------------------ bookkeeping
    def _build_instance_table(self) -> None:
        m, mj = self.model, self._mj
        names = [mj.mj_id2name(m, mj.mjtObj.mjOBJ_BODY, b) or "" for b in range(m.nbody)]
        node_of_body = [n.rsplit("/", 1)[0] if n.endswith(("/door", "/drawer")) else n for n in names]
        ids: dict[str, int] = {}
        self.instances: dict[int, tuple[str, str]] = {}
        for name, node in zip(names, node_of_body, strict=True):
            if name and node not in ids and node not in ("world", "agent_camera"):
                ids[node] = len(ids) + 1
                self.instances[ids[node]] = (node, self.spec.categories.get(name, ""))
        body_instance = np.array([ids.get(n, 0) for n in node_of_body], dtype=np.int32)
        self._geom_instance = body_instance[m.geom_bodyid]
        self.instance_id = ids

    def close(self) -> None:
        """Release the renderer (safe to call twice)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

    def __enter__(self) -> SimWorld:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ state
    def set_pose(
        self, x: float, y: float, yaw: float, tilt: float | None = None, lift: float | None = None
    ) -> None:
        """Put the base at (x, y) [m] with heading ``yaw`` [rad] (no collision check), the
        camera ``tilt`` [rad] (positive looks down) and the head ``lift`` [m] above
        ``camera.height_m`` (None keeps each as it is)."""
        for name, value in (("x", x), ("y", y), ("yaw", yaw)):
            if not math.isfinite(value):
                raise SimError(f"pose {name} must be finite, got {value}")
        self.pose = (x, y, yaw)
        if tilt is not None:
            self.tilt = float(np.clip(tilt, *TILT_RANGE))
        if lift is not None:
            if not (math.isfinite(lift) and lift >= 0):
                raise SimError(f"head lift must be finite and >= 0, got {lift}")
            self.lift = float(lift)
        agent, cam = self.model.body("agent").mocapid[0], self.model.body("agent_camera").mocapid[0]
        self.data.mocap_pos[agent] = (x, y, 0.0)
        self.data.mocap_quat[agent] = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))
        self.data.mocap_pos[cam] = (x, y, self.camera.height_m + self.lift)
        # yaw about z, then pitch down about the body's y axis
        q_yaw = np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
        q_tilt = np.array([math.cos(self.tilt / 2), 0.0, math.sin(self.tilt / 2), 0.0])
        q = np.empty(4)
        self._mj.mju_mulQuat(q, q_yaw, q_tilt)
        self.data.mocap_quat[cam] = q
        self._mj.mj_forward(self.model, self.data)

    def is_free(self, x: float, y: float) -> bool:
        """True if the base footprint at (x, y) is clear of walls and furniture."""
        ((row, col),) = self.grid.to_cells(np.array([[x, y]]))
        return bool(0 <= row < self.free.shape[0] and 0 <= col < self.free.shape[1] and self.free[row, col])

    def move(self, forward_m: float, turn_rad: float) -> bool:
        """Turn, then drive forward in small steps until blocked; True if it moved the full way."""
        x, y, yaw = self.pose
        yaw = math.atan2(math.sin(yaw + turn_rad), math.cos(yaw + turn_rad))
        steps = max(1, int(abs(forward_m) / 0.02))
        moved_all = True
        for _ in range(steps):
            nx, ny = x + math.cos(yaw) * forward_m / steps, y + math.sin(yaw) * forward_m / steps
            if not self.is_free(nx, ny):
                moved_all = False
                break
            x, y = nx, ny
        self.actions += 1
        self.travelled += math.hypot(x - self.pose[0], y - self.pose[1])
        self.set_pose(x, y, yaw, lift=0.0 if forward_m else None)  # the head comes down to drive
        return moved_all

    def step_velocity(self, v: float, w: float, dt: float) -> bool:
        """Integrate a velocity command (v [m/s] forward, w [rad/s]) for ``dt`` seconds. A base
        blocked by a wall slides along it (the free one of the x/y components of the step, as
        Habitat's navmesh ``try_step`` does), so a path that grazes a door jamb still moves."""
        if not all(math.isfinite(a) for a in (v, w, dt)) or dt < 0:
            raise SimError(f"velocity command must be finite with dt >= 0, got v={v}, w={w}, dt={dt}")
        x, y, _ = self.pose
        if self.move(v * dt, w * dt) or not v:
            return True
        yaw = self.pose[2]
        dx, dy = math.cos(yaw) * v * dt, math.sin(yaw) * v * dt
        for sx, sy in sorted(((x + dx, y), (x, y + dy)), key=lambda p: -math.dist(p, (x, y))):
            if self.is_free(sx, sy) and math.dist((sx, sy), self.pose[:2]) > 1e-9:
                self.travelled += math.dist((sx, sy), self.pose[:2])
                self.set_pose(sx, sy, yaw, lift=0.0)
                return False
        return False

    def discrete(self, action: str) -> bool:
        """Habitat's actions: "move_forward" (0.25 m), "turn_left"/"turn_right" (30 deg),
        "look_up"/"look_down" (30 deg), "stop"."""
        if action == "move_forward":
            return self.move(0.25, 0.0)
        if action in ("turn_left", "turn_right"):
            return self.move(0.0, math.radians(30) * (1 if action == "turn_left" else -1))
        if action in ("look_up", "look_down"):
            self.set_pose(
                *self.pose, tilt=self.tilt + math.radians(30) * (1 if action == "look_down" else -1)
            )
            return True
        if action == "stop":
            return True
        raise SimError(
            f"unknown action {action!r}; use move_forward, turn_left, turn_right, look_up, look_down, stop"
        )

    def aim_head(
        self,
        target: tuple[float, float, float],
        max_lift_m: float,
        min_down_rad: float,
        min_tilt_rad: float = TILT_RANGE[0],
    ) -> None:
        """Tilt the camera at ``target`` [m, map] from the base's pose, raising the head (up to
        ``max_lift_m``) until the line of sight descends at least ``min_down_rad``: how a robot
        with a torso lift looks over the front of an open drawer into it. The tilt is at
        least ``min_tilt_rad``. The yaw is left as it is."""
        x, y, _ = self.pose
        distance = max(math.hypot(target[0] - x, target[1] - y), 0.05)
        needed = target[2] + distance * math.tan(min_down_rad) - self.camera.height_m
        lift = min(max(needed, 0.0), max_lift_m)
        tilt = math.atan2(self.camera.height_m + lift - target[2], distance)
        self.set_pose(*self.pose, tilt=max(tilt, min_tilt_rad), lift=lift)

    def look_at(self, node_id: str) -> None:
        """Inspect: turn the base and tilt the camera towards a body's centre (no travel)."""
        try:
            target = self.data.body(node_id).xpos
        except KeyError:
            raise SimError(f"no body {node_id!r} in {self.layout.scene}") from None
        x, y, _ = self.pose
        self.set_pose(x, y, math.atan2(target[1] - y, target[0] - x))
        self.aim_head((float(target[0]), float(target[1]), float(target[2])), 0.0, 0.0)

    def distance_to(self, node_id: str, xy: tuple[float, float] | None = None) -> float:
        """Distance [m] from the base centre (or the point ``xy``) to the footprint of a furniture item."""
        item = next((f for f in self.layout.furniture if f.furniture_id == node_id), None)
        if item is None:
            raise SimError(f"no furniture {node_id!r} in {self.layout.scene}")
        x, y = xy if xy is not None else self.pose[:2]
        dx = max(abs(x - item.center[0]) - item.size[0] / 2, 0.0)
        dy = max(abs(y - item.center[1]) - item.size[1] / 2, 0.0)
        return math.hypot(dx, dy)

    def check_opens_from(self, node_id: str, xy: tuple[float, float], reach_m: float = 1.0) -> None:
        """SimError if a base centred at ``xy`` [m] could not open or close the container
        ``node_id``: it is not openable, out of reach, or the base is not in front of it (on the
        floor of the container's room, beyond the face it opens towards and, for a door, not more
        than :data:`HINGE_MARGIN_M` past its hinged edge: a door is not opened through a wall,
        from beside the carcass, or from past the corner where the opened door stands between the
        camera and the inside)."""
        joint = self.spec.openable.get(node_id)
        if joint is None:
            what = "is not openable" if node_id in self.spec.categories else "does not exist"
            raise SimError(f"{node_id!r} {what}")
        distance = self.distance_to(node_id, xy)
        if distance > reach_m:
            raise SimError(f"{node_id!r} is {distance:.2f} m away; reach is {reach_m:.2f} m")
        item = next(f for f in self.layout.furniture if f.furniture_id == node_id)
        if not self.layout.room(item.room_id).contains(*xy):
            raise WrongSideError(f"{node_id!r} is in {item.room_id}; the base is not (a wall stands between)")
        front = self.spec.fronts[node_id]
        hinge = self.spec.hinge_sides.get(node_id)
        past_hinge = hinge is not None and beyond_face(xy, item.center, item.size, hinge) > HINGE_MARGIN_M
        if past_hinge or not in_front(xy, item.center, item.size, front):
            towards = f"({front[0]:+.0f}, {front[1]:+.0f})"
            raise WrongSideError(f"{node_id!r} opens towards {towards}; the base is not in front of it")

    def set_open(self, node_id: str, open_: bool, reach_m: float = 1.0) -> None:
        """Open or close a container's door or drawer; SimError if the base cannot from where it
        stands (:meth:`check_opens_from`)."""
        self.check_opens_from(node_id, (self.pose[0], self.pose[1]), reach_m)
        joint = self.spec.openable[node_id]
        was_open = self.is_open(node_id)
        self.data.qpos[self.model.joint(joint).qposadr[0]] = self.spec.open_value[node_id] if open_ else 0.0
        self._mj.mj_forward(self.model, self.data)
        if open_ and not was_open:
            self.opens += 1

    def set_open_for(
        self, key: str, point: tuple[float, float, float], open_: bool, reach_m: float = 1.0
    ) -> str:
        """Open or close the container a caller's node stands for and return its id. ``key`` is
        the caller's node id and ``point`` [m, map] the centre of its box. A close acts on what
        the key's last open opened (the box may have moved since, onto a container behind the
        wall; the record outlives the close, so a retried close acts on the same one); else a
        simulator id acts on itself, and a perceived node on the container nearest its box
        (:meth:`openable_near`). SimError if there is none, or as :meth:`set_open`."""
        handle = (None if open_ else self._opened_for.get(key)) or (
            key if key in self.spec.openable else self.openable_near(*point)
        )
        if handle is None:
            x, y, z = point
            what = "is not openable" if key in self.spec.categories else "names no container"
            raise SimError(
                f"{key!r} {what}, and nothing openable is near its box at ({x:.2f}, {y:.2f}, {z:.2f})"
            )
        self.set_open(handle, open_, reach_m)
        if open_:
            self._opened_for[key] = handle
        return handle

    def openable_near(self, x: float, y: float, z: float, tolerance_m: float = 0.3) -> str | None:
        """The openable container whose box is nearest (x, y, z) [m], if within ``tolerance_m``:
        how a perceived container (the robot's own id and box) finds its handle in the world."""
        best, best_gap = None, tolerance_m
        for item in self.layout.furniture:
            if item.furniture_id not in self.spec.openable:
                continue
            gap = math.hypot(
                *(
                    max(abs(p - c) - s / 2, 0.0)
                    for p, c, s in zip((x, y, z), item.center, item.size, strict=True)
                )
            )
            if gap <= best_gap:
                best, best_gap = item.furniture_id, gap
        return best

    def close_all(self) -> None:
        """Close every container (an episode reset; no reach check)."""
        self._opened_for.clear()
        for joint in self.spec.openable.values():
            self.data.qpos[self.model.joint(joint).qposadr[0]] = 0.0
        self._mj.mj_forward(self.model, self.data)

    def is_open(self, node_id: str) -> bool:
        """True if the container's door is open."""
        joint = self.spec.openable[node_id]
        return bool(self.data.qpos[self.model.joint(joint).qposadr[0]] > 0.5 * self.spec.open_value[node_id])

    # ------------------------------------------------------------------ rendering
    def camera_pose(self) -> np.ndarray:
        """4x4 pose of the optical frame (x right, y down, z forward) in ``map``."""
        cam = self.model.camera("agent_camera").id
        rotation = self.data.cam_xmat[cam].reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
        pose = np.eye(4)
        pose[:3, :3], pose[:3, 3] = rotation, self.data.cam_xpos[cam]
        return pose

    def render(self) -> Frame:
        """RGB, depth and instances from the agent camera."""
        if self._renderer is None:
            raise SimError("the renderer is closed")
        started = time.perf_counter()
        rgb, depth, geoms = self._renderer.render(self.data)
        self.render_s += time.perf_counter() - started
        depth[(depth <= 0) | (depth > self.camera.max_depth_m)] = 0.0
        instance = np.where(geoms >= 0, self._geom_instance[np.clip(geoms, 0, None)], 0).astype(np.int32)
        return Frame(rgb, depth, instance, self.camera.intrinsics(), self.camera_pose(), dict(self.instances))

    def visible_pixels(self, node_id: str, frame: Frame | None = None) -> int:
        """Pixels of ``node_id`` in ``frame`` (rendered now if not given)."""
        frame = frame or self.render()
        return int(np.count_nonzero(frame.instance == self.instance_id.get(node_id, -1)))
