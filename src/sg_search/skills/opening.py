"""Opening a drawer or a hinged door with the HSR, and pointing its head: the control
sequences, behind a small hardware interface that the real robot (the ``hsr_driver`` node over
the HSR's controllers) and its test double both satisfy.

Open: look at the handle; arm forward at the handle's height, gripper open; drive the omni
base to a standoff, then so that the hand is at the handle; close the gripper (a gripper that
closes on nothing is GRASP_FAILED); pull along the drawer's line or the door's arc in
``pull_waypoints`` base waypoints; release; back off. Every wait checks cancel and the
emergency stop; every motion has a timeout. Poses and points in ``odom`` [m, rad]; times in
seconds of the hardware's clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from enum import IntEnum
from typing import Protocol

from sg_search.geometry import Pose2D
from sg_search.skills.config import HsrDriverConfig
from sg_search.skills.motions import (
    OpeningMotion,
    base_pose_for_hand,
    base_twist_towards,
    head_angles,
    hinge_position,
    pull_hand_target,
)

HEAD_JOINTS = ("head_pan_joint", "head_tilt_joint")
ARM_JOINTS = ("arm_lift_joint", "arm_flex_joint", "arm_roll_joint", "wrist_flex_joint", "wrist_roll_joint")
GRIPPER_JOINT = "hand_motor_joint"
Point3 = tuple[float, float, float]


class SkillError(IntEnum):
    """Result codes; the values equal the OpenContainer/LookAt actions' constants."""

    SUCCESS = 0
    INVALID_GOAL = 1
    CANCELED = 2
    EMERGENCY_STOP = 3
    TIMEOUT = 4
    GRASP_FAILED = 5
    TRANSFORM_FAILED = 6


class SkillAbort(Exception):
    """A skill stopped at ``step`` with ``code``; ``opened``: how far it had opened [m or rad]."""

    def __init__(self, code: SkillError, step: str, message: str) -> None:
        super().__init__(message)
        self.code, self.step = code, step
        self.opened = 0.0


class HsrHardware(Protocol):
    """What the sequences need of an HSR."""

    def base_pose(self) -> Pose2D | None:
        """The base in ``odom`` (odometry), or None before the first message."""
        ...

    def base_pose_received(self) -> float:
        """When the latest odometry arrived [s, :meth:`now`'s clock]; -inf before the first."""
        ...

    def joints(self) -> Mapping[str, float]:
        """The latest joint positions by name [rad or m]."""
        ...

    def joints_stamp(self) -> float:
        """When the latest joint positions were measured [s, the hardware's clock]."""
        ...

    def command_base(self, vx: float, vy: float, wz: float) -> None:
        """Omni-base velocity in the base frame [m/s, rad/s]; zeros stop it."""
        ...

    def command_joints(self, names: tuple[str, ...], positions: tuple[float, ...], seconds: float) -> None:
        """A trajectory to ``positions`` in ``seconds`` (head, arm or gripper joints)."""
        ...

    def now(self) -> float:
        """Seconds of the hardware's clock."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait one control period."""
        ...


Interrupt = Callable[[], SkillError | None]
"""CANCELED or EMERGENCY_STOP when the skill must stop now, else None."""


class HsrSkills:
    """Look-at and open on one :class:`HsrHardware` with the driver's parameters."""

    def __init__(self, hardware: HsrHardware, config: HsrDriverConfig, interrupt: Interrupt) -> None:
        self.hw = hardware
        self.config = config
        self.interrupt = interrupt

    # ------------------------------------------------------------------ primitives
    def _check(self, step: str) -> None:
        reason = self.interrupt()
        if reason == SkillError.EMERGENCY_STOP:
            raise SkillAbort(reason, step, "emergency stop")
        if reason is not None:
            raise SkillAbort(SkillError.CANCELED, step, "canceled")

    def _wait(self, step: str, timeout: float, done: Callable[[], bool]) -> None:
        """Tick until ``done``; SkillAbort on cancel, emergency stop or timeout."""
        deadline = self.hw.now() + timeout
        while not done():
            self._check(step)
            if self.hw.now() > deadline:
                raise SkillAbort(SkillError.TIMEOUT, step, f"{step} did not finish within {timeout:.1f} s")
            self.hw.sleep(1.0 / self.config.control_rate_hz)

    def _joints_at(self, targets: Mapping[str, float]) -> Callable[[], bool]:
        tol = self.config.joint_tolerance
        return lambda: all(abs(self.hw.joints().get(n, math.inf) - v) <= tol for n, v in targets.items())

    def _pose(self, step: str) -> Pose2D:
        """The base pose; before the first odometry message, wait ``odom_wait_s`` for it (a goal
        may arrive as the driver starts, before DDS has matched it with the base), then
        TRANSFORM_FAILED."""
        if self.hw.base_pose() is None:
            try:
                self._wait(step, self.config.odom_wait_s, lambda: self.hw.base_pose() is not None)
            except SkillAbort as abort:
                if abort.code != SkillError.TIMEOUT:
                    raise
                message = f"no odometry within {self.config.odom_wait_s:.1f} s"
                raise SkillAbort(SkillError.TRANSFORM_FAILED, step, message) from None
        pose = self.hw.base_pose()
        if pose is None:  # odometry, once received, is kept: only a driver that dropped it
            raise SkillAbort(
                SkillError.TRANSFORM_FAILED, step, "the base pose was lost after it was received"
            )
        return pose

    def drive_to(self, step: str, goal: Pose2D, timeout: float, through: bool = False) -> None:
        """Drive the omni base to ``goal`` and stop there; ``through``: a waypoint passed within
        three times the tolerances, without stopping. While the latest odometry is older than
        ``odom_stale_s`` the base is held still (it is never driven blind) and drives on when
        odometry returns, within ``timeout``. The base is stopped on any abort."""
        c = self.config
        scale = 3.0 if through else 1.0
        deadline = self.hw.now() + timeout
        try:
            while True:
                self._check(step)
                pose = self._pose(step)
                if (
                    math.dist(pose[:2], goal[:2]) <= c.position_tolerance_m * scale
                    and abs(math.remainder(goal[2] - pose[2], math.tau)) <= c.heading_tolerance_rad * scale
                ):
                    break
                now = self.hw.now()
                odometry_age = now - self.hw.base_pose_received()
                if now > deadline:
                    raise SkillAbort(
                        SkillError.TIMEOUT, step,
                        f"{step}: base still {math.dist(pose[:2], goal[:2]):.2f} m from its goal "
                        f"after {timeout:.1f} s (latest odometry {odometry_age:.2f} s old)",
                    )  # fmt: skip
                if odometry_age > c.odom_stale_s:
                    self.hw.command_base(0.0, 0.0, 0.0)
                else:
                    twist = base_twist_towards(pose, goal, c.max_linear_mps, c.max_angular_rps)
                    self.hw.command_base(*twist)
                self.hw.sleep(1.0 / c.control_rate_hz)
        except BaseException:
            self.hw.command_base(0.0, 0.0, 0.0)
            raise
        if not through:
            self.hw.command_base(0.0, 0.0, 0.0)

    # ------------------------------------------------------------------ look
    def look_at(self, point: Point3) -> tuple[float, float]:
        """Pan and tilt [rad] the head towards ``point`` (odom) and wait until it is there."""
        x, y, yaw = self._pose("look")
        dx, dy = point[0] - x, point[1] - y
        local = (math.cos(yaw) * dx + math.sin(yaw) * dy, -math.sin(yaw) * dx + math.cos(yaw) * dy, point[2])
        pan, tilt = head_angles(local, (0.0, 0.0, self.config.head_height_m))
        self.hw.command_joints(HEAD_JOINTS, (pan, tilt), 1.0)
        self._wait(
            "look",
            self.config.head_timeout_s,
            self._joints_at(dict(zip(HEAD_JOINTS, (pan, tilt), strict=True))),
        )
        return pan, tilt

    # ------------------------------------------------------------------ open
    def validate(self, handle: Point3) -> None:
        """INVALID_GOAL for a handle too far from the base or out of the arm's reach."""
        c = self.config
        distance = math.dist(self._pose("")[:2], handle[:2])
        if distance > c.max_handle_distance_m:
            raise SkillAbort(
                SkillError.INVALID_GOAL, "",
                f"the handle is {distance:.2f} m away (at most {c.max_handle_distance_m:.2f}): "
                "navigate closer first",
            )  # fmt: skip
        if (
            not c.hand_height_at_zero_lift_m - 0.3
            <= handle[2]
            <= c.hand_height_at_zero_lift_m + c.arm_lift_max_m
        ):
            raise SkillAbort(
                SkillError.INVALID_GOAL, "", f"the handle at z = {handle[2]:.2f} m is out of the arm's reach"
            )

    def open(
        self, handle: Point3, yaw: float, motion: OpeningMotion, report: Callable[[str, float], None]
    ) -> float:
        """Open the container whose handle is at ``handle`` facing ``yaw`` (module docstring);
        how far it opened [m or rad]. SkillAbort names the failed step; then the base is
        stopped and the gripper lets go (unless the emergency stop holds everything)."""
        c = self.config
        self.validate(handle)
        holding = False
        try:
            report("look", 0.0)
            self.look_at(handle)
            report("pre_grasp", 0.0)
            lift = min(max(handle[2] - c.hand_height_at_zero_lift_m, 0.0), c.arm_lift_max_m)
            self.hw.command_joints(ARM_JOINTS, (lift, -math.pi / 2, 0.0, 0.0, 0.0), 2.0)  # hand forward
            self.hw.command_joints((GRIPPER_JOINT,), (c.gripper_open,), 1.0)
            self._wait(
                "pre_grasp",
                c.arm_timeout_s,
                self._joints_at({ARM_JOINTS[0]: lift, GRIPPER_JOINT: c.gripper_open}),
            )
            standoff = (
                handle[0] + motion.approach_m * math.cos(yaw),
                handle[1] + motion.approach_m * math.sin(yaw),
            )
            self.drive_to("pre_grasp", base_pose_for_hand(standoff, yaw, c.hand_reach_m), c.base_timeout_s)
            report("approach", 0.0)
            self.drive_to("approach", base_pose_for_hand(handle[:2], yaw, c.hand_reach_m), c.base_timeout_s)
            report("grasp", 0.0)
            self.hw.command_joints((GRIPPER_JOINT,), (c.gripper_closed,), 1.0)
            holding = True
            self._wait("grasp", c.grasp_timeout_s, self._gripper_settled())
            if self.hw.joints().get(GRIPPER_JOINT, c.gripper_closed) < c.grasp_min_width:
                raise SkillAbort(SkillError.GRASP_FAILED, "grasp", "the gripper closed on nothing")
            self._pull(handle, yaw, motion, report)
            opened = self.opened(handle, yaw, motion)  # what the hand reached, before letting go
            report("release", 0.0)
            self.hw.command_joints((GRIPPER_JOINT,), (c.gripper_open,), 1.0)
            self._wait("release", c.grasp_timeout_s, self._joints_at({GRIPPER_JOINT: c.gripper_open}))
            holding = False
            report("retreat", 0.0)
            x, y, heading = self._pose("retreat")
            back = (x - c.retreat_m * math.cos(heading), y - c.retreat_m * math.sin(heading), heading)
            self.drive_to("retreat", back, c.base_timeout_s)
            return opened
        except SkillAbort as abort:
            self.hw.command_base(0.0, 0.0, 0.0)
            if holding and abort.code != SkillError.EMERGENCY_STOP:
                self.hw.command_joints((GRIPPER_JOINT,), (c.gripper_open,), 1.0)  # let go
            abort.opened = self.opened(handle, yaw, motion) if holding else 0.0
            raise

    def _pull(
        self, handle: Point3, yaw: float, motion: OpeningMotion, report: Callable[[str, float], None]
    ) -> None:
        c = self.config
        deadline = self.hw.now() + c.pull_timeout_s
        for k in range(1, c.pull_waypoints + 1):
            hand, front_yaw = pull_hand_target(handle, yaw, motion, k / c.pull_waypoints)
            remaining = deadline - self.hw.now()
            if remaining <= 0:
                raise SkillAbort(
                    SkillError.TIMEOUT, "pull", f"pull did not finish within {c.pull_timeout_s:.1f} s"
                )
            goal = base_pose_for_hand(hand, front_yaw, c.hand_reach_m)
            self.drive_to("pull", goal, remaining, through=k < c.pull_waypoints)
            report("pull", k / c.pull_waypoints)

    def _gripper_settled(self, still_s: float = 0.3) -> Callable[[], bool]:
        """A test for "the closing gripper stopped": fully closed, or unchanged over
        measurements ``still_s`` seconds apart (stalled on something) below the open position.
        Measurement stamps, not the clock now: a robot whose joint states come late has not
        stalled."""
        c = self.config
        last: dict[str, float] = {"position": math.nan, "changed": self.hw.joints_stamp()}

        def settled() -> bool:
            position, stamp = self.hw.joints().get(GRIPPER_JOINT, math.nan), self.hw.joints_stamp()
            if not abs(position - last["position"]) < 1e-3:
                last["position"], last["changed"] = position, stamp
            if position <= c.gripper_closed + c.joint_tolerance:
                return True
            return stamp - last["changed"] >= still_s and position < c.gripper_open - 0.05

        return settled

    def opened(self, handle: Point3, yaw: float, motion: OpeningMotion) -> float:
        """How far the hand has moved the handle: metres out (drawer) or radians (door)."""
        pose = self.hw.base_pose()
        if pose is None:
            return 0.0
        x, y, heading = pose
        hand = (
            x + self.config.hand_reach_m * math.cos(heading),
            y + self.config.hand_reach_m * math.sin(heading),
        )
        if motion.opening == "drawer":
            return max(0.0, (hand[0] - handle[0]) * math.cos(yaw) + (hand[1] - handle[1]) * math.sin(yaw))
        hx, hy = hinge_position(handle, yaw, motion)
        start = math.atan2(handle[1] - hy, handle[0] - hx)
        return abs(math.remainder(math.atan2(hand[1] - hy, hand[0] - hx) - start, math.tau))
