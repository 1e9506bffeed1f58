"""``sim_bridge``: the MuJoCo world behind the same topics as a robot driver.

Publishes ``rgb`` (rgb8), ``depth`` (32FC1 metres, 0 = no return), ``camera_info``,
``instances`` (32SC1 ground-truth instance ids, 0 = none) and ``instance_categories``
(std_msgs/String, JSON {id: [scene-graph id, category]}, latched), ``odom``, ``/tf``
(map -> odom identity, odom -> base_link; base_link -> camera optical frame) and ``/clock``.
Subscribes ``cmd_vel``. Services ``open`` and ``close`` (SetContainer) and
``reset_episode`` (std_srvs/Trigger).

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
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.srv import SetContainer
from std_msgs.msg import String
from std_srvs.srv import Trigger

from sg_search.geometry.transforms import Transform, quat_from_matrix, quat_from_yaw
from sg_search.ros.images import depth_to_msg
from sg_search.ros.params import declare_config
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.sim.layout import HouseLayout
from sg_search.sim.mujoco.config import SimBridgeConfig
from sg_search.sim.mujoco.mjcf import SmallObject
from sg_search.sim.mujoco.scene import layout_for, nearest_free
from sg_search.sim.mujoco.world import Frame, SimError, SimWorld

SENSOR_QOS = QoSProfile(depth=2, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class SimBridge(Node):
    """One simulated house; see the module docstring."""

    def __init__(self, node_name: str = "sim_bridge", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, SimBridgeConfig)
        c = self.config
        layout = layout_for(c.scene, c.layout_seed)
        self._objects = (
            [SmallObject("target", c.target_query, c.target_relation, c.target_holder)]
            if c.target_query
            else []
        )
        self._start_room = layout.room(c.start_room) if c.start_room else layout.rooms[0]
        self._world_lock = threading.Lock()
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
        self._rgb = self.create_publisher(Image, "rgb", SENSOR_QOS)
        self._depth = self.create_publisher(Image, "depth", SENSOR_QOS)
        self._instances = self.create_publisher(Image, "instances", SENSOR_QOS)
        self._info = self.create_publisher(CameraInfo, "camera_info", SENSOR_QOS)
        self._odom = self.create_publisher(Odometry, "odom", 10)
        self._clock_pub = self.create_publisher(Clock, "/clock", 10)
        self._table = self.create_publisher(String, "instance_categories", LATCHED)
        self._tf = TfBroadcaster(self)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, 10)
        self.create_service(SetContainer, "open", lambda req, res: self._set_container(req, res, True))
        self.create_service(SetContainer, "close", lambda req, res: self._set_container(req, res, False))
        self.create_service(Trigger, "reset_episode", self._on_reset)
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
            self.get_logger().warn(f"ignored cmd_vel with non-finite values ({v}, {w})")
            return
        c = self.config
        with self._world_lock:
            self._command = (
                float(np.clip(v, -c.max_linear_mps, c.max_linear_mps)),
                float(np.clip(w, -c.max_angular_rps, c.max_angular_rps)),
                self.now_s,
            )

    def _run(self, layout: HouseLayout) -> None:
        try:
            self.world = SimWorld(layout, self._objects, self.config.camera())
            self._start = (*nearest_free(self.world, *self._start_room.center), 0.0)
            self.world.set_pose(*self._start)
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
        with self._world_lock:
            v, w, since = self._command
            if self.now_s - since > self.config.cmd_vel_timeout_s:
                v = w = 0.0
            if v or w:
                self.world.step_velocity(v, w, dt)
            self._time_ns += round(dt * 1e9)
            frame = self.world.render()
            pose = self.world.pose
        self._publish(frame, pose, v, w)

    def _publish(self, frame: Frame, pose: tuple[float, float, float], v: float, w: float) -> None:
        c = self.config
        stamp = Clock().clock
        stamp.sec, stamp.nanosec = divmod(self._time_ns, 1_000_000_000)
        self._clock_pub.publish(Clock(clock=stamp))
        base = Transform(np.array([pose[0], pose[1], 0.0]), quat_from_yaw(pose[2]))
        camera = base.inverse() * Transform(
            frame.T_map_camera[:3, 3].copy(), quat_from_matrix(frame.T_map_camera[:3, :3])
        )
        self._tf.send(
            [
                transform_to_msg(c.map_frame, c.odom_frame, self.now_s, Transform()),
                transform_to_msg(c.odom_frame, c.base_frame, self.now_s, base),
                transform_to_msg(c.base_frame, c.camera_frame, self.now_s, camera),
            ]
        )
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, c.odom_frame, c.base_frame
        odom.pose.pose.position.x, odom.pose.pose.position.y = pose[0], pose[1]
        q = quat_from_yaw(pose[2])
        o = odom.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in q)
        odom.twist.twist.linear.x, odom.twist.twist.angular.z = v, w
        self._odom.publish(odom)
        h, w_px = frame.depth.shape
        rgb = Image(height=h, width=w_px, encoding="rgb8", step=3 * w_px, data=frame.rgb.tobytes())
        instances = Image(
            height=h, width=w_px, encoding="32SC1", step=4 * w_px, data=frame.instance.astype("<i4").tobytes()
        )
        depth = depth_to_msg(frame.depth, c.camera_frame)
        fx, fy, cx, cy = frame.intrinsics
        info = CameraInfo(height=h, width=w_px, distortion_model="plumb_bob", d=[0.0] * 5)
        info.k = [fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0]
        info.p = [fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
        info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        for msg, pub in (
            (rgb, self._rgb),
            (depth, self._depth),
            (instances, self._instances),
            (info, self._info),
        ):
            msg.header.stamp, msg.header.frame_id = stamp, c.camera_frame
            pub.publish(msg)

    def _publish_table(self) -> None:
        table = {str(k): list(v) for k, v in self.world.instances.items()}
        self._table.publish(String(data=json.dumps(table)))

    def _set_container(
        self, request: SetContainer.Request, response: SetContainer.Response, open_: bool
    ) -> SetContainer.Response:
        with self._world_lock:
            try:
                self.world.set_open(request.node_id, open_, self.config.reach_m)
            except SimError as exc:
                response.success, response.message = False, str(exc)
                return response
        response.success, response.message = True, f"{request.node_id} {'opened' if open_ else 'closed'}"
        return response

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._world_lock:
            self.world.close_all()
            self.world.set_pose(*self._start, tilt=0.0)
            self._command = (0.0, 0.0, -math.inf)
        response.success, response.message = True, "episode reset: start pose, every container closed"
        return response

    def destroy_node(self) -> None:
        """Stop the simulation thread (it releases the renderer), then the node."""
        self._stop.set()
        self._thread.join(timeout=10.0)
        super().destroy_node()
