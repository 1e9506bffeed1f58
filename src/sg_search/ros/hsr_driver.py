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
handle, open the gripper and back off. Every step has a timeout; cancel stops the base and
releases; an emergency stop stops the base and holds everything else as it is. The
gripper is driven by a joint trajectory on ``hand_motor_joint`` (positions
``gripper_open``/``gripper_closed``); an HSR set up with only the effort-based
``grasp`` action (tmc_control_msgs) needs a small adapter to that action (not done here).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
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
from sg_search.ros.params import declare_config
from sg_search.ros.qos import LATCHED_QOS
from sg_search.ros.tf import create_transform_source, wait_for_transform
from sg_search.skills.config import HsrDriverConfig
from sg_search.skills.motions import (
    MotionError,
    OpeningMotion,
    base_pose_for_hand,
    base_twist_towards,
    head_angles,
    hinge_position,
    load_motions,
    pull_hand_target,
)

HEAD_JOINTS = ("head_pan_joint", "head_tilt_joint")
ARM_JOINTS = ("arm_lift_joint", "arm_flex_joint", "arm_roll_joint", "wrist_flex_joint", "wrist_roll_joint")
GRIPPER_JOINT = "hand_motor_joint"


class SkillAbort(Exception):
    """A skill stops early; ``code`` is the action's error code (LookAt numbers its codes like
    OpenContainer), ``step`` where it stopped."""

    def __init__(self, code: int, step: str, message: str) -> None:
        super().__init__(message)
        self.code, self.step = code, step


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
        self.estop = False
        self._skill = threading.Lock()
        self._last_cmd = 0.0
        self._forwarding = False
        group = ReentrantCallbackGroup()
        self._base = self.create_publisher(Twist, "base_cmd_vel", 10)
        self._head = self.create_publisher(JointTrajectory, "head_trajectory", 10)
        self._arm = self.create_publisher(JointTrajectory, "arm_trajectory", 10)
        self._gripper = self.create_publisher(JointTrajectory, "gripper_trajectory", 10)
        self.create_subscription(Odometry, "odom", self._on_odom, 10, callback_group=group)
        self.create_subscription(JointState, "joint_states", self._on_joints, 10, callback_group=group)
        self.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, 10, callback_group=group)
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

    def _on_joints(self, msg: JointState) -> None:
        self.joints.update(zip(msg.name, (float(v) for v in msg.position), strict=False))

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
            self.get_logger().warn("cmd_vel went quiet: base stopped (dead-man)", throttle_duration_sec=5.0)

    # ------------------------------------------------------------------ primitives
    def _send(
        self, publisher: object, names: tuple[str, ...], positions: tuple[float, ...], seconds: float
    ) -> None:
        point = JointTrajectoryPoint(
            positions=list(positions), time_from_start=Duration(seconds=seconds).to_msg()
        )
        publisher.publish(JointTrajectory(joint_names=list(names), points=[point]))  # type: ignore[attr-defined]

    def _wait(self, handle: ServerGoalHandle, step: str, timeout: float, done: Callable[[], bool]) -> None:
        """Tick until ``done``; SkillAbort on cancel, emergency stop or timeout."""
        deadline = time.monotonic() + timeout
        period = 1.0 / self.config.control_rate_hz
        while not done():
            self._check(handle, step)
            if time.monotonic() > deadline:
                raise SkillAbort(
                    OpenContainer.Result.TIMEOUT, step, f"{step} did not finish within {timeout:.1f} s"
                )
            time.sleep(period)

    def _check(self, handle: ServerGoalHandle, step: str) -> None:
        if self.estop:
            raise SkillAbort(OpenContainer.Result.EMERGENCY_STOP, step, "emergency stop")
        if handle.is_cancel_requested:
            raise SkillAbort(OpenContainer.Result.CANCELED, step, "canceled")

    def _joints_at(self, targets: dict[str, float]) -> Callable[[], bool]:
        tol = self.config.joint_tolerance
        return lambda: all(abs(self.joints.get(n, math.inf) - v) <= tol for n, v in targets.items())

    def _drive_to(
        self,
        handle: ServerGoalHandle,
        step: str,
        goal: tuple[float, float, float],
        timeout: float,
        through: bool = False,
    ) -> None:
        """Drive the omni base to ``goal`` (odom frame) and stop there; ``through``: a waypoint
        passed within three times the tolerances, without stopping."""
        c = self.config
        scale = 3.0 if through else 1.0
        deadline = time.monotonic() + timeout
        period = 1.0 / c.control_rate_hz
        try:
            while True:
                self._check(handle, step)
                pose = self.pose
                if pose is None:
                    raise SkillAbort(OpenContainer.Result.TRANSFORM_FAILED, step, "no odometry")
                if (
                    math.dist(pose[:2], goal[:2]) <= c.position_tolerance_m * scale
                    and abs(math.remainder(goal[2] - pose[2], math.tau)) <= c.heading_tolerance_rad * scale
                ):
                    break
                if time.monotonic() > deadline:
                    raise SkillAbort(
                        OpenContainer.Result.TIMEOUT, step,
                        f"{step}: base still {math.dist(pose[:2], goal[:2]):.2f} m from its goal "
                        f"after {timeout:.1f} s",
                    )  # fmt: skip
                vx, vy, wz = base_twist_towards(pose, goal, c.max_linear_mps, c.max_angular_rps)
                twist = Twist()
                twist.linear.x, twist.linear.y, twist.angular.z = vx, vy, wz
                self._base.publish(twist)
                time.sleep(period)
        except BaseException:
            self._base.publish(Twist())
            raise
        if not through:
            self._base.publish(Twist())

    def _to_odom(self, frame: str) -> Transform:
        try:
            return wait_for_transform(self.tf, self.config.odom_frame, frame, None, self.config.tf_timeout_s)
        except TransformError as exc:
            raise SkillAbort(
                OpenContainer.Result.TRANSFORM_FAILED, "look", f"no transform to {frame!r}: {exc}"
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
                pan, tilt = self._aim_head(handle, (float(point[0]), float(point[1]), float(point[2])))
                result.pan, result.tilt = pan, tilt
                handle.succeed()
            except SkillAbort as abort:
                result.error_code, result.error_msg = abort.code, str(abort)
                handle.canceled() if abort.code == LookAt.Result.CANCELED else handle.abort()
        return result

    def _aim_head(
        self, handle: ServerGoalHandle, point_odom: tuple[float, float, float]
    ) -> tuple[float, float]:
        if self.pose is None:
            raise SkillAbort(OpenContainer.Result.TRANSFORM_FAILED, "look", "no odometry")
        x, y, yaw = self.pose
        dx, dy = point_odom[0] - x, point_odom[1] - y
        local = (
            math.cos(yaw) * dx + math.sin(yaw) * dy,
            -math.sin(yaw) * dx + math.cos(yaw) * dy,
            point_odom[2],
        )
        pan, tilt = head_angles(local, (0.0, 0.0, self.config.head_height_m))
        self._send(self._head, HEAD_JOINTS, (pan, tilt), 1.0)
        self._wait(
            handle,
            "look",
            self.config.head_timeout_s,
            self._joints_at(dict(zip(HEAD_JOINTS, (pan, tilt), strict=True))),
        )
        return pan, tilt

    # ------------------------------------------------------------------ open_container
    def _motion_for(self, goal: OpenContainer.Goal) -> OpeningMotion:
        motion = self.motions.get(goal.category, self.default_motion)
        try:
            if goal.opening:
                motion = replace(motion, opening=goal.opening)
            if goal.hinge_side:
                motion = replace(motion, hinge_side=int(goal.hinge_side))
        except MotionError as exc:
            raise SkillAbort(OpenContainer.Result.INVALID_GOAL, "", str(exc)) from None
        return motion

    def _open_container(self, handle: ServerGoalHandle) -> OpenContainer.Result:
        result = OpenContainer.Result()
        feedback = OpenContainer.Feedback()

        def report(step: str, progress: float) -> None:
            feedback.step, feedback.progress = step, float(progress)
            handle.publish_feedback(feedback)

        with self._skill:
            holding = False
            opening: tuple[tuple[float, float, float], float, OpeningMotion] | None = None
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
                self._validate(handle_xyz)
                opening = (handle_xyz, yaw, motion)
                report("look", 0.0)
                self._aim_head(handle, handle_xyz)
                report("pre_grasp", 0.0)
                c = self.config
                lift = min(max(handle_xyz[2] - c.hand_height_at_zero_lift_m, 0.0), c.arm_lift_max_m)
                arm = (lift, -math.pi / 2, 0.0, 0.0, 0.0)  # hand forward, horizontal
                self._send(self._arm, ARM_JOINTS, arm, 2.0)
                self._send(self._gripper, (GRIPPER_JOINT,), (c.gripper_open,), 1.0)
                self._wait(
                    handle,
                    "pre_grasp",
                    c.arm_timeout_s,
                    self._joints_at({ARM_JOINTS[0]: lift, GRIPPER_JOINT: c.gripper_open}),
                )
                standoff = (
                    handle_xyz[0] + motion.approach_m * math.cos(yaw),
                    handle_xyz[1] + motion.approach_m * math.sin(yaw),
                )
                self._drive_to(
                    handle, "pre_grasp", base_pose_for_hand(standoff, yaw, c.hand_reach_m), c.base_timeout_s
                )
                report("approach", 0.0)
                self._drive_to(
                    handle,
                    "approach",
                    base_pose_for_hand(handle_xyz[:2], yaw, c.hand_reach_m),
                    c.base_timeout_s,
                )
                report("grasp", 0.0)
                self._send(self._gripper, (GRIPPER_JOINT,), (c.gripper_closed,), 1.0)
                holding = True
                self._wait(handle, "grasp", c.grasp_timeout_s, self._gripper_settled())
                if self.joints.get(GRIPPER_JOINT, c.gripper_closed) < c.grasp_min_width:
                    raise SkillAbort(
                        OpenContainer.Result.GRASP_FAILED, "grasp", "the gripper closed on nothing"
                    )
                deadline = time.monotonic() + c.pull_timeout_s
                for k in range(1, c.pull_waypoints + 1):
                    hand, front_yaw = pull_hand_target(handle_xyz, yaw, motion, k / c.pull_waypoints)
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise SkillAbort(
                            OpenContainer.Result.TIMEOUT,
                            "pull",
                            f"pull did not finish within {c.pull_timeout_s:.1f} s",
                        )
                    goal_pose = base_pose_for_hand(hand, front_yaw, c.hand_reach_m)
                    self._drive_to(handle, "pull", goal_pose, remaining, through=k < c.pull_waypoints)
                    report("pull", k / c.pull_waypoints)
                    result.opened = float(self._opened(*opening))
                report("release", 0.0)
                self._release(handle)
                holding = False
                report("retreat", 0.0)
                x, y, heading = self.pose or (0.0, 0.0, 0.0)
                back = (x - c.retreat_m * math.cos(heading), y - c.retreat_m * math.sin(heading), heading)
                self._drive_to(handle, "retreat", back, c.base_timeout_s)
                handle.succeed()
            except SkillAbort as abort:
                self._base.publish(Twist())
                if holding and abort.code != OpenContainer.Result.EMERGENCY_STOP:
                    self._send(self._gripper, (GRIPPER_JOINT,), (self.config.gripper_open,), 1.0)  # let go
                result.error_code, result.error_msg, result.failed_step = abort.code, str(abort), abort.step
                if opening is not None and holding:
                    result.opened = float(self._opened(*opening))
                self.get_logger().warn(f"open_container {handle.request.node_id!r}: {abort}")
                handle.canceled() if abort.code == OpenContainer.Result.CANCELED else handle.abort()
        return result

    def _validate(self, handle_xyz: tuple[float, float, float]) -> None:
        if self.pose is None:
            raise SkillAbort(OpenContainer.Result.TRANSFORM_FAILED, "", "no odometry yet")
        distance = math.dist(self.pose[:2], handle_xyz[:2])
        if distance > self.config.max_handle_distance_m:
            raise SkillAbort(
                OpenContainer.Result.INVALID_GOAL, "",
                f"the handle is {distance:.2f} m away (at most {self.config.max_handle_distance_m:.2f}): "
                "navigate closer first",
            )  # fmt: skip
        top = self.config.hand_height_at_zero_lift_m + self.config.arm_lift_max_m
        if not self.config.hand_height_at_zero_lift_m - 0.3 <= handle_xyz[2] <= top:
            raise SkillAbort(
                OpenContainer.Result.INVALID_GOAL,
                "",
                f"the handle at z = {handle_xyz[2]:.2f} m is out of the arm's reach",
            )

    def _gripper_settled(self, still_s: float = 0.3) -> Callable[[], bool]:
        """A test for "the closing gripper stopped": fully closed, or not moving for
        ``still_s`` seconds (stalled on something) below the open position."""
        last: dict[str, float] = {"position": math.nan, "changed": time.monotonic()}

        def settled() -> bool:
            now = self.joints.get(GRIPPER_JOINT, math.nan)
            if not abs(now - last["position"]) < 1e-3:
                last["position"], last["changed"] = now, time.monotonic()
            if now <= self.config.gripper_closed + self.config.joint_tolerance:
                return True
            return time.monotonic() - last["changed"] >= still_s and now < self.config.gripper_open - 0.05

        return settled

    def _release(self, handle: ServerGoalHandle) -> None:
        self._send(self._gripper, (GRIPPER_JOINT,), (self.config.gripper_open,), 1.0)
        self._wait(
            handle,
            "release",
            self.config.grasp_timeout_s,
            self._joints_at({GRIPPER_JOINT: self.config.gripper_open}),
        )

    def _opened(self, handle_xyz: tuple[float, float, float], yaw: float, motion: OpeningMotion) -> float:
        """How far the hand has moved the handle: metres out (drawer) or radians (door)."""
        if self.pose is None:
            return 0.0
        x, y, heading = self.pose
        hand = (
            x + self.config.hand_reach_m * math.cos(heading),
            y + self.config.hand_reach_m * math.sin(heading),
        )
        if motion.opening == "drawer":
            return max(
                0.0, (hand[0] - handle_xyz[0]) * math.cos(yaw) + (hand[1] - handle_xyz[1]) * math.sin(yaw)
            )
        hx, hy = hinge_position(handle_xyz, yaw, motion)
        start = math.atan2(handle_xyz[1] - hy, handle_xyz[0] - hx)
        return abs(math.remainder(math.atan2(hand[1] - hy, hand[0] - hx) - start, math.tau))
