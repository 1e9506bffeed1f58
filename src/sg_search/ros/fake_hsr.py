"""fake_hsr: a TEST DOUBLE of the Toyota HSR (no such robot exists here), for the driver's tests.

It speaks the HSR's ROS 2 names with simple kinematics: ``/omni_base_controller/cmd_vel``
(Twist, base frame) integrated at ``rate_hz`` into ``/omni_base_controller/wheel_odom`` and
TF odom -> base_footprint (map -> odom identity); ``/head_trajectory_controller``,
``/arm_trajectory_controller`` and ``/gripper_controller`` ``/joint_trajectory`` topics move
joints towards the last point's positions at ``joint_speed``; ``/joint_states``.
Containers (parameter ``containers``, JSON list of {id, opening: drawer|hinge, handle: [x, y,
z], yaw, hinge_side, hinge_radius, max_open, locked}) have a handle: a closing gripper
within ``grasp_tolerance_m`` of it stalls at ``handle_width`` and holds it; while held, the
base can only move so that the hand stays on the drawer's line or the door's arc (other
motion is refused, as is any motion of a locked container's handle); the opening follows
the hand. ``/fake_hsr/state`` (std_msgs/String JSON): base pose, held container, openings.
The hand is ``hand_reach_m`` ahead of the base at ``hand_height_at_zero_lift_m`` +
arm_lift_joint (the HSR's front-grasp posture).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from sg_search.geometry.transforms import Transform, quat_from_yaw
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.skills.motions import OpeningMotion, hinge_position, pull_hand_target

JOINTS = ("head_pan_joint", "head_tilt_joint", "arm_lift_joint", "arm_flex_joint", "arm_roll_joint",
          "wrist_flex_joint", "wrist_roll_joint", "hand_motor_joint")  # fmt: skip


class FakeContainer:
    """A drawer or a hinged door with a handle (odom frame, metres/radians)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.id = str(spec["id"])
        self.handle = tuple(float(v) for v in spec["handle"])
        self.yaw = float(spec.get("yaw", 0.0))
        self.locked = bool(spec.get("locked", False))
        self.max_open = float(spec.get("max_open", 0.4 if spec["opening"] == "drawer" else 1.8))
        self.motion = OpeningMotion(
            opening=str(spec["opening"]),
            hinge_side=int(spec.get("hinge_side", 1)),
            hinge_radius_m=float(spec.get("hinge_radius", 0.45)),
            pull_m=min(self.max_open, 0.8),
            open_angle_rad=min(self.max_open, math.pi * 0.75),
        )
        self.opened = 0.0  # metres or radians

    def handle_now(self) -> tuple[float, float, float]:
        """Where the handle is at the current opening."""
        full = self.motion.pull_m if self.motion.opening == "drawer" else self.motion.open_angle_rad
        (x, y), _ = pull_hand_target(self.handle, self.yaw, self.motion, self.opened / full)  # type: ignore[arg-type]
        return x, y, self.handle[2]

    def _strain(self, hand: tuple[float, float]) -> tuple[float, float]:
        """How far [m] the hand is beyond where the handle can go (0 = on its path), and the
        opening that hand position means (metres or radians)."""
        if self.locked:
            return max(0.0, math.dist(hand, self.handle_now()[:2]) - 0.005), self.opened
        dx, dy = hand[0] - self.handle[0], hand[1] - self.handle[1]
        if self.motion.opening == "drawer":
            along = dx * math.cos(self.yaw) + dy * math.sin(self.yaw)
            across = -dx * math.sin(self.yaw) + dy * math.cos(self.yaw)
            beyond = max(-along, along - self.max_open, 0.0)
            return max(abs(across) - 0.03, 0.0) + beyond, along
        hx, hy = hinge_position(self.handle, self.yaw, self.motion)  # type: ignore[arg-type]
        start = math.atan2(self.handle[1] - hy, self.handle[0] - hx)
        angle = -self.motion.hinge_side * math.remainder(
            math.atan2(hand[1] - hy, hand[0] - hx) - start, math.tau
        )
        radius = self.motion.hinge_radius_m
        beyond = max(-angle, angle - self.max_open, 0.0) * radius
        return max(abs(math.dist(hand, (hx, hy)) - radius) - 0.05, 0.0) + beyond, angle

    def follow(self, before: tuple[float, float], after: tuple[float, float]) -> bool:
        """Let the held handle follow the hand from ``before`` to ``after``; False (nothing
        changes) if that strains the container more than it already is (a door or drawer
        resists being pulled off its path, never a motion that relieves the strain)."""
        strain, opening = self._strain(after)
        if strain > 0.0 and strain >= self._strain(before)[0]:
            return False
        if not self.locked:
            self.opened = min(max(opening, 0.0), self.max_open)
        return True


class FakeHsr(Node):
    """See the module docstring. A test double: nothing here is tuned to a real HSR."""

    def __init__(self, node_name: str = "fake_hsr", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.rate = float(self.declare_parameter("rate_hz", 50.0).value)
        self.joint_speed = float(self.declare_parameter("joint_speed", 1.0).value)
        self.reach = float(self.declare_parameter("hand_reach_m", 0.6).value)
        self.hand_z0 = float(self.declare_parameter("hand_height_at_zero_lift_m", 0.35).value)
        self.tolerance = float(self.declare_parameter("grasp_tolerance_m", 0.05).value)
        self.handle_width = float(self.declare_parameter("handle_width", 0.3).value)
        specs = json.loads(str(self.declare_parameter("containers", "[]").value))
        start = [float(v) for v in self.declare_parameter("start_pose", [0.0, 0.0, 0.0]).value]
        self.containers = [FakeContainer(s) for s in specs]
        self.pose = (start[0], start[1], start[2])
        self.twist = (0.0, 0.0, 0.0)
        self.joints = dict.fromkeys(JOINTS, 0.0)
        self.joints["hand_motor_joint"] = 1.0
        self.targets = dict(self.joints)
        self.held: FakeContainer | None = None
        self.tf = TfBroadcaster(self)
        self.tf.send_static([transform_to_msg("map", "odom", 0.0, Transform())])
        self._odom = self.create_publisher(Odometry, "/omni_base_controller/wheel_odom", 10)
        self._joints = self.create_publisher(JointState, "/joint_states", 10)
        self._state = self.create_publisher(String, "/fake_hsr/state", 10)
        self.create_subscription(Twist, "/omni_base_controller/cmd_vel", self._on_twist, 10)
        for controller in ("head_trajectory_controller", "arm_trajectory_controller", "gripper_controller"):
            self.create_subscription(
                JointTrajectory, f"/{controller}/joint_trajectory", self._on_trajectory, 10
            )
        self.create_timer(1.0 / self.rate, self._tick)

    def _on_twist(self, msg: Twist) -> None:
        self.twist = (msg.linear.x, msg.linear.y, msg.angular.z)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if msg.points:
            self.targets.update(
                zip(msg.joint_names, (float(p) for p in msg.points[-1].positions), strict=False)
            )

    def hand(self, pose: tuple[float, float, float]) -> tuple[float, float, float]:
        """Hand position for a base pose."""
        x, y, yaw = pose
        return (
            x + self.reach * math.cos(yaw),
            y + self.reach * math.sin(yaw),
            self.hand_z0 + self.joints["arm_lift_joint"],
        )

    def _tick(self) -> None:
        dt = 1.0 / self.rate
        for name, target in self.targets.items():
            step = max(-self.joint_speed * dt, min(self.joint_speed * dt, target - self.joints[name]))
            if name == "hand_motor_joint" and step < 0 and self.held is None:
                self.held = self._grasped()
            if name == "hand_motor_joint" and self.held is not None:
                if target >= self.handle_width + 0.1:
                    self.held = None  # opening releases
                elif self.joints[name] + step < self.handle_width:
                    step = self.handle_width - self.joints[name]  # stalls on the handle
            self.joints[name] += step
        x, y, yaw = self.pose
        vx, vy, wz = self.twist
        c, s = math.cos(yaw), math.sin(yaw)
        moved = (
            x + dt * (vx * c - vy * s),
            y + dt * (vx * s + vy * c),
            math.remainder(yaw + dt * wz, math.tau),
        )
        if self.held is None or self.held.follow(self.hand(self.pose)[:2], self.hand(moved)[:2]):
            self.pose = moved
        self._publish()

    def _grasped(self) -> FakeContainer | None:
        hand = self.hand(self.pose)
        for container in self.containers:
            if (
                math.dist(hand, container.handle_now()) <= self.tolerance
                and abs(self.joints["arm_flex_joint"] + math.pi / 2) < 0.1
            ):
                return container
        return None

    def _publish(self) -> None:
        stamp = self.get_clock().now()
        x, y, yaw = self.pose
        odom = Odometry()
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = (
            stamp.to_msg(),
            "odom",
            "base_footprint",
        )
        odom.pose.pose.position.x, odom.pose.pose.position.y = x, y
        q = quat_from_yaw(yaw)
        o = odom.pose.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
        odom.twist.twist.linear.x, odom.twist.twist.linear.y, odom.twist.twist.angular.z = self.twist
        self._odom.publish(odom)
        self.tf.send(
            [
                transform_to_msg(
                    "odom", "base_footprint", stamp.nanoseconds * 1e-9, Transform(np.array([x, y, 0.0]), q)
                )
            ]
        )
        self._joints.publish(
            JointState(header=odom.header, name=list(self.joints), position=list(self.joints.values()))
        )
        state = {
            "base": [x, y, yaw],
            "held": self.held.id if self.held else "",
            "opened": {c.id: c.opened for c in self.containers},
            "joints": self.joints,
        }
        self._state.publish(String(data=json.dumps(state)))
