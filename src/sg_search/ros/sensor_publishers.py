"""The robot-side topics a simulator bridge publishes each tick (MuJoCo and Habitat bridges).

``rgb`` (rgb8), ``depth`` (32FC1 metres, 0 = no return), ``instances`` (32SC1 ids, 0 = none),
``camera_info``, ``odom``, ``/clock`` and TF map -> odom -> base -> camera optical frame, all
stamped with the simulated time. map -> odom is the identity (a simulator's odometry does not
drift) and goes out on ``/tf_static`` (latched, and re-sent: see ``ros.tf``); on a robot,
localisation publishes it on ``/tf``.
"""

from __future__ import annotations

import numpy as np
from nav_msgs.msg import Odometry
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import CameraInfo, Image

from sg_search.geometry.transforms import Transform, quat_from_matrix, quat_from_yaw
from sg_search.ros.images import depth_to_msg
from sg_search.ros.tf import TfBroadcaster, transform_to_msg

SENSOR_QOS = QoSProfile(depth=2, reliability=ReliabilityPolicy.BEST_EFFORT)


class SensorPublishers:
    """Publishers for one simulated robot; ``frames`` = (map, odom, base, camera optical)."""

    def __init__(self, node: Node, frames: tuple[str, str, str, str]) -> None:
        self.frames = frames
        self._rgb = node.create_publisher(Image, "rgb", SENSOR_QOS)
        self._depth = node.create_publisher(Image, "depth", SENSOR_QOS)
        self._instances = node.create_publisher(Image, "instances", SENSOR_QOS)
        self._info = node.create_publisher(CameraInfo, "camera_info", SENSOR_QOS)
        self._odom = node.create_publisher(Odometry, "odom", 10)
        self._clock = node.create_publisher(Clock, "/clock", 10)
        self._tf = TfBroadcaster(node)
        self._tf.send_static([transform_to_msg(frames[0], frames[1], 0.0, Transform())])

    def publish(
        self,
        time_ns: int,
        pose: tuple[float, float, float],
        velocity: tuple[float, float],
        t_map_camera: NDArray[np.float64],
        rgb: NDArray[np.uint8],
        depth: NDArray[np.float32],
        instance: NDArray[np.int32],
        intrinsics: tuple[float, float, float, float],
    ) -> None:
        """One tick: base ``pose`` (x, y, yaw) in map [m, rad], ``velocity`` (v, w) [m/s, rad/s],
        the camera's optical-frame pose in map, the images and (fx, fy, cx, cy) [px]."""
        _, odom_frame, base_frame, camera_frame = self.frames
        stamp = Clock().clock
        stamp.sec, stamp.nanosec = divmod(int(time_ns), 1_000_000_000)
        now = time_ns * 1e-9
        self._clock.publish(Clock(clock=stamp))
        base = Transform(np.array([pose[0], pose[1], 0.0]), quat_from_yaw(pose[2]))
        camera = base.inverse() * Transform(
            t_map_camera[:3, 3].copy(), quat_from_matrix(t_map_camera[:3, :3])
        )
        self._tf.send(
            [
                transform_to_msg(odom_frame, base_frame, now, base),
                transform_to_msg(base_frame, camera_frame, now, camera),
            ]
        )
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, odom_frame, base_frame
        odom.pose.pose.position.x, odom.pose.pose.position.y = pose[0], pose[1]
        o = odom.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in base.rotation)
        odom.twist.twist.linear.x, odom.twist.twist.angular.z = velocity
        self._odom.publish(odom)
        h, w = depth.shape
        fx, fy, cx, cy = intrinsics
        info = CameraInfo(height=h, width=w, distortion_model="plumb_bob", d=[0.0] * 5)
        info.k = [fx, 0.0, cx, 0.0, fy, cy, 0.0, 0.0, 1.0]
        info.p = [fx, 0.0, cx, 0.0, 0.0, fy, cy, 0.0, 0.0, 0.0, 1.0, 0.0]
        info.r = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
        colour = np.ascontiguousarray(rgb).tobytes()
        ids = instance.astype("<i4").tobytes()
        messages = (
            (Image(height=h, width=w, encoding="rgb8", step=3 * w, data=colour), self._rgb),
            (depth_to_msg(depth, camera_frame), self._depth),
            (Image(height=h, width=w, encoding="32SC1", step=4 * w, data=ids), self._instances),
            (info, self._info),
        )
        for msg, publisher in messages:
            msg.header.stamp, msg.header.frame_id = stamp, camera_frame
            publisher.publish(msg)
