"""A TEST DOUBLE of the Toyota HSR (no such robot exists here): base, joints, and containers
whose handles a closing gripper can hold and pull (the simulator behind ``fake_hsr``).

The base integrates (vx, vy, wz) in its own frame; joints move towards their targets at
``joint_speed``. Containers ({id, opening: drawer|hinge, handle: [x, y, z], yaw,
hinge_side, hinge_radius, max_open, locked}) have a handle: a closing gripper within
``grasp_tolerance_m`` of it stalls at ``handle_width`` and holds it; while held, the base can
only move so that the hand stays on the drawer's line or the door's arc (other motion is
refused, as is any motion of a locked container's handle); the opening follows the hand.
The hand is ``hand_reach_m`` ahead of the base at ``hand_height_at_zero_lift_m`` +
arm_lift_joint (the HSR's front-grasp posture). Frame ``odom``, metres, radians, seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class FakeHsrParams:
    """The double's geometry and speeds (module docstring)."""

    joint_speed: float = 1.0
    hand_reach_m: float = 0.6
    hand_height_at_zero_lift_m: float = 0.35
    grasp_tolerance_m: float = 0.05
    handle_width: float = 0.3


class FakeHsrModel:
    """The simulated robot: call :meth:`tick` at a fixed rate."""

    def __init__(
        self, params: FakeHsrParams, containers: list[dict[str, Any]], start: tuple[float, float, float]
    ) -> None:
        self.params = params
        self.containers = [FakeContainer(c) for c in containers]
        self.pose = start
        self.twist = (0.0, 0.0, 0.0)
        self.joints = dict.fromkeys(JOINTS, 0.0)
        self.joints["hand_motor_joint"] = 1.0
        self.targets = dict(self.joints)
        self.held: FakeContainer | None = None

    def hand(self, pose: tuple[float, float, float]) -> tuple[float, float, float]:
        """Hand position for a base pose."""
        x, y, yaw = pose
        p = self.params
        return (
            x + p.hand_reach_m * math.cos(yaw),
            y + p.hand_reach_m * math.sin(yaw),
            p.hand_height_at_zero_lift_m + self.joints["arm_lift_joint"],
        )

    def tick(self, dt: float) -> None:
        """Move the joints and the base for ``dt`` seconds."""
        p = self.params
        for name, target in self.targets.items():
            step = max(-p.joint_speed * dt, min(p.joint_speed * dt, target - self.joints[name]))
            if name == "hand_motor_joint" and step < 0 and self.held is None:
                self.held = self._grasped()
            if name == "hand_motor_joint" and self.held is not None:
                if target >= p.handle_width + 0.1:
                    self.held = None  # opening releases
                elif self.joints[name] + step < p.handle_width:
                    step = p.handle_width - self.joints[name]  # stalls on the handle
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

    def _grasped(self) -> FakeContainer | None:
        hand = self.hand(self.pose)
        for container in self.containers:
            if (
                math.dist(hand, container.handle_now()) <= self.params.grasp_tolerance_m
                and abs(self.joints["arm_flex_joint"] + math.pi / 2) < 0.1
            ):
                return container
        return None

    def state(self) -> dict[str, Any]:
        """Base pose, held container, openings, joints (JSON-ready)."""
        return {
            "base": list(self.pose),
            "held": self.held.id if self.held else "",
            "opened": {c.id: c.opened for c in self.containers},
            "joints": dict(self.joints),
        }
