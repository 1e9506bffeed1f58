"""hsr_driver: the skills the executor needs, composed from a Toyota HSR's ROS 2 interfaces.

Topics (relative; ``hsr.launch.py`` remaps them onto the HSR's):
  sub ``cmd_vel`` (Twist from the planner; forwarded clamped to ``base_cmd_vel`` while no
      skill owns the base; a command older than ``cmd_vel_timeout_s`` stops the base: the
      dead-man), ``odom`` (Odometry of the base in ``odom_frame``), ``joint_states``,
      ``emergency_stop`` (std_msgs/Bool, latched or repeated: true stops the base at once,
      blocks ``cmd_vel`` and aborts every skill until false)
  pub ``base_cmd_vel`` (Twist), ``head_trajectory``, ``arm_trajectory``,
      ``gripper_trajectory`` (trajectory_msgs/JointTrajectory)
Actions: ``open_container`` (OpenContainer), ``look_at`` (LookAt); one skill at a time.

The HSR has no "open container" action, so ``open_container`` is composed: look at the
handle, raise the arm to its height with the hand forward and the gripper open, drive the
omni base to a pre-grasp pose and forward onto the handle, close the gripper (a gripper that
closes fully held nothing: GRASP_FAILED), drive the base along the drawer's line or the
door's arc (per-category motions, config/hsr_open_motions.yaml) so the hand pulls the
handle, open the gripper and back off. Every step has a timeout, in seconds of the node's
clock under ``use_sim_time`` (a simulator's ``/clock``), else of the monotonic clock; cancel
stops the base and releases; an emergency stop stops the base and holds everything else as it is. The
gripper is driven by a joint trajectory on ``hand_motor_joint`` (positions
``gripper_open``/``gripper_closed``); an HSR set up with only the effort-based
``grasp`` action (tmc_control_msgs) needs a small adapter to that action (not done here).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace

import numpy as np
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.duration import Duration
from rclpy.node import Node
from sensor_msgs.msg import JointState
from sg_search_interfaces.action import LookAt, OpenContainer
from std_msgs.msg import Bool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from sg_search.config import package_share
from sg_search.geometry import Transform, TransformError, yaw_from_quat
from sg_search.ros.futures import wait_for_subscription
from sg_search.ros.params import declare_config
from sg_search.ros.qos import CMD_VEL_QOS, LATCHED_QOS
from sg_search.ros.tf import create_transform_source, wait_for_transform
from sg_search.skills.config import HsrDriverConfig
from sg_search.skills.motions import MotionError, OpeningMotion, load_motions
from sg_search.skills.opening import (
    GRIPPER_JOINT,
    HEAD_JOINTS,
    HsrSkills,
    SkillAbort,
    SkillError,
)


def _yaw(q: object) -> float:
    return yaw_from_quat(tuple(float(getattr(q, k)) for k in "xyzw"))  # type: ignore[arg-type]


class HsrDriver(Node):
    """See the module docstring."""

    def __init__(self, node_name: str = "hsr_driver", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, HsrDriverConfig)
        motions = self.config.open_motions_file or str(package_share() / "config" / "hsr_open_motions.yaml")
        self.default_motion, self.motions = load_motions(motions)
        self.tf = create_transform_source(self)
        self.pose: tuple[float, float, float] | None = None
        self.joints: dict[str, float] = {}
        self._joints_stamp = 0.0
        self._odom_received = -math.inf
        self._sim_time = bool(self.get_parameter("use_sim_time").value)
        self.estop = False
        self._skill = threading.Lock()
        self._last_cmd = 0.0
        self._forwarding = False
        group = ReentrantCallbackGroup()
        self._base = self.create_publisher(Twist, "base_cmd_vel", CMD_VEL_QOS)
        self._head = self.create_publisher(JointTrajectory, "head_trajectory", 10)
        self._arm = self.create_publisher(JointTrajectory, "arm_trajectory", 10)
        self._gripper = self.create_publisher(JointTrajectory, "gripper_trajectory", 10)
        self.create_subscription(Odometry, "odom", self._on_odom, 10, callback_group=group)
        self.create_subscription(JointState, "joint_states", self._on_joints, 10, callback_group=group)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, CMD_VEL_QOS, callback_group=group)
        self.create_subscription(Bool, "emergency_stop", self._on_estop, LATCHED_QOS, callback_group=group)
        self.create_timer(0.1, self._dead_man, callback_group=group)
        for action, name, execute in (
            (OpenContainer, "open_container", self._open_container),
            (LookAt, "look_at", self._look_at),
        ):
            ActionServer(
                self, action, name, execute_callback=execute, callback_group=group,
                goal_callback=self._accept, cancel_callback=lambda _: CancelResponse.ACCEPT,
            )  # fmt: skip

    # ------------------------------------------------------------------ inputs and safety
    def _accept(self, _goal: object) -> GoalResponse:
        if self.estop or self._skill.locked():
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_odom(self, msg: Odometry) -> None:
        p = msg.pose.pose
        self.pose = (p.position.x, p.position.y, _yaw(p.orientation))
        self._odom_received = self.clock_s()

    def _on_joints(self, msg: JointState) -> None:
        self.joints.update(zip(msg.name, (float(v) for v in msg.position), strict=False))
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self._joints_stamp = stamp or time.monotonic()  # a driver without stamps: arrival time

    def _on_estop(self, msg: Bool) -> None:
        if msg.data and not self.estop:
            self.get_logger().error("emergency stop: base stopped, cmd_vel blocked, skills aborted")
        self.estop = bool(msg.data)
        if self.estop:
            self._base.publish(Twist())

    def _on_cmd_vel(self, msg: Twist) -> None:
        if self.estop or self._skill.locked():
            return
        c = self.config
        out = Twist()
        speed = math.hypot(msg.linear.x, msg.linear.y)
        scale = min(1.0, c.max_linear_mps / speed) if speed > 0 else 1.0
        out.linear.x, out.linear.y = msg.linear.x * scale, msg.linear.y * scale
        out.angular.z = max(-c.max_angular_rps, min(c.max_angular_rps, msg.angular.z))
        self._last_cmd, self._forwarding = time.monotonic(), True
        self._base.publish(out)

    def _dead_man(self) -> None:
        if self._forwarding and time.monotonic() - self._last_cmd > self.config.cmd_vel_timeout_s:
            self._forwarding = False
            self._base.publish(Twist())
            self.get_logger().warning(
                "cmd_vel went quiet: base stopped (dead-man)", throttle_duration_sec=5.0
            )

    # ------------------------------------------------------------------ the hardware (HsrHardware)
    def base_pose(self) -> tuple[float, float, float] | None:
        """The base in ``odom`` from odometry."""
        return self.pose

    def clock_s(self) -> float:
        """The skills' clock [s]: the node's (``/clock``) under ``use_sim_time``, else monotonic."""
        return self.get_clock().now().nanoseconds * 1e-9 if self._sim_time else time.monotonic()

    def base_pose_received(self) -> float:
        """When the latest odometry arrived [s, :meth:`clock_s`]; -inf before the first."""
        return self._odom_received

    def joint_positions(self) -> dict[str, float]:
        """The latest joint positions."""
        return dict(self.joints)

    def joints_stamp(self) -> float:
        """The header stamp [s] of the latest joint_states."""
        return self._joints_stamp

    def command_base(self, vx: float, vy: float, wz: float) -> None:
        """Omni-base velocity in the base frame; zero while the emergency stop holds (a skill
        that computed its command before the stop arrived does not send it after)."""
        twist = Twist()
        if not self.estop:
            twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
        self._base.publish(twist)

    def command_joints(self, names: tuple[str, ...], positions: tuple[float, ...], seconds: float) -> None:
        """One trajectory point on the controller that owns ``names``, once DDS has matched its
        subscription (at most ``controller_wait_s``)."""
        publisher = (
            self._head
            if names[0] in HEAD_JOINTS
            else self._gripper
            if names == (GRIPPER_JOINT,)
            else self._arm
        )
        point = JointTrajectoryPoint(
            positions=list(positions), time_from_start=Duration(seconds=seconds).to_msg()
        )
        if not wait_for_subscription(publisher, self.config.controller_wait_s):
            # DDS has not matched the controller: the command may be lost, and the skill would
            # wait for the joints to its time limit (pre_grasp under load, the head's had arrived)
            self.get_logger().warning(
                f"no controller subscribes to {publisher.topic_name} after "
                f"{self.config.controller_wait_s:.1f} s: the command may be lost"
            )
        publisher.publish(JointTrajectory(joint_names=list(names), points=[point]))

    def _skills(self, handle: ServerGoalHandle) -> HsrSkills:
        def interrupt() -> SkillError | None:
            if self.estop:
                return SkillError.EMERGENCY_STOP
            return SkillError.CANCELED if handle.is_cancel_requested else None

        return HsrSkills(_Hardware(self), self.config, interrupt)

    def _to_odom(self, frame: str) -> Transform:
        try:
            return wait_for_transform(self.tf, self.config.odom_frame, frame, None, self.config.tf_timeout_s)
        except TransformError as exc:
            raise SkillAbort(
                SkillError.TRANSFORM_FAILED, "look", f"no transform to {frame!r}: {exc}"
            ) from None

    # ------------------------------------------------------------------ look_at
    def _look_at(self, handle: ServerGoalHandle) -> LookAt.Result:
        result = LookAt.Result()
        with self._skill:
            try:
                target = handle.request.target
                point = self._to_odom(target.header.frame_id or self.config.odom_frame).apply(
                    np.array([[target.point.x, target.point.y, target.point.z]])
                )[0]
                result.pan, result.tilt = self._skills(handle).look_at(
                    (float(point[0]), float(point[1]), float(point[2]))
                )
                handle.succeed()
            except SkillAbort as abort:
                result.error_code, result.error_msg = int(abort.code), str(abort)
                handle.canceled() if abort.code == SkillError.CANCELED else handle.abort()
        return result

    # ------------------------------------------------------------------ open_container
    def _motion_for(self, goal: OpenContainer.Goal) -> OpeningMotion:
        motion = self.motions.get(goal.category, self.default_motion)
        try:
            if goal.opening:
                motion = replace(motion, opening=goal.opening)
            if goal.hinge_side:
                motion = replace(motion, hinge_side=int(goal.hinge_side))
        except MotionError as exc:
            raise SkillAbort(SkillError.INVALID_GOAL, "", str(exc)) from None
        return motion

    def _open_container(self, handle: ServerGoalHandle) -> OpenContainer.Result:
        result = OpenContainer.Result()
        feedback = OpenContainer.Feedback()

        def report(step: str, progress: float) -> None:
            feedback.step, feedback.progress = step, float(progress)
            handle.publish_feedback(feedback)

        with self._skill:
            try:
                goal = handle.request
                motion = self._motion_for(goal)
                pose = goal.handle.pose
                to_odom = self._to_odom(goal.handle.header.frame_id or self.config.odom_frame)
                p, heading = pose.position, _yaw(pose.orientation)
                centre, front = to_odom.apply(
                    np.array([[p.x, p.y, p.z], [p.x + math.cos(heading), p.y + math.sin(heading), p.z]])
                )
                yaw = math.atan2(front[1] - centre[1], front[0] - centre[0])
                handle_xyz = (float(centre[0]), float(centre[1]), float(centre[2]))
                result.opened = float(self._skills(handle).open(handle_xyz, yaw, motion, report))
                handle.succeed()
            except SkillAbort as abort:
                self.command_base(0.0, 0.0, 0.0)
                result.error_code, result.error_msg, result.failed_step = (
                    int(abort.code),
                    str(abort),
                    abort.step,
                )
                result.opened = float(abort.opened)
                self.get_logger().warning(f"open_container {handle.request.node_id!r}: {abort}")
                handle.canceled() if abort.code == SkillError.CANCELED else handle.abort()
        return result


class _Hardware:
    """The driver node as :class:`~sg_search.skills.opening.HsrHardware` (its clock: the node's
    ``clock_s``; a control period is slept on the wall clock)."""

    def __init__(self, node: HsrDriver) -> None:
        self.node = node

    def base_pose(self) -> tuple[float, float, float] | None:
        return self.node.base_pose()

    def base_pose_received(self) -> float:
        return self.node.base_pose_received()

    def joints(self) -> dict[str, float]:
        return self.node.joint_positions()

    def joints_stamp(self) -> float:
        return self.node.joints_stamp()

    def command_base(self, vx: float, vy: float, wz: float) -> None:
        self.node.command_base(vx, vy, wz)

    def command_joints(self, names: tuple[str, ...], positions: tuple[float, ...], seconds: float) -> None:
        self.node.command_joints(names, positions, seconds)

    def now(self) -> float:
        return self.node.clock_s()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
