"""/tf and /tf_static for nodes: a listener that fills a transform buffer, and a broadcaster.

With a ROS distro, tf2_ros is used (its buffer, listener and broadcasters); in pip-only
installs (no tf2_ros wheel) the core :class:`TransformBuffer` is filled from ``tf2_msgs``
messages (this repo builds a wire-compatible tf2_msgs there). Callers see one interface:
``lookup(target, source, stamp_s) -> Transform``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from sg_search.geometry import Pose2D, Transform, TransformBuffer, TransformError, yaw_from_quat

TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
# Fast DDS now and then fails to hand a TRANSIENT_LOCAL sample to a late-joining reader
# (eProsima/Fast-DDS#3822; seen here: a live-view node never got map -> odom). Static
# transforms are therefore re-sent at this period [s of the node's clock], as well as latched.
STATIC_REPUBLISH_S = 2.0
TF_STATIC_QOS = QoSProfile(
    depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)


class TransformSource(Protocol):
    """What nodes need from TF."""

    def lookup(self, target: str, source: str, stamp_s: float | None = None) -> Transform:
        """``T_target_source`` at ``stamp_s`` seconds (None: latest); raises TransformError."""


def wait_for_transform(
    source: TransformSource, target: str, frame: str, stamp_s: float | None, timeout_s: float
) -> Transform:
    """:meth:`TransformSource.lookup`, retried for up to ``timeout_s`` seconds (wall clock): a
    transform that has not arrived yet (a node just started, a frame a little ahead of TF) is
    waited for, like tf2's ``canTransform`` with a timeout; then the last TransformError."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return source.lookup(target, frame, stamp_s)
        except TransformError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def base_pose(source: TransformSource, map_frame: str, base_frame: str, wait_s: float = 0.0) -> Pose2D | None:
    """(x, y, yaw) of ``base_frame`` in ``map_frame`` [m, rad], or None while TF lacks it
    (after waiting up to ``wait_s`` seconds for it: :func:`wait_for_transform`)."""
    try:
        t = wait_for_transform(source, map_frame, base_frame, None, wait_s)
    except TransformError:
        return None
    return (float(t.translation[0]), float(t.translation[1]), yaw_from_quat(t.rotation))


def transform_from_msg(msg: TransformStamped) -> tuple[str, str, float, Transform]:
    """(parent, child, stamp [s], transform) of a TransformStamped."""
    t, q = msg.transform.translation, msg.transform.rotation
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return (
        msg.header.frame_id,
        msg.child_frame_id,
        stamp,
        Transform(np.array([t.x, t.y, t.z]), np.array([q.x, q.y, q.z, q.w])),
    )


def transform_to_msg(parent: str, child: str, stamp_s: float, transform: Transform) -> TransformStamped:
    """A TransformStamped for ``T_parent_child`` at ``stamp_s``."""
    msg = TransformStamped()
    msg.header.frame_id, msg.child_frame_id = parent, child
    msg.header.stamp.sec = int(stamp_s)
    msg.header.stamp.nanosec = round((stamp_s - int(stamp_s)) * 1e9) % 1_000_000_000
    tx, ty, tz = (float(v) for v in transform.translation)
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = tx, ty, tz
    qx, qy, qz, qw = (float(v) for v in transform.rotation)
    rot = msg.transform.rotation
    rot.x, rot.y, rot.z, rot.w = qx, qy, qz, qw
    return msg


class TfListener:
    """Fills a core TransformBuffer from /tf and /tf_static (pip-only installs)."""

    def __init__(self, node: Node, buffer: TransformBuffer | None = None) -> None:
        self.buffer = buffer or TransformBuffer()
        self._node = node
        node.create_subscription(TFMessage, "/tf", lambda m: self._on_message(m, False), TF_QOS)
        node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_message(m, True), TF_STATIC_QOS)

    def _on_message(self, msg: TFMessage, static: bool) -> None:
        for stamped in msg.transforms:
            try:
                parent, child, stamp, transform = transform_from_msg(stamped)
                if self.buffer.set_transform(parent, child, stamp, transform, static=static):
                    self._node.get_logger().warning(
                        f"time went back to {stamp:.3f} s on {parent} -> {child}: older transforms dropped"
                    )
            except (TransformError, ValueError) as exc:
                self._node.get_logger().warning(f"ignored transform: {exc}", throttle_duration_sec=5.0)

    def lookup(self, target: str, source: str, stamp_s: float | None = None) -> Transform:
        """See :class:`TransformSource`."""
        return self.buffer.lookup(target, source, stamp_s)


class Tf2RosSource:
    """tf2_ros-backed source, used where a ROS distro provides tf2_ros (not testable pip-only)."""

    def __init__(self, node: Node) -> None:
        import tf2_ros

        self._tf2 = tf2_ros
        self._buffer = tf2_ros.Buffer()
        self._listener = tf2_ros.TransformListener(self._buffer, node)

    def lookup(self, target: str, source: str, stamp_s: float | None = None) -> Transform:
        """See :class:`TransformSource`."""
        from rclpy.time import Time

        when = Time() if stamp_s is None else Time(nanoseconds=int(stamp_s * 1e9))
        try:
            msg = self._buffer.lookup_transform(target, source, when)
        except self._tf2.TransformException as exc:
            raise TransformError(str(exc)) from exc
        return transform_from_msg(msg)[3]


def create_transform_source(node: Node) -> TransformSource:
    """tf2_ros where it exists, else this package's TfListener."""
    try:
        return Tf2RosSource(node)
    except ImportError:
        return TfListener(node)


class TfBroadcaster:
    """Publishes dynamic (/tf) and static (/tf_static, latched and re-sent every
    ``STATIC_REPUBLISH_S``) transforms."""

    def __init__(self, node: Node) -> None:
        self._tf = node.create_publisher(TFMessage, "/tf", TF_QOS)
        self._static = node.create_publisher(TFMessage, "/tf_static", TF_STATIC_QOS)
        self._static_sent: dict[str, Any] = {}
        node.create_timer(STATIC_REPUBLISH_S, self._republish_static)

    def _republish_static(self) -> None:
        if self._static_sent:
            self._static.publish(TFMessage(transforms=list(self._static_sent.values())))

    def send(self, transforms: Sequence[TransformStamped]) -> None:
        """Publish dynamic transforms."""
        self._tf.publish(TFMessage(transforms=list(transforms)))

    def send_static(self, transforms: Sequence[TransformStamped]) -> None:
        """Publish static transforms; all static transforms sent so far go out together (latched)."""
        for t in transforms:
            self._static_sent[t.child_frame_id] = t
        self._republish_static()
