"""live_view: the search as it happens, into Rerun (``run.rrd``, and a viewer when one is given).

Topics (relative): ``map``, ``odom``, ``frontiers``, ``scene_graph/updates`` (a mirror of the
graph), ``rgb``, ``depth``, ``instances``, ``camera_info``, ``instance_categories`` and the
``search`` action's feedback (the reasoner's target, utility, reason and top candidates);
TF ``map_frame`` <- camera.
Parameters: config/sg_search.yaml, ``live_view``.

Callbacks only keep the newest message of each topic; a worker thread logs what is new every
``period_s`` of wall time (the camera every ``camera_period_s``, the map every
``map_period_s``). A slow viewer or a slow log therefore drops frames, never holds a callback
of the robot's nodes. The core of the logging is :class:`sg_search.view.SearchLog`.
"""

from __future__ import annotations

import json
import math
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from nav_msgs.msg import OccupancyGrid, Odometry
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.action import SearchObject
from sg_search_interfaces.msg import FrontierArray
from std_msgs.msg import String

from sg_search.geometry.transforms import yaw_from_quat
from sg_search.ros.conversions import grid_from_msg
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.images import depth_from_msg, intrinsics_from_msg
from sg_search.ros.params import declare_config
from sg_search.ros.perception_node import instance_from_msg, rgb_from_msg, stamp_of
from sg_search.ros.qos import LATCHED_QOS, SENSOR_QOS
from sg_search.ros.tf import TransformError, create_transform_source
from sg_search.scene_graph import SceneGraph
from sg_search.view import CameraFrame, SearchLog
from sg_search.view.config import LiveViewConfig

AFFORDANCES = {1: "navigate to", 2: "open", 3: "inspect", 4: "close"}
CAMERA_TOPICS = ["rgb", "depth", "instances", "camera_info"]


class LiveView(Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "live_view", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, LiveViewConfig)
        self.log = SearchLog.to_file(Path(self.config.output), viewer_url=self.config.viewer_url)
        self.tf = create_transform_source(self)
        self.graph = GraphMirror(self)
        self._latest: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._instance_categories: dict[int, str] = {}
        self._target = ""
        self._graph: SceneGraph | None = None  # the last one logged
        self._logged_at: dict[str, float] = {}
        self._map_shown = False  # said once in the node's log (a recording is complete from then)
        keep = self._keep
        self.create_subscription(OccupancyGrid, "map", self._on_map, LATCHED_QOS)
        self.create_subscription(Odometry, "odom", lambda m: keep("odom", m), 10)
        self.create_subscription(FrontierArray, "frontiers", lambda m: keep("frontiers", m), 10)
        for name in ("rgb", "depth", "instances"):
            self.create_subscription(Image, name, lambda m, n=name: keep(n, m), SENSOR_QOS)
        self.create_subscription(CameraInfo, "camera_info", lambda m: keep("camera_info", m), SENSOR_QOS)
        self.create_subscription(String, "instance_categories", self._on_categories, LATCHED_QOS)
        self.create_subscription(
            SearchObject.Impl.FeedbackMessage, "search/_action/feedback", self._on_feedback, 10
        )
        self._stop = threading.Event()
        self._worker = threading.Thread(target=self._work, name="live_view", daemon=True)
        self._worker.start()
        where = f"{self.config.output}" + (f" and {self.config.viewer_url}" if self.config.viewer_url else "")
        self.get_logger().info(f"live view: logging to {where}")

    def _keep(self, name: str, msg: Any) -> None:
        with self._lock:
            self._latest[name] = msg

    def _on_map(self, msg: OccupancyGrid) -> None:
        """Keep a map with known cells; an all-unknown one draws nothing and must not use up
        the map's period (the first known map would then wait ``map_period_s`` more)."""
        if len(msg.data) and np.frombuffer(msg.data, dtype=np.int8).max() >= 0:
            self._keep("map", msg)

    def _on_categories(self, msg: String) -> None:
        try:
            table = json.loads(msg.data)
            self._instance_categories = {int(k): str(v[1]) for k, v in table.items()}
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            self.get_logger().warning(
                f"instance_categories ignored (not JSON {{id: [node, category]}}): {exc}"
            )

    def _on_feedback(self, msg: Any) -> None:
        feedback = msg.feedback
        with self._lock:
            self._latest.setdefault("feedback", []).append(feedback)

    def _work(self) -> None:
        while not self._stop.wait(self.config.period_s):
            self.log_once()

    def _due(self, name: str, period_s: float) -> bool:
        """True (and remembered) when ``name`` was last logged ``period_s`` or more ago."""
        now = time.monotonic()
        if now - self._logged_at.get(name, -math.inf) < period_s:
            return False
        self._logged_at[name] = now
        return True

    def log_once(self) -> None:
        """Log what arrived since the last call (the worker calls this every ``period_s``);
        the camera and the map stay in place until their own periods are due."""
        with self._lock:
            names = set(self._latest)
            if "depth" in names and not self._due("camera", self.config.camera_period_s):
                names -= set(CAMERA_TOPICS)
            if "map" in names and not self._due("map", self.config.map_period_s):
                names.discard("map")
            latest = {name: self._latest.pop(name) for name in names}
        if not latest:
            return
        try:
            self._log(latest)
        except (ValueError, TransformError) as exc:
            self.get_logger().warning(f"live view: frame skipped: {exc}", throttle_duration_sec=10.0)
            return
        if "map" in latest and not self._map_shown:
            self._map_shown = True
            self.get_logger().info("live view: first map logged")

    def _log(self, latest: dict[str, Any]) -> None:
        log = self.log
        if "odom" in latest:
            odom = latest["odom"]
            log.set_time(stamp_of(odom))
            p, q = odom.pose.pose.position, odom.pose.pose.orientation
            log.robot(p.x, p.y, yaw_from_quat((q.x, q.y, q.z, q.w)))
        if "map" in latest:
            spec, states = grid_from_msg(latest["map"])
            log.map(states, spec)
        if "frontiers" in latest:
            log.frontiers((f.goal.x, f.goal.y) for f in latest["frontiers"].frontiers)
        decisions = [f for f in latest.get("feedback", []) if f.phase == "reason" and f.target_node_id]
        target = decisions[-1].target_node_id if decisions else self._target
        logged = self._graph.sequence if self._graph is not None else -1
        if self.graph.sequence != logged or target != self._target:
            graph = self.graph.copy()
            if graph is not None:
                self._graph = graph
                log.graph(graph, target)
        self._target = target
        for feedback in decisions:
            self._decision(feedback)
        if "depth" in latest and "camera_info" in latest:
            self._camera(latest)

    def _decision(self, feedback: Any) -> None:
        top = "; ".join(
            f"{c.node_id} {AFFORDANCES.get(c.affordance, '?')} u={c.utility:.2f}" for c in feedback.candidates
        )
        self.log.decision(f"step {feedback.step}: {feedback.explanation} [top: {top}]")
        node = self._graph.get(feedback.target_node_id) if self._graph is not None else None
        if node is not None:
            self.log.target(node.id, node.position, feedback.utility, feedback.explanation)

    def _camera(self, latest: dict[str, Any]) -> None:
        depth_msg, info = latest["depth"], latest["camera_info"]
        stamp = stamp_of(depth_msg)
        pose = self.tf.lookup(self.config.map_frame, depth_msg.header.frame_id, stamp)
        k = intrinsics_from_msg(info)
        rgb = latest.get("rgb")
        instances = latest.get("instances")
        frame = CameraFrame(
            t_map_camera=pose.as_matrix(),
            intrinsics=(k.fx, k.fy, k.cx, k.cy),
            depth=depth_from_msg(depth_msg, self.config.depth_scale),
            rgb=rgb_from_msg(rgb) if rgb is not None and stamp_of(rgb) == stamp else None,
            instances=instance_from_msg(instances)
            if instances is not None and stamp_of(instances) == stamp
            else None,
            instance_kinds={
                i: kind
                for i, category in self._instance_categories.items()
                if (kind := self.log.kind_of_category(category)) is not None
            },
        )
        self.log.set_time(stamp)
        self.log.camera(frame)

    def destroy_node(self) -> None:
        """Stop the worker, log what is left, and complete ``run.rrd``."""
        self._stop.set()
        self._worker.join(timeout=5.0)
        self.log_once()
        self.log.close()
        super().destroy_node()
