"""Opening motions per container category and the geometry of an open-by-pulling skill.

Frames: ``odom`` (z up, metres, radians); a handle pose is (x, y, z, yaw) with yaw the
direction its front faces (the way a drawer comes out). A hinged door's hinge lies
``hinge_radius_m`` beside the handle along the front, on the side ``hinge_side`` names
(+1 = left of the handle for someone facing the front); the door swings out, away from
the front. The robot holds the handle with its hand ``reach`` metres ahead of the base
centre, so every hand target maps to one base pose facing the front.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from sg_search.config import read_yaml

OPENINGS = ("drawer", "hinge")


class MotionError(ValueError):
    """A motions file or a goal the skill cannot execute; the message says what is wrong."""


@dataclass(frozen=True)
class OpeningMotion:
    """How to open one kind of container (metres, radians).

    Attributes:
        opening: "drawer" (pull along the front normal) or "hinge" (pull along an arc).
        pull_m: how far a drawer comes out.
        open_angle_rad: how far a door swings open.
        hinge_radius_m: hinge-to-handle distance of a door.
        hinge_side: +1 hinge left of the handle (facing the front), -1 right.
        approach_m: how far the base drives forward from the pre-grasp pose to reach the handle.
    """

    opening: str = "hinge"
    pull_m: float = 0.3
    open_angle_rad: float = math.radians(70)
    hinge_radius_m: float = 0.45
    hinge_side: int = 1
    approach_m: float = 0.15

    def __post_init__(self) -> None:
        if self.opening not in OPENINGS:
            raise MotionError(f"opening must be drawer or hinge, got {self.opening!r}")
        if self.hinge_side not in (-1, 1):
            raise MotionError(f"hinge_side must be +1 or -1, got {self.hinge_side}")
        limits = {
            "pull_m": (0.02, 0.8),
            "open_angle_rad": (0.05, math.pi * 0.75),
            "hinge_radius_m": (0.1, 1.2),
            "approach_m": (0.0, 0.5),
        }
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if not (math.isfinite(value) and low <= value <= high):
                raise MotionError(f"{name} must lie in [{low}, {high:.2f}], got {value}")


def load_motions(path: Path | str) -> tuple[OpeningMotion, dict[str, OpeningMotion]]:
    """The default motion and the per-category ones from a YAML file::

    default: {opening: hinge, open_angle_deg: 70, hinge_radius_m: 0.45}
    categories:
      drawer: {opening: drawer, pull_m: 0.3}
    """
    path = Path(path)
    try:
        document = read_yaml(path.read_text()) or {}
        default = _motion(document.get("default") or {}, OpeningMotion(), f"{path}: default")
        categories = {
            str(name): _motion(entry or {}, default, f"{path}: categories.{name}")
            for name, entry in (document.get("categories") or {}).items()
        }
    except (OSError, yaml.YAMLError, AttributeError) as exc:
        raise MotionError(f"cannot read opening motions {path}: {exc}") from exc
    return default, categories


def _motion(entry: dict[str, Any], base: OpeningMotion, where: str) -> OpeningMotion:
    entry = dict(entry)
    if "open_angle_deg" in entry:
        entry["open_angle_rad"] = math.radians(float(entry.pop("open_angle_deg")))
    known = {f.name for f in fields(OpeningMotion)}
    unknown = set(entry) - known
    if unknown:
        raise MotionError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(known)}, open_angle_deg)")
    try:
        return replace(base, **entry)
    except (TypeError, MotionError) as exc:
        raise MotionError(f"{where}: {exc}") from None


def hinge_position(
    handle: tuple[float, float, float], yaw: float, motion: OpeningMotion
) -> tuple[float, float]:
    """(x, y) of the hinge: ``hinge_radius_m`` along the front, on the side of ``hinge_side``
    (+1 = to the left of the handle for someone facing the front)."""
    # facing the front means looking along -front; their left is the front direction turned by -90 deg
    side = yaw - math.pi / 2 * motion.hinge_side
    return handle[0] + motion.hinge_radius_m * math.cos(side), handle[1] + motion.hinge_radius_m * math.sin(
        side
    )


def base_pose_for_hand(hand: tuple[float, float], yaw: float, reach: float) -> tuple[float, float, float]:
    """Base pose (x, y, heading) that puts the hand at ``hand`` while facing along -``yaw``
    (towards the container front); the hand is ``reach`` m ahead of the base centre."""
    heading = yaw + math.pi
    return hand[0] - reach * math.cos(heading), hand[1] - reach * math.sin(heading), _wrap(heading)


def pull_hand_target(
    handle: tuple[float, float, float], yaw: float, motion: OpeningMotion, fraction: float
) -> tuple[tuple[float, float], float]:
    """Where the hand holding the handle is after ``fraction`` of the opening, and the front
    direction there (a drawer keeps ``yaw``; a door's front turns with it)."""
    fraction = min(max(fraction, 0.0), 1.0)
    if motion.opening == "drawer":
        d = motion.pull_m * fraction
        return (handle[0] + d * math.cos(yaw), handle[1] + d * math.sin(yaw)), yaw
    hx, hy = hinge_position(handle, yaw, motion)
    start = math.atan2(handle[1] - hy, handle[0] - hx)
    turn = -motion.hinge_side * motion.open_angle_rad * fraction  # the handle swings towards the front
    angle = start + turn
    hand = (hx + motion.hinge_radius_m * math.cos(angle), hy + motion.hinge_radius_m * math.sin(angle))
    return hand, _wrap(yaw + turn)


def base_twist_towards(
    pose: tuple[float, float, float],
    goal: tuple[float, float, float],
    max_linear: float,
    max_angular: float,
    gain: float = 1.5,
) -> tuple[float, float, float]:
    """Holonomic P-controller with coordinated axes: (vx, vy, wz) in the base frame [m/s,
    rad/s]. Translation and rotation share one time scale (the slower axis at its limit, or
    1/``gain`` near the goal), so they finish together: a hand held ahead of the base moves
    along the straight line between two poses' hand positions instead of swinging out
    (what keeps a gripped handle on its arc)."""
    dx, dy = goal[0] - pose[0], goal[1] - pose[1]
    turn = _wrap(goal[2] - pose[2])
    seconds = max(math.hypot(dx, dy) / max_linear, abs(turn) / max_angular, 1.0 / gain)
    c, s = math.cos(pose[2]), math.sin(pose[2])
    return (c * dx + s * dy) / seconds, (-s * dx + c * dy) / seconds, turn / seconds


def head_angles(target: tuple[float, float, float], head: tuple[float, float, float]) -> tuple[float, float]:
    """(pan, tilt) [rad] that point a head at ``head`` (x, y, z in the base frame) towards
    ``target`` (base frame); tilt is negative looking down."""
    dx, dy, dz = (t - h for t, h in zip(target, head, strict=True))
    return math.atan2(dy, dx), math.atan2(dz, math.hypot(dx, dy))


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))
