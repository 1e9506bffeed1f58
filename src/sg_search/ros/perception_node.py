"""perception: RGB-D frames -> detections -> fused 3D instances on ``observations``.

Topics (relative):
  sub ``rgb`` (rgb8/bgr8), ``depth`` (32FC1 m or 16UC1 mm x ``depth_scale``), ``camera_info``;
      with the ground_truth detector also ``instances`` (32SC1) and ``instance_categories``
      (std_msgs/String JSON {id: [source id, category]}, latched); TF ``map_frame`` <- camera
  pub ``observations`` (ObjectObservationArray, one per processed frame: confirmed instances
      created or changed by the frame, ids merged away; empty when the frame changed nothing,
      which tells a skill that perception has seen the scene since it moved the camera),
      ``perception_stats`` (std_msgs/String JSON counters, every
      ``stats_period_s``)
Parameters: config/sg_search.yaml, ``perception``; ``vocabulary`` can be set at run time
(``ros2 param set /perception vocabulary "[mug, passport]"``).

Frames are matched by stamp (within ``sync_slop_s``) and processed in a worker thread; a frame
that arrives while one is being processed replaces the waiting one, which is counted as
dropped. A frame that cannot be used (sizes that differ, an unknown encoding, no valid depth,
an all-black image, no transform) is skipped with a throttled warning naming the reason;
the instances already fused are kept.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import CameraInfo, Image
from sg_search_interfaces.msg import ObjectObservation, ObjectObservationArray
from std_msgs.msg import Header, String

from sg_search.geometry import TransformError
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import RgbdImage
from sg_search.perception.fusion import Instance
from sg_search.perception.pipeline import FrameSkipped, PerceptionPipeline
from sg_search.ros.conversions import box_to_msg, point_to_msg
from sg_search.ros.images import depth_from_msg, intrinsics_from_msg
from sg_search.ros.liveliness import announce_alive
from sg_search.ros.params import declare_config
from sg_search.ros.qos import LATCHED_QOS, SENSOR_QOS
from sg_search.ros.tf import create_transform_source, wait_for_transform


def stamp_of(msg: Any) -> float:
    """Header stamp [s]."""
    return float(msg.header.stamp.sec) + float(msg.header.stamp.nanosec) * 1e-9


def rgb_from_msg(msg: Image) -> NDArray[np.uint8]:
    """An rgb8/bgr8 Image as (H, W, 3) RGB; FrameSkipped for other encodings or short data."""
    if msg.encoding not in ("rgb8", "bgr8"):
        raise FrameSkipped(
            "encoding", f"unsupported colour encoding {msg.encoding!r} (expected rgb8 or bgr8)"
        )
    if msg.step < msg.width * 3 or len(msg.data) < msg.step * msg.height:
        raise FrameSkipped(
            "size", f"colour image {msg.width}x{msg.height} step {msg.step} has {len(msg.data)} bytes"
        )
    raw = np.frombuffer(bytes(msg.data), dtype=np.uint8).reshape(msg.height, msg.step)[:, : msg.width * 3]
    rgb = raw.reshape(msg.height, msg.width, 3)
    return np.ascontiguousarray(rgb[..., ::-1] if msg.encoding == "bgr8" else rgb)


def instance_from_msg(msg: Image) -> NDArray[np.int32]:
    """A 32SC1 instance-id Image as (H, W) int32."""
    if msg.encoding != "32SC1" or len(msg.data) < msg.step * msg.height or msg.step < msg.width * 4:
        raise FrameSkipped(
            "encoding", f"instance image must be 32SC1 ({msg.encoding}, {len(msg.data)} bytes)"
        )
    raw = np.frombuffer(bytes(msg.data), dtype=np.uint8).reshape(msg.height, msg.step)[:, : msg.width * 4]
    return raw.copy().view("<i4").reshape(msg.height, msg.width)


def instance_to_msg(instance: Instance) -> ObjectObservation:
    """A fused instance with its evidence."""
    core = instance.as_object_instance()
    votes = instance.ranked_votes()
    assert core.bbox is not None
    return ObjectObservation(
        instance_id=core.instance_id,
        category=core.category,
        confidence=core.confidence,
        centroid=point_to_msg(core.centroid),
        point_count=len(instance.keys),
        observation_count=core.observation_count,
        category_votes=[c for c, _ in votes],
        category_scores=[float(s) for _, s in votes],
        bbox=box_to_msg(core.bbox),
    )


class Perception(Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "perception", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, PerceptionConfig)
        self.pipeline = PerceptionPipeline(self.config)
        self.tf = create_transform_source(self)
        self.stats = self.pipeline.stats
        self._categories: dict[int, tuple[str, str]] = {}
        self._info: CameraInfo | None = None
        self._buffers: dict[str, deque[Image]] = {
            name: deque(maxlen=8) for name in ("rgb", "depth", "instances")
        }
        self._needs = (
            ("rgb", "depth", "instances") if self.config.detector == "ground_truth" else ("rgb", "depth")
        )
        self._pending: dict[str, Image] | None = None
        self._wake = threading.Condition()
        self._sync = threading.Lock()
        self._stop = False
        self._publisher = self.create_publisher(ObjectObservationArray, "observations", 10)
        self._alive = announce_alive(self)  # DDS liveliness: dependants see this node die
        self._stats_publisher = self.create_publisher(String, "perception_stats", 1)
        for name in self._needs:
            self.create_subscription(Image, name, lambda m, n=name: self._on_image(n, m), SENSOR_QOS)
        self.create_subscription(CameraInfo, "camera_info", self._on_info, SENSOR_QOS)
        self.create_subscription(String, "instance_categories", self._on_categories, LATCHED_QOS)
        self.add_on_set_parameters_callback(self._on_parameters)
        self.create_timer(self.config.stats_period_s, self._publish_stats)
        self._worker = threading.Thread(target=self._work, name="perception", daemon=True)
        self._worker.start()
        self.get_logger().info(
            f"perception: detector {self.pipeline.detector.name}, "
            f"vocabulary {list(self.pipeline.vocabulary) or 'all'}"
        )

    # ------------------------------------------------------------------ inputs
    def _on_parameters(self, params: list[Parameter]) -> SetParametersResult:
        for param in params:
            if param.name != "vocabulary":
                continue
            try:
                self.pipeline.set_vocabulary(list(param.value or ()))
            except ValueError as exc:
                return SetParametersResult(successful=False, reason=f"vocabulary: {exc}")
            self.get_logger().info(f"vocabulary now {list(self.pipeline.vocabulary) or 'all'}")
        return SetParametersResult(successful=True)

    def _on_info(self, msg: CameraInfo) -> None:
        self._info = msg

    def _on_categories(self, msg: String) -> None:
        try:
            table = json.loads(msg.data)
            self._categories = {int(k): (str(v[0]), str(v[1])) for k, v in table.items()}
        except (ValueError, TypeError, IndexError, AttributeError) as exc:
            self.get_logger().warning(
                f"instance_categories ignored (not JSON {{id: [node, category]}}): {exc}"
            )

    def _on_image(self, name: str, msg: Image) -> None:
        with self._sync:
            self._match_frame(name, msg)

    def _match_frame(self, name: str, msg: Image) -> None:
        self._buffers[name].append(msg)
        anchor = self._buffers["depth"][-1] if self._buffers["depth"] else None
        if anchor is None:
            return
        t = stamp_of(anchor)
        chosen: dict[str, Image] = {"depth": anchor}
        for other in self._needs:
            if other == "depth":
                continue
            near = [m for m in self._buffers[other] if abs(stamp_of(m) - t) <= self.config.sync_slop_s]
            if not near:
                return
            chosen[other] = min(near, key=lambda m: abs(stamp_of(m) - t))
        for buffer in self._buffers.values():
            while buffer and stamp_of(buffer[0]) <= t:
                buffer.popleft()
        with self._wake:
            if self._pending is not None:
                self.stats["dropped"] += 1
            self._pending = chosen
            self._wake.notify()

    # ------------------------------------------------------------------ processing
    def _work(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._stop:
                    self._wake.wait(0.5)
                if self._stop:
                    return
                frame, self._pending = self._pending, None
            if frame is None:
                continue
            try:
                self.process(frame)
            except FrameSkipped as exc:
                self.stats[f"skipped_{exc.reason}"] += 1
                self.get_logger().warning(f"frame skipped ({exc.reason}): {exc}", throttle_duration_sec=5.0)
            except Exception as exc:
                self.stats["skipped_error"] += 1
                self.get_logger().error(f"frame skipped (error): {exc!r}", throttle_duration_sec=5.0)

    def process(self, frame: dict[str, Image]) -> None:
        """Decode one synchronised frame, run the pipeline and publish what it changed
        (FrameSkipped says why not)."""
        start = time.perf_counter()
        if self._info is None:
            raise FrameSkipped("camera_info", "no camera_info received yet")
        depth_msg = frame["depth"]
        try:
            depth = depth_from_msg(depth_msg, self.config.depth_scale)
            intrinsics = intrinsics_from_msg(self._info)
        except ValueError as exc:
            raise FrameSkipped("encoding", str(exc)) from None
        if (self._info.width, self._info.height) != (depth.shape[1], depth.shape[0]):
            raise FrameSkipped(
                "size", f"camera_info is {self._info.width}x{self._info.height}, depth {depth.shape[::-1]}"
            )
        rgb = rgb_from_msg(frame["rgb"])
        instance = instance_from_msg(frame["instances"]) if "instances" in frame else None
        pose = self._lookup(depth_msg.header.frame_id, stamp_of(depth_msg))
        k = (intrinsics.fx, intrinsics.fy, intrinsics.cx, intrinsics.cy)
        update = self.pipeline.process(RgbdImage(rgb, depth, instance, self._categories), k, pose)
        header = Header(stamp=depth_msg.header.stamp, frame_id=self.config.map_frame)
        self._publisher.publish(  # also when empty: it says this frame was processed
            ObjectObservationArray(
                header=header,
                frame_index=update.frame_index,
                observations=[instance_to_msg(i) for i in update.confirmed],
                removed_instance_ids=update.removed,
            )
        )
        self.stats["process_ms_total"] += int((time.perf_counter() - start) * 1e3)

    def _lookup(self, frame_id: str, stamp: float) -> NDArray[np.float64]:
        try:
            transform = wait_for_transform(
                self.tf, self.config.map_frame, frame_id, stamp, self.config.tf_timeout_s
            )
        except TransformError as exc:
            raise FrameSkipped(
                "transform", f"no transform {self.config.map_frame} <- {frame_id!r}: {exc}"
            ) from None
        return transform.as_matrix()

    def _publish_stats(self) -> None:
        stats = dict(
            self.stats,
            instances=len(self.pipeline.instances.instances),
            published=len(self.pipeline.reported.reported),
        )
        self._stats_publisher.publish(String(data=json.dumps(stats, sort_keys=True)))

    def destroy_node(self) -> None:
        """Stop the worker, then the node."""
        with self._wake:
            self._stop = True
            self._wake.notify()
        self._worker.join(timeout=2.0)
        super().destroy_node()
