"""``sim_bridge``: the MuJoCo world behind the same topics as a robot driver.

Publishes ``rgb`` (rgb8), ``depth`` (32FC1 metres, 0 = no return), ``camera_info``,
``instances`` (32SC1 ground-truth instance ids, 0 = none) and ``instance_categories``
(std_msgs/String, JSON {id: [scene-graph id, category]}, latched), ``odom``, ``/tf``
(map -> odom identity, odom -> base_link; base_link -> camera optical frame) and ``/clock``.
Subscribes ``cmd_vel``. Services ``open`` and ``close`` (SetContainer: a perceived node's
container found by its box, a close acting on what the node's open opened;
:meth:`SimWorld.set_open_for`) and ``reset_episode`` (std_srvs/Trigger). Action ``look_at``
(LookAt): the camera tilts towards the point, the head rises (up to ``head_lift_max_m``, as
the HSR's torso lift) until it looks down on the point at ``look_down_min_rad`` at least, so
that it sees into an open drawer over its front, and the base turns to face it (the simulated
robot has no separate head pan); the camera returns to ``camera_tilt_rad`` and the head comes
down when the base drives forward again.

Time is simulated: every tick advances the clock by 1/rate_hz and integrates the last
velocity command over exactly that step, so results do not depend on how fast the machine
renders (a slow machine runs simulated time slower than the wall clock). Run the other nodes
with ``use_sim_time:=true``. The world lives in its own thread (GL contexts are per thread).
"""

from __future__ import annotations

import json
import math
import threading
import time

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.action import ActionServer
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import LookAt
from sg_search_interfaces.srv import SetContainer
from std_msgs.msg import String
from std_srvs.srv import Trigger

from sg_search.ros.liveliness import announce_alive
from sg_search.ros.params import declare_config
from sg_search.ros.qos import CMD_VEL_QOS, LATCHED_QOS
from sg_search.ros.sensor_publishers import SensorPublishers
from sg_search.sim.layout import HouseLayout
from sg_search.sim.mujoco.config import SimBridgeConfig
from sg_search.sim.mujoco.mjcf import SmallObject
from sg_search.sim.mujoco.scene import layout_for, start_point
from sg_search.sim.mujoco.world import Frame, SimError, SimWorld, WrongSideError


class SimBridge(Node):
    """One simulated house; see the module docstring."""

    def __init__(self, node_name: str = "sim_bridge", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, SimBridgeConfig)
        self._alive = announce_alive(self)  # the reasoner ends a search whose simulator died
        c = self.config
        layout = layout_for(c.scene, c.layout_seed)
        self._objects = (
            [SmallObject("target", c.target_query, c.target_relation, c.target_holder)]
            if c.target_query
            else []
        )
        self._start_room = layout.room(c.start_room) if c.start_room else layout.rooms[0]
        self.world_lock = threading.Lock()  # held by whoever reads or changes the world
        self.last_frame: Frame | None = None
        self._time_ns = 0
        self._command = (0.0, 0.0, -math.inf)  # v, w, sim time received [s]
        self._running = False
        # An EGL context belongs to the thread that made it: one thread builds, renders and
        # closes the world; callbacks only change its state under the lock.
        self._ready, self._stop = threading.Event(), threading.Event()
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(layout,), name="sim", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise self._failure
        self._sensors = SensorPublishers(self, (c.map_frame, c.odom_frame, c.base_frame, c.camera_frame))
        self._table = self.create_publisher(String, "instance_categories", LATCHED_QOS)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, CMD_VEL_QOS)
        self.create_service(SetContainer, "open", lambda req, res: self._set_container(req, res, True))
        self.create_service(SetContainer, "close", lambda req, res: self._set_container(req, res, False))
        self.create_service(Trigger, "reset_episode", self._on_reset)
        ActionServer(
            self, LookAt, "look_at", execute_callback=self._look_at, callback_group=ReentrantCallbackGroup()
        )
        self._publish_table()
        self._running = True
        self.get_logger().info(
            f"{c.scene} (seed {c.layout_seed}): {len(layout.rooms)} rooms, "
            f"{len(layout.furniture)} furniture, "
            f"{c.width}x{c.height} at {c.rate_hz:g} Hz of simulated time"
        )

    @property
    def now_s(self) -> float:
        """Simulated time [s]."""
        return self._time_ns * 1e-9

    def _on_cmd_vel(self, msg: Twist) -> None:
        v, w = msg.linear.x, msg.angular.z
        if not (math.isfinite(v) and math.isfinite(w)):
            self.get_logger().warning(f"ignored cmd_vel with non-finite values ({v}, {w})")
            return
        c = self.config
        with self.world_lock:
            self._command = (
                float(np.clip(v, -c.max_linear_mps, c.max_linear_mps)),
                float(np.clip(w, -c.max_angular_rps, c.max_angular_rps)),
                self.now_s,
            )

    def _run(self, layout: HouseLayout) -> None:
        try:
            self.world = SimWorld(layout, self._objects, self.config.camera())
            self._start = (*start_point(self.world, self._start_room.room_id), 0.0)
            self.world.set_pose(*self._start, tilt=self.config.camera_tilt_rad, lift=0.0)
        except BaseException as exc:  # handed to the constructor, which raises it
            self._failure = exc
            return
        finally:
            self._ready.set()
        period = 1.0 / self.config.rate_hz
        deadline = time.monotonic()
        try:
            while not self._stop.is_set():
                if self._running:
                    self._tick()
                deadline = max(deadline + period, time.monotonic() - period)  # no racing to catch up
                self._stop.wait(max(0.0, deadline - time.monotonic()))
        finally:
            self.world.close()

    def _tick(self) -> None:
        dt = 1.0 / self.config.rate_hz
        with self.world_lock:
            v, w, since = self._command
            if self.now_s - since > self.config.cmd_vel_timeout_s:
                v = w = 0.0
            if v or w:
                if v and self.world.tilt != self.config.camera_tilt_rad:  # the head looks ahead when driving
                    self.world.set_pose(*self.world.pose, tilt=self.config.camera_tilt_rad)
                self.world.step_velocity(v, w, dt)
            self._time_ns += round(dt * 1e9)
            frame = self.world.render()
            self.last_frame = frame
            pose = self.world.pose
        self._publish(frame, pose, v, w)

    def _publish(self, frame: Frame, pose: tuple[float, float, float], v: float, w: float) -> None:
        f = frame
        self._sensors.publish(
            self._time_ns, pose, (v, w), f.T_map_camera, f.rgb, f.depth, f.instance, f.intrinsics
        )

    def _publish_table(self) -> None:
        table = {str(k): list(v) for k, v in self.world.instances.items()}
        self._table.publish(String(data=json.dumps(table)))

    def _set_container(
        self, request: SetContainer.Request, response: SetContainer.Response, open_: bool
    ) -> SetContainer.Response:
        with self.world_lock:
            p = request.point
            try:
                node_id = self.world.set_open_for(
                    request.node_id, (p.x, p.y, p.z), open_, self.config.reach_m
                )
            except SimError as exc:
                response.success, response.message = False, str(exc)
                wrong_side = isinstance(exc, WrongSideError)
                response.error_code = (
                    SetContainer.Response.WRONG_SIDE if wrong_side else SetContainer.Response.REFUSED
                )
                return response
        response.success, response.message = True, f"{node_id} {'opened' if open_ else 'closed'}"
        return response

    def _look_at(self, handle: ServerGoalHandle) -> LookAt.Result:
        target = handle.request.target
        result = LookAt.Result()
        p = target.point
        if target.header.frame_id not in ("", self.config.map_frame) or not all(
            math.isfinite(v) for v in (p.x, p.y, p.z)
        ):
            handle.abort()
            result.error_code = LookAt.Result.INVALID_GOAL
            result.error_msg = f"target must be a finite point in {self.config.map_frame!r}"
            return result
        with self.world_lock:
            x, y, _ = self.world.pose
            self.world.set_pose(x, y, math.atan2(p.y - y, p.x - x))
            c = self.config
            self.world.aim_head((p.x, p.y, p.z), c.head_lift_max_m, c.look_down_min_rad)
            result.pan, result.tilt = 0.0, float(-self.world.tilt)  # LookAt: negative tilt looks down
        handle.succeed()
        return result

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self.world_lock:
            self.world.close_all()
            self.world.set_pose(*self._start, tilt=self.config.camera_tilt_rad, lift=0.0)
            self._command = (0.0, 0.0, -math.inf)
        response.success, response.message = True, "episode reset: start pose, every container closed"
        return response

    def destroy_node(self) -> None:
        """Stop the simulation thread (it releases the renderer), then the node."""
        self._stop.set()
        self._thread.join(timeout=10.0)
        super().destroy_node()
