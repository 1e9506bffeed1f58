"""hsr_driver against fake_hsr (a test double of the Toyota HSR), both in their own processes
over DDS: opening a drawer and a hinged door, cancel, emergency stop, timeout, a missed grasp,
the cmd_vel dead-man."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import threading
import time
from typing import Any

import pytest
import rclpy
from conftest import wait_for
from geometry_msgs.msg import PoseStamped, Twist
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sg_search_interfaces.action import LookAt, OpenContainer
from std_msgs.msg import Bool, String
from trajectory_msgs.msg import JointTrajectory

from sg_search.config import package_share
from sg_search.geometry.transforms import quat_from_yaw
from sg_search.ros.action_client import ActionClient
from sg_search.ros.futures import wait_future
from sg_search.ros.hsr_driver import HsrDriver
from sg_search.skills.motions import OpeningMotion, hinge_position, load_motions, pull_hand_target
from sg_search.skills.opening import ARM_JOINTS

pytestmark = [pytest.mark.ros, pytest.mark.xdist_group("robot")]  # see pyproject.toml

LATCHED = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
REMAPS = (
    "-r", "base_cmd_vel:=/omni_base_controller/cmd_vel", "-r", "odom:=/omni_base_controller/wheel_odom",
    "-r", "head_trajectory:=/head_trajectory_controller/joint_trajectory",
    "-r", "arm_trajectory:=/arm_trajectory_controller/joint_trajectory",
    "-r", "gripper_trajectory:=/gripper_controller/joint_trajectory",
)  # fmt: skip


def start_robot(start_node: Any, containers: list[dict[str, Any]], *driver_params: str) -> Any:
    """The fake (returned) and the driver; the driver on the fake's simulated clock
    (``use_sim_time``), so a fake starved of CPU beside the other worker's tests does not run
    the driver's timeouts out."""
    fake = start_node("fake_hsr", "-p", f"containers:='{json.dumps(containers)}'")  # a YAML string
    start_node(
        "hsr_driver", *REMAPS, "-p", "use_sim_time:=true", "-p", "max_linear_mps:=0.4",
        "-p", "max_angular_rps:=1.0", *driver_params,
    )  # fmt: skip
    return fake


def robot_motion(category: str) -> OpeningMotion:
    """The driver's opening motion for ``category`` (the shipped motions file)."""
    default, motions = load_motions(str(package_share() / "config" / "hsr_open_motions.yaml"))
    return motions.get(category, default)


class Robot:
    """The test's view: the fake's state, the driver's open action, cmd_vel and e-stop."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.states: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # [s, time.monotonic] of each state message
        node.create_subscription(String, "/fake_hsr/state", self._on_state, 10)
        self.client = ActionClient(node, OpenContainer, "open_container")
        self.estop = node.create_publisher(Bool, "emergency_stop", LATCHED)
        self.cmd_vel = node.create_publisher(Twist, "cmd_vel", 10)
        self.feedback: list[str] = []
        assert wait_for(lambda: bool(self.states) and self.client.server_is_ready(), timeout=60.0)

    def _on_state(self, message: String) -> None:
        self.states.append(json.loads(message.data))
        self.arrivals.append(time.monotonic())

    @property
    def state(self) -> dict[str, Any]:
        return self.states[-1]

    def stream_since(self, first: int) -> str:
        """The fake's state stream from message ``first`` on, for a failed goal's message:
        whether the simulator paused or the base stood still."""
        n = len(self.arrivals)  # a state is appended before its arrival time
        times, bases = self.arrivals[first:n], [s["base"] for s in self.states[first:n]]
        if len(times) < 2:
            return f"{len(times)} state messages"
        recent = [b for b, t in zip(bases, times, strict=True) if t >= times[-1] - 5.0]
        return (
            f"{len(times)} state messages over {times[-1] - times[0]:.1f} s, largest gap "
            f"{max(b - a for a, b in itertools.pairwise(times)):.2f} s; the base moved "
            f"{math.dist(recent[0][:2], recent[-1][:2]):.3f} m in the last 5 s; last base {bases[-1]}"
        )

    def open(self, category: str, handle: tuple[float, float, float], yaw: float, **goal: Any) -> Any:
        """Send an open goal; returns the goal handle (accepted)."""
        message = OpenContainer.Goal(node_id=f"{category}_test", category=category, **goal)
        message.handle = PoseStamped()
        message.handle.header.frame_id = "map"
        message.handle.pose.position.x, message.handle.pose.position.y, message.handle.pose.position.z = (
            handle
        )
        q = quat_from_yaw(yaw)
        o = message.handle.pose.orientation
        o.x, o.y, o.z, o.w = (float(v) for v in q)
        self.feedback.clear()
        sent = self.client.send_goal_with_resend(
            message, lambda f: self.feedback.append(f.feedback.step), timeout_s=10.0
        )
        assert sent is not None and sent.accepted
        return sent

    def still(self, ticks: int = 10, timeout: float = 10.0) -> bool:
        """Whether the base stood still over the fake's next ``ticks`` state messages. Counted in
        the fake's ticks, not wall time: a fake starved of CPU publishes nothing, and two reads of
        one stale state are no evidence of rest (the next tick then applied the last twist)."""
        first = len(self.states)
        if not wait_for(lambda: len(self.states) >= first + ticks, timeout):
            return False
        bases = [s["base"] for s in self.states[first - 1 : first + ticks]]
        return all(math.dist(bases[0][:2], b[:2]) < 1e-3 for b in bases)

    def result(self, goal_handle: Any, timeout: float = 90.0) -> Any:
        response = wait_future(goal_handle.get_result_async(), timeout)
        assert response is not None, "no result"
        return response.result


def test_opens_a_drawer_and_a_hinged_door(start_node: Any, ros_node: Node) -> None:
    start_robot(start_node, [
        {"id": "drawer_0", "opening": "drawer", "handle": [1.2, 0.0, 0.7], "yaw": math.pi},
        {"id": "door_0", "opening": "hinge", "handle": [0.0, 1.2, 0.9], "yaw": -math.pi / 2, "hinge_side": 1,
         "hinge_radius": 0.45},
    ])  # fmt: skip
    robot = Robot(ros_node)
    look = ActionClient(ros_node, LookAt, "look_at")
    assert look.wait_for_server(timeout_sec=30.0)
    goal = LookAt.Goal()
    goal.target.header.frame_id = "map"
    goal.target.point.x, goal.target.point.y, goal.target.point.z = 1.0, 1.0, 0.0
    sent = look.send_goal_with_resend(goal, timeout_s=10.0)
    looked = robot.result(sent, timeout=30.0)
    assert looked.error_code == LookAt.Result.SUCCESS, looked.error_msg
    assert looked.pan == pytest.approx(math.pi / 4, abs=1e-3) and looked.tilt == pytest.approx(
        -0.6155, abs=1e-3
    )

    def head_at_goal() -> bool:  # joint states stream in behind the action's result (late under load)
        joints = robot.state["joints"]
        return (
            abs(joints["head_pan_joint"] - math.pi / 4) < 0.05
            and abs(joints["head_tilt_joint"] + 0.6155) < 0.05
        )

    assert wait_for(head_at_goal, 10.0), robot.state["joints"]

    first = len(robot.states)
    result = robot.result(robot.open("drawer", (1.2, 0.0, 0.7), math.pi))
    ok = result.error_code == OpenContainer.Result.SUCCESS
    assert ok, f"{result.error_msg}; {robot.stream_since(first)}"
    assert abs(result.opened - 0.30) < 0.03

    def open_and_released() -> bool:  # the state stream, like the head's, may lag the result
        state = robot.state
        return (
            abs(state["opened"]["drawer_0"] - 0.30) < 0.03
            and state["held"] == ""
            and (state["joints"]["hand_motor_joint"] > 0.9)
        )

    assert wait_for(open_and_released, 10.0), robot.state
    assert robot.feedback[:2] == ["look", "pre_grasp"] and "pull" in robot.feedback

    first = len(robot.states)
    result = robot.result(robot.open("wardrobe", (0.0, 1.2, 0.9), -math.pi / 2))  # 75 degrees, hinge left
    ok = result.error_code == OpenContainer.Result.SUCCESS
    assert ok, f"{result.error_msg}; {robot.stream_since(first)}"
    assert abs(result.opened - math.radians(75)) < 0.05  # the driver's angle, about the hinge it assumes
    # The double's door: its hinge 0.45 m from the handle, where the wardrobe's motion assumes 0.50
    # (config/hsr_open_motions.yaml), so the hand's end of the arc is 80.7 degrees about it.
    handle, yaw = (0.0, 1.2, 0.9), -math.pi / 2
    hand, _ = pull_hand_target(handle, yaw, robot_motion("wardrobe"), 1.0)
    hx, hy = hinge_position(handle, yaw, OpeningMotion(opening="hinge", hinge_radius_m=0.45, hinge_side=1))
    swung = math.atan2(hand[1] - hy, hand[0] - hx) - math.atan2(handle[1] - hy, handle[0] - hx)
    assert abs(robot.state["opened"]["door_0"] - abs(math.remainder(swung, math.tau))) < 0.05
    assert robot.state["opened"]["drawer_0"] > 0.25  # untouched


def test_a_paused_simulator_pauses_the_drivers_clock(start_node: Any, ros_node: Node) -> None:
    """The fake stopped (SIGSTOP) mid-pull for longer than the pull's time limit: on the fake's
    clock the pull waits for it and the drawer opens; on the wall clock it would time out.
    The limit, 8 s, leaves a margin over the pull itself: 4.7 s of simulated time for this
    0.3 m drawer in the core's simulation (a 5 s limit failed in CI with the drawer 0.29 m
    out, the base 0.01 m from its last waypoint)."""
    fake = start_robot(
        start_node, [{"id": "drawer_0", "opening": "drawer", "handle": [0.9, 0.0, 0.7], "yaw": math.pi}],
        "-p", "pull_timeout_s:=8.0",
    )  # fmt: skip
    robot = Robot(ros_node)
    goal = robot.open("drawer", (0.9, 0.0, 0.7), math.pi)
    assert wait_for(lambda: "pull" in robot.feedback, timeout=60.0), f"feedback so far: {robot.feedback}"
    os.kill(fake.process.pid, signal.SIGSTOP)
    try:
        time.sleep(9.0)  # the pause (wall clock), longer than pull_timeout_s
    finally:
        os.kill(fake.process.pid, signal.SIGCONT)
    result = robot.result(goal)
    assert result.error_code == OpenContainer.Result.SUCCESS, result.error_msg
    assert abs(result.opened - 0.30) < 0.03


def test_cancel_estop_timeout_missed_grasp_and_dead_man(start_node: Any, ros_node: Node) -> None:
    start_robot(start_node, [
        {"id": "drawer_a", "opening": "drawer", "handle": [0.9, 0.0, 0.7], "yaw": math.pi},
        {"id": "locked", "opening": "drawer", "handle": [-0.9, 0.0, 0.7], "yaw": 0.0, "locked": True},
        {"id": "drawer_b", "opening": "drawer", "handle": [0.0, 0.9, 0.7], "yaw": -math.pi / 2},
    ], "-p", "pull_timeout_s:=3.0")  # fmt: skip
    robot = Robot(ros_node)

    goal = robot.open("drawer", (0.9, 0.0, 0.7), math.pi)  # cancel while pulling
    assert wait_for(lambda: "pull" in robot.feedback, timeout=60.0), f"feedback so far: {robot.feedback}"
    wait_future(goal.cancel_goal_async(), 5.0)
    result = robot.result(goal)
    assert result.error_code == OpenContainer.Result.CANCELED and result.failed_step == "pull"
    assert 0.0 < robot.state["opened"]["drawer_a"] < 0.3
    assert wait_for(lambda: robot.state["held"] == "", timeout=5.0)  # cancel releases the handle
    assert wait_for(robot.still, 5.0)  # and the base stands still

    result = robot.result(robot.open("drawer", (-0.9, 0.0, 0.7), 0.0))  # locked: the pull times out
    assert result.error_code == OpenContainer.Result.TIMEOUT and result.failed_step == "pull", (
        result.error_msg
    )
    assert robot.state["opened"]["locked"] == 0.0

    result = robot.result(robot.open("drawer", (0.0, 1.0, 0.7), -math.pi / 2))  # 10 cm off the real handle
    assert result.error_code == OpenContainer.Result.GRASP_FAILED and result.failed_step == "grasp"

    goal = robot.open("drawer", (0.0, 0.9, 0.7), -math.pi / 2)  # emergency stop while driving
    assert wait_for(lambda: "approach" in robot.feedback or "pre_grasp" in robot.feedback, timeout=30.0)
    time.sleep(0.5)
    robot.estop.publish(Bool(data=True))
    result = robot.result(goal, timeout=10.0)
    assert result.error_code == OpenContainer.Result.EMERGENCY_STOP
    assert not robot.client.send_goal_with_resend(
        OpenContainer.Goal(category="drawer"), timeout_s=5.0
    ).accepted

    # the stop reaches the double a tick after the result: measure from rest
    assert wait_for(robot.still, 10.0), "the emergency stop did not stop the base"
    pose = robot.state["base"]
    forward = Twist()
    forward.linear.x = 0.1
    for _ in range(10):  # cmd_vel is blocked while the e-stop holds
        robot.cmd_vel.publish(forward)
        time.sleep(0.05)
    assert robot.still(ticks=25)  # half a second of the fake's ticks after the last command
    assert math.dist(pose[:2], robot.state["base"][:2]) < 1e-3

    robot.estop.publish(Bool(data=False))
    time.sleep(0.3)
    forward.linear.x = 5.0  # clamped to max_linear_mps (0.4)
    start = robot.state["base"]

    def moved() -> float:
        robot.cmd_vel.publish(forward)
        return math.dist(start[:2], robot.state["base"][:2])

    assert wait_for(lambda: moved() > 0.02, 10.0, period=0.05)  # forwarding resumes after the release
    # The clamp, as a speed bound over a second of driving. Each tick of the double integrates its
    # nominal period (0.02 s), and rcl's timer keeps its phase after a late tick, so a late tick and
    # the next on-time one can put 0.016 m into a few ms: over the 50 ms of the first poll above that
    # read as 0.62 m/s. Over a second that error is under 0.02 m/s; a loaded machine only slows it.
    began, before = time.monotonic(), moved()
    while time.monotonic() - began < 1.0:
        moved()
        time.sleep(0.05)
    assert (moved() - before) / (time.monotonic() - began) < 0.4 * 1.25

    # no more commands: the dead-man stops the base (within cmd_vel_timeout_s of the last command
    # the driver processed; on a loaded machine that can be later than the test sent it)
    assert wait_for(robot.still, 10.0), "the dead-man never stopped the base"


def test_a_joint_command_waits_for_its_controller_to_be_matched(ros_node: Node) -> None:
    """A trajectory published before DDS has matched the controller's subscription is lost (the
    skill then waits for the joints to its time limit: pre_grasp under load); the driver waits
    for the match (``controller_wait_s``), so a controller that appears half a second after the
    command still gets it."""
    context = rclpy.Context()
    rclpy.init(context=context)
    driver = HsrDriver(context=context)
    try:
        sent = threading.Thread(
            target=driver.command_joints, args=(ARM_JOINTS, (0.3, -1.57, 0.0, 0.0, 0.0), 2.0)
        )
        sent.start()
        time.sleep(0.5)
        received: list[JointTrajectory] = []
        ros_node.create_subscription(JointTrajectory, "arm_trajectory", received.append, 10)
        assert wait_for(lambda: bool(received), timeout=10.0), "the command was lost"
        sent.join(timeout=10.0)
        assert not sent.is_alive()
        assert list(received[0].joint_names) == list(ARM_JOINTS)
        assert list(received[0].points[0].positions) == [0.3, -1.57, 0.0, 0.0, 0.0]
    finally:
        driver.destroy_node()
        rclpy.shutdown(context=context)


def test_a_base_command_computed_before_the_emergency_stop_is_sent_as_a_stop(ros_node: Node) -> None:
    """A skill computes its twist, the emergency stop arrives, the skill sends the twist: the
    base gets a stop, not the twist (the skill only sees the stop at its next check)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    driver = HsrDriver(context=context)
    try:
        received: list[Twist] = []
        ros_node.create_subscription(Twist, "base_cmd_vel", received.append, 10)
        assert wait_for(lambda: driver._base.get_subscription_count() > 0, timeout=10.0)
        driver.command_base(0.2, 0.1, 0.5)
        assert wait_for(lambda: len(received) == 1, timeout=10.0)
        driver._on_estop(Bool(data=True))  # publishes a stop itself
        assert wait_for(lambda: len(received) == 2, timeout=10.0)  # cmd_vel keeps only the newest
        driver.command_base(0.2, 0.1, 0.5)
        assert wait_for(lambda: len(received) == 3, timeout=10.0)
        assert [(t.linear.x, t.linear.y, t.angular.z) for t in received] == [
            (0.2, 0.1, 0.5), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        ]  # fmt: skip
    finally:
        driver.destroy_node()
        rclpy.shutdown(context=context)
