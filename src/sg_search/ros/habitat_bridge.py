"""``habitat_bridge``: a Habitat ObjectNav episode behind the same topics as ``sim_bridge``.

habitat-sim is imported only here and only when the node starts: it has no wheel for this
project's Python, so run this node from a Habitat environment (conda, Python 3.9/3.10; see
the README, "Run in Habitat") and the rest of the stack anywhere on the same DDS domain.

Publishes ``rgb``, ``depth`` (metres), ``instances`` (dense ids of the semantic sensor) with
``instance_categories`` (latched JSON, grown as objects are seen), ``camera_info``
(fx = (W/2)/tan(hfov/2)), ``odom``, TF and ``/clock`` (sim_bridge's conventions, REP 103:
Habitat's Y-up frames converted by :mod:`sg_search.habitat.convert`), and
``objectnav/metrics`` (std_msgs/String JSON: success within ``success_distance_m`` of a
goal view point, SPL, SoftSPL, distance to goal) after ``stop``. Subscribes ``cmd_vel``
(integrated with the navmesh's ``try_step``: sliding collisions) and ``discrete_action``
(std_msgs/String: move_forward, turn_left, turn_right, stop). Service ``reset_episode``.
Instance ids are stable for the whole scene (semantic ids numbered 1..n), so the category
table is published once.
"""

from __future__ import annotations

import gzip
import json
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np
from geometry_msgs.msg import Twist
from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import Trigger

from sg_search.habitat.config import HabitatBridgeConfig
from sg_search.habitat.convert import (
    HABITAT_TO_ROS,
    camera_pose_to_ros,
    intrinsics_from_hfov,
    parse_objectnav,
    position_to_ros,
    rotation_to_ros,
    semantic_to_instances,
    stable_lookup,
    yaw_of,
)
from sg_search.habitat.motion import objectnav_outcome, step_target, turned
from sg_search.ros.params import declare_config
from sg_search.ros.qos import CMD_VEL_QOS, LATCHED_QOS
from sg_search.ros.sensor_publishers import SensorPublishers


def _import_habitat() -> Any:
    try:
        import habitat_sim
    except ImportError as exc:
        raise RuntimeError(
            f"habitat_bridge needs habitat_sim ({exc}); there is no wheel for this Python: run this node "
            "from a Habitat conda environment (README, 'Run in Habitat')"
        ) from exc
    return habitat_sim


def _xyzw(q: Any) -> np.ndarray:
    """numpy-quaternion (w, x, y, z) or a 4-sequence (x, y, z, w) -> (x, y, z, w)."""
    if hasattr(q, "w"):
        return np.array([q.x, q.y, q.z, q.w], dtype=float)
    return np.asarray(q, dtype=float)


def _habitat_quat(xyzw: Any) -> Any:
    """(x, y, z, w) -> the numpy-quaternion habitat-sim expects (installed with it)."""
    import quaternion

    x, y, z, w = (float(v) for v in xyzw)
    return quaternion.quaternion(w, x, y, z)


class HabitatBridge(Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "habitat_bridge", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = c = declare_config(self, HabitatBridgeConfig)
        if not c.episodes_file:
            raise ValueError(
                "habitat_bridge needs the parameter episodes_file (an ObjectNav .json or .json.gz)"
            )
        self.hs = _import_habitat()
        text = Path(c.episodes_file).read_bytes()
        data = json.loads(gzip.decompress(text) if c.episodes_file.endswith(".gz") else text)
        self.raw_episode = data["episodes"][c.episode_index]
        self.episode = parse_objectnav(json.dumps({**data, "episodes": [self.raw_episode]}))[0]
        self.sim = self._make_simulator()
        self.categories = {
            int(o.semantic_id): o.category.name()
            for o in self.sim.semantic_scene.objects
            if o is not None and o.category
        }
        self.lookup = stable_lookup(self.categories)
        # ObjectNav view points back in Habitat's frame (the inverse of the constant rotation)
        self.goals = [np.asarray(p, dtype=float) @ HABITAT_TO_ROS for p in self.episode.view_points]
        self._lock = threading.Lock()
        self._time_ns = 0
        self._command = (0.0, 0.0, -math.inf)
        self._sensors = SensorPublishers(self, (c.map_frame, c.odom_frame, c.base_frame, c.camera_frame))
        self._table_pub = self.create_publisher(String, "instance_categories", LATCHED_QOS)
        self._metrics = self.create_publisher(String, "objectnav/metrics", LATCHED_QOS)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, CMD_VEL_QOS)
        self.create_subscription(String, "discrete_action", self._on_action, 10)
        self.create_service(Trigger, "reset_episode", self._on_reset)
        self._reset()
        table = {str(d): [f"habitat_{s}", self.categories[s]] for s, d in self.lookup.items()}
        self._table_pub.publish(String(data=json.dumps(table)))
        self.create_timer(1.0 / c.rate_hz, self._tick)
        self.get_logger().info(
            f"episode {self.episode.episode_id} in {self.episode.scene_id}: find {self.episode.category}"
        )

    # ------------------------------------------------------------------ set-up
    def _make_simulator(self) -> Any:
        hs, c = self.hs, self.config
        backend = hs.SimulatorConfiguration()
        scene = self.raw_episode["scene_id"]
        backend.scene_id = str(Path(c.scenes_dir) / scene) if c.scenes_dir else scene
        if c.scene_dataset_config:
            backend.scene_dataset_config_file = c.scene_dataset_config
        sensors = []
        for uuid, kind in (
            ("rgb", hs.SensorType.COLOR),
            ("depth", hs.SensorType.DEPTH),
            ("semantic", hs.SensorType.SEMANTIC),
        ):
            spec = hs.CameraSensorSpec()
            spec.uuid, spec.sensor_type = uuid, kind
            spec.resolution = [c.height, c.width]
            spec.position = [0.0, c.camera_height_m, 0.0]
            spec.hfov = c.hfov_deg
            sensors.append(spec)
        agent = hs.agent.AgentConfiguration(sensor_specifications=sensors)
        return hs.Simulator(hs.Configuration(backend, [agent]))

    def _reset(self) -> None:
        state = self.hs.AgentState()
        state.position = np.asarray(self.raw_episode["start_position"], dtype=float)
        state.rotation = _habitat_quat(self.raw_episode["start_rotation"])
        self.sim.initialize_agent(0, state)
        self.travelled = 0.0
        self.start_to_goal = self._distance_to_goal(state.position)

    # ------------------------------------------------------------------ motion
    def _on_cmd_vel(self, msg: Twist) -> None:
        c = self.config
        with self._lock:
            self._command = (
                float(np.clip(msg.linear.x, -c.max_linear_mps, c.max_linear_mps)),
                float(np.clip(msg.angular.z, -c.max_angular_rps, c.max_angular_rps)),
                self._time_ns * 1e-9,
            )

    def _move(self, forward_m: float, turn_rad: float) -> None:
        agent = self.sim.get_agent(0)
        state = agent.get_state()
        rotation = _xyzw(state.rotation)
        if forward_m:
            start = np.asarray(state.position, dtype=float)
            end = np.asarray(
                self.sim.pathfinder.try_step(start, step_target(start, rotation, forward_m)), dtype=float
            )
            self.travelled += float(np.linalg.norm(end - start))
            state.position = end
        if turn_rad:
            state.rotation = _habitat_quat(turned(rotation, turn_rad))
        agent.set_state(state)

    def _on_action(self, msg: String) -> None:
        c = self.config
        with self._lock:
            if msg.data == "move_forward":
                self._move(c.forward_step_m, 0.0)
            elif msg.data in ("turn_left", "turn_right"):
                self._move(0.0, math.radians(c.turn_step_deg) * (1 if msg.data == "turn_left" else -1))
            elif msg.data == "stop":
                self._report()
            else:
                self.get_logger().warning(
                    f"unknown discrete action {msg.data!r} (move_forward, turn_left, turn_right, stop)"
                )

    def _distance_to_goal(self, position: Any) -> float:
        path = self.hs.MultiGoalShortestPath()
        path.requested_start = np.asarray(position, dtype=float)
        path.requested_ends = self.goals
        found = self.sim.pathfinder.find_path(path)
        return float(path.geodesic_distance) if found else math.inf

    def _report(self) -> None:
        position = self.sim.get_agent(0).get_state().position
        outcome = objectnav_outcome(
            self.start_to_goal,
            self._distance_to_goal(position),
            self.travelled,
            self.config.success_distance_m,
        )
        self._metrics.publish(
            String(data=json.dumps({"episode_id": self.episode.episode_id, **outcome.as_dict()}))
        )
        self.get_logger().info(f"episode {self.episode.episode_id}: {outcome}")

    def _on_reset(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self._reset()
        response.success, response.message = True, f"episode {self.episode.episode_id} reset to its start"
        return response

    # ------------------------------------------------------------------ publishing
    def _tick(self) -> None:
        c = self.config
        dt = 1.0 / c.rate_hz
        with self._lock:
            v, w, since = self._command
            if self._time_ns * 1e-9 - since > c.cmd_vel_timeout_s:
                v = w = 0.0
            if v or w:
                self._move(v * dt, w * dt)
            self._time_ns += round(dt * 1e9)
            observation = self.sim.get_sensor_observations()
            state = self.sim.get_agent(0).get_state()
        sensor = state.sensor_states["depth"]
        t_map_camera = camera_pose_to_ros(sensor.position, _xyzw(sensor.rotation))
        base = position_to_ros(state.position)
        yaw = yaw_of(rotation_to_ros(_xyzw(state.rotation)))
        instance, _ = semantic_to_instances(observation["semantic"], self.categories, self.lookup)
        depth = np.asarray(observation["depth"], dtype=np.float32)
        rgb = np.asarray(observation["rgb"])[..., :3]
        self._sensors.publish(
            self._time_ns, (float(base[0]), float(base[1]), yaw), (v, w), t_map_camera, rgb, depth, instance,
            intrinsics_from_hfov(c.width, c.height, c.hfov_deg),
        )  # fmt: skip
