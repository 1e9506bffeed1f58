"""The HSR's opening sequence in the core, on the HSR test double's simulator in simulated
time (no DDS): a drawer and a hinged door open; a missed grasp, a handle out of reach, a
cancel and an emergency stop end with their codes and a stopped base; odometry that is late
or stops holds the base still."""

from __future__ import annotations

import math

import pytest

from sg_search.geometry import Pose2D
from sg_search.sim.hsr.fake_hsr import FakeHsrModel, FakeHsrParams
from sg_search.skills.config import HsrDriverConfig
from sg_search.skills.motions import OpeningMotion
from sg_search.skills.opening import HsrSkills, SkillAbort, SkillError

DT = 0.02  # [s] simulated control period


class SimulatedHsr:
    """The fake HSR's simulator as the skills' hardware: every sleep advances it ``DT``."""

    def __init__(self, containers: list[dict[str, object]]) -> None:
        self.robot = FakeHsrModel(FakeHsrParams(), containers, (0.0, 0.0, 0.0))
        self.t = 0.0
        self.base_commands: list[tuple[float, float, float]] = []

    def base_pose(self) -> Pose2D:
        return self.robot.pose

    def base_pose_received(self) -> float:
        return self.t

    def joints(self) -> dict[str, float]:
        return dict(self.robot.joints)

    def joints_stamp(self) -> float:
        return self.t

    def command_base(self, vx: float, vy: float, wz: float) -> None:
        self.robot.twist = (vx, vy, wz)
        self.base_commands.append((vx, vy, wz))

    def command_joints(self, names: tuple[str, ...], positions: tuple[float, ...], seconds: float) -> None:
        self.robot.targets.update(zip(names, positions, strict=True))

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.robot.tick(DT)
        self.t += DT


DRAWER = {"id": "drawer_0", "opening": "drawer", "handle": [1.2, 0.0, 0.7], "yaw": math.pi}
DOOR = {"id": "door_0", "opening": "hinge", "handle": [1.2, 0.0, 0.9], "yaw": math.pi, "hinge_side": 1,
        "hinge_radius": 0.45}  # fmt: skip


def _skills(hsr: SimulatedHsr, interrupt=lambda: None) -> HsrSkills:  # type: ignore[no-untyped-def]
    return HsrSkills(hsr, HsrDriverConfig(), interrupt)


@pytest.mark.parametrize(("spec", "motion", "at_least"), [
    (DRAWER, OpeningMotion(opening="drawer", pull_m=0.3), 0.25),
    (DOOR, OpeningMotion(opening="hinge", hinge_side=1, hinge_radius_m=0.45, open_angle_rad=1.2), 0.9),
])  # fmt: skip
def test_opens_a_drawer_and_a_door(spec: dict[str, object], motion: OpeningMotion, at_least: float) -> None:
    hsr = SimulatedHsr([spec])
    steps: list[str] = []
    handle = tuple(float(v) for v in spec["handle"])  # type: ignore[attr-defined]
    opened = _skills(hsr).open(handle, math.pi, motion, lambda step, _: steps.append(step))  # type: ignore[arg-type]
    assert hsr.robot.containers[0].opened >= at_least and opened == pytest.approx(
        hsr.robot.containers[0].opened, abs=0.05
    )
    assert [s for i, s in enumerate(steps) if s not in steps[:i]] == [
        "look", "pre_grasp", "approach", "grasp", "pull", "release", "retreat"
    ]  # fmt: skip
    assert hsr.robot.held is None and hsr.base_commands[-1] == (0.0, 0.0, 0.0)


def test_a_grasp_that_closes_on_nothing_fails_and_lets_go() -> None:
    hsr = SimulatedHsr([])  # the handle the goal names is not there
    with pytest.raises(SkillAbort) as failed:
        _skills(hsr).open((1.2, 0.0, 0.7), math.pi, OpeningMotion(opening="drawer"), lambda *_: None)
    assert failed.value.code == SkillError.GRASP_FAILED and failed.value.step == "grasp"
    assert hsr.robot.targets["hand_motor_joint"] == HsrDriverConfig().gripper_open
    assert hsr.base_commands[-1] == (0.0, 0.0, 0.0)


def test_a_handle_out_of_reach_is_an_invalid_goal() -> None:
    hsr = SimulatedHsr([DRAWER])
    with pytest.raises(SkillAbort, match="navigate closer first") as far:
        _skills(hsr).open((5.0, 0.0, 0.7), math.pi, OpeningMotion(opening="drawer"), lambda *_: None)
    assert far.value.code == SkillError.INVALID_GOAL and hsr.base_commands == []  # refused before moving


@pytest.mark.parametrize("reason", [SkillError.CANCELED, SkillError.EMERGENCY_STOP])
def test_cancel_and_emergency_stop_stop_the_base_mid_pull(reason: SkillError) -> None:
    hsr = SimulatedHsr([DRAWER])
    pulling: list[bool] = []

    def interrupt() -> SkillError | None:
        return reason if pulling else None

    with pytest.raises(SkillAbort) as stopped:
        _skills(hsr, interrupt).open(
            (1.2, 0.0, 0.7), math.pi, OpeningMotion(opening="drawer", pull_m=0.3),
            lambda step, _: pulling.append(True) if step == "pull" else None,
        )  # fmt: skip
    assert stopped.value.code == reason and stopped.value.step == "pull"
    assert hsr.base_commands[-1] == (0.0, 0.0, 0.0)
    held_on = hsr.robot.targets["hand_motor_joint"] != HsrDriverConfig().gripper_open
    assert held_on == (reason == SkillError.EMERGENCY_STOP)  # an e-stop freezes everything, a cancel lets go


class LateOdometry(SimulatedHsr):
    """The fake HSR whose first odometry message arrives only after ``late_s`` [s]."""

    def __init__(self, late_s: float) -> None:
        super().__init__([DRAWER])
        self.late_s = late_s

    def base_pose(self) -> Pose2D | None:  # type: ignore[override]
        return self.robot.pose if self.t >= self.late_s else None


def test_a_goal_that_arrives_before_the_first_odometry_waits_for_it() -> None:
    hsr = LateOdometry(late_s=0.5)
    pan, _ = _skills(hsr).look_at((0.0, 1.0, 1.0))  # to the left of a base facing +x
    assert pan == pytest.approx(math.pi / 2, abs=0.05) and hsr.t >= 0.5


def test_no_odometry_at_all_is_a_transform_failure_after_the_timeout() -> None:
    hsr = LateOdometry(late_s=math.inf)
    with pytest.raises(SkillAbort, match=r"no odometry within 10\.0 s") as failed:
        _skills(hsr).look_at((0.0, 1.0, 1.0))
    assert failed.value.code == SkillError.TRANSFORM_FAILED and hsr.t >= HsrDriverConfig().odom_wait_s


class OdometryGap(SimulatedHsr):
    """The fake HSR whose odometry stops arriving for ``gap_s`` [s] once the pull has begun
    (the base itself keeps obeying its last command)."""

    def __init__(self, gap_s: float) -> None:
        super().__init__([DRAWER])
        self.gap_s = gap_s
        self.gap: tuple[float, float] | None = None  # [start, end) in simulated seconds
        self.commands_in_gap: list[tuple[float, tuple[float, float, float]]] = []  # (odometry age, twist)
        self.last: tuple[Pose2D, float] = (self.robot.pose, 0.0)

    def start_gap(self) -> None:
        if self.gap is None:
            self.gap = (self.t, self.t + self.gap_s)

    def _in_gap(self) -> bool:
        return self.gap is not None and self.gap[0] <= self.t < self.gap[1]

    def base_pose(self) -> Pose2D:
        if not self._in_gap():
            self.last = (self.robot.pose, self.t)
        return self.last[0]

    def base_pose_received(self) -> float:
        return self.last[1]

    def command_base(self, vx: float, vy: float, wz: float) -> None:
        super().command_base(vx, vy, wz)
        if self._in_gap():
            self.commands_in_gap.append((self.t - self.last[1], (vx, vy, wz)))


def test_the_base_is_held_still_while_odometry_is_stale_and_drives_on_when_it_returns() -> None:
    hsr = OdometryGap(gap_s=2.0)
    stale_s = HsrDriverConfig().odom_stale_s
    opened = _skills(hsr).open(
        (1.2, 0.0, 0.7), math.pi, OpeningMotion(opening="drawer", pull_m=0.3),
        lambda step, _: hsr.start_gap() if step == "pull" else None,
    )  # fmt: skip
    assert opened == pytest.approx(0.3, abs=0.03)  # finished after the gap
    blind = [twist for age, twist in hsr.commands_in_gap if age > stale_s]
    assert len(blind) > 10 and all(twist == (0.0, 0.0, 0.0) for twist in blind)
    assert any(twist != (0.0, 0.0, 0.0) for age, twist in hsr.commands_in_gap if age <= stale_s)


def test_odometry_that_never_returns_times_out_naming_its_age() -> None:
    hsr = OdometryGap(gap_s=math.inf)
    with pytest.raises(SkillAbort, match=r"latest odometry \d+\.\d+ s old") as failed:
        _skills(hsr).open(
            (1.2, 0.0, 0.7), math.pi, OpeningMotion(opening="drawer", pull_m=0.3),
            lambda step, _: hsr.start_gap() if step == "pull" else None,
        )  # fmt: skip
    assert failed.value.code == SkillError.TIMEOUT and failed.value.step == "pull"
    assert hsr.robot.twist == (0.0, 0.0, 0.0)
    assert hsr.robot.targets["hand_motor_joint"] == HsrDriverConfig().gripper_open  # lets go
