"""The base over ROS judges a blockage, and tells the navigator the time, in the clock the base
moves in: a simulator that stops (starved on a loaded machine) while the wall clock runs on is
not a bumper hit, nor a slow turn on the spot a drive without progress."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from conftest import wait_for
from geometry_msgs.msg import Twist
from rclpy.node import Node

from sg_search.geometry import Pose2D
from sg_search.geometry.transforms import Transform, TransformBuffer, quat_from_yaw
from sg_search.planning.follower import Command, FollowStatus
from sg_search.planning.navigator import turn_towards
from sg_search.planning.stall import StallDetector
from sg_search.ros.twist_base import TwistBase

pytestmark = pytest.mark.ros
PERIOD_S = 0.02
WINDOW_S = 0.2  # the stall window; the pushes below last 2.5 windows of wall time


def _base(ros_node: Node, blocked: list[Pose2D], clock: list[float] | None = None) -> TwistBase:
    """A base standing at (1, 2) in ``map``; its stall window on ``clock[0]`` [s] or the wall."""
    tf = TransformBuffer()
    tf.set_transform("map", "base_link", 0.0, Transform(np.array([1.0, 2.0, 0.0])), static=True)
    base_clock = time.monotonic if clock is None else lambda: clock[0]
    return TwistBase(
        tf, ros_node.create_publisher(Twist, "cmd_vel", 10), "map", "base_link", PERIOD_S,
        StallDetector(window_s=WINDOW_S), blocked.append, base_clock,
    )  # fmt: skip


def test_a_base_that_does_not_move_while_its_clock_stands_still_is_not_blocked(ros_node: Node) -> None:
    clock, blocked = [10.0], []
    base = _base(ros_node, blocked, clock)
    forward = Command(0.3, 0.0, FollowStatus.ACTIVE)
    pushes = int(2.5 * WINDOW_S / PERIOD_S)
    assert all(base.command(forward) for _ in range(pushes))  # the simulator stalled
    assert blocked == []
    clock[0] += 2 * WINDOW_S  # it runs again, and the base still does not move
    assert not base.command(forward)
    assert blocked == [(1.0, 2.0, 0.0)]


def test_on_the_wall_clock_the_same_stall_is_taken_for_a_blockage(ros_node: Node) -> None:
    """What the planner did before it passed its node's clock (sim time in the simulator)."""
    blocked: list[Pose2D] = []
    base = _base(ros_node, blocked)
    forward = Command(0.3, 0.0, FollowStatus.ACTIVE)
    said = [base.command(forward) for _ in range(int(2.5 * WINDOW_S / PERIOD_S))]
    assert not all(said) and blocked


def test_a_turn_that_a_slow_simulator_plays_ends_within_its_simulated_timeout(ros_node: Node) -> None:
    """The navigator's timeouts and the follower's progress window read ``now()``: on the wall
    clock a turn on the spot that a loaded simulator plays slowly ran out of time and ended drives
    as stuck ("no progress after 3 recoveries", in most demo runs of session 35)."""
    tf = TransformBuffer()
    sim = {"t": 0.0, "yaw": 0.0, "w": 0.0}  # simulated time [s], the base's yaw [rad], turn rate [rad/s]
    lock, done = threading.Lock(), threading.Event()

    def on_cmd_vel(msg: Twist) -> None:
        with lock:
            sim["w"] = msg.angular.z

    def publish_pose() -> None:
        with lock:
            pose = Transform(np.zeros(3), quat_from_yaw(sim["yaw"]))
        tf.set_transform("map", "base_link", 0.0, pose, static=True)

    def simulator() -> None:
        """Test double of a loaded simulator: it plays 4 ms of its time per 20 ms of the wall's."""
        while not done.is_set():
            time.sleep(0.02)
            with lock:
                sim["t"] += 0.004
                sim["yaw"] += sim["w"] * 0.004
            publish_pose()

    # the base's pose is known before the turn, as the executor waits for it (tf_wait_s): a turn
    # begun before the thread's first pose (a loaded machine starts threads late) ends at once
    publish_pose()

    ros_node.create_subscription(Twist, "cmd_vel", on_cmd_vel, 10)
    thread = threading.Thread(target=simulator, daemon=True)
    thread.start()
    try:
        base = TwistBase(tf, ros_node.create_publisher(Twist, "cmd_vel", 10), "map", "base_link", PERIOD_S,
                         clock=lambda: sim["t"])  # fmt: skip
        # 0.3 rad at 1 rad/s: 0.3 s of the simulator's time, about 1.5 s of the wall's
        assert turn_towards(base, 0.3, 0.02, 1.0, timeout_s=0.6)
    finally:
        done.set()
        thread.join()


def test_a_halt_stops_the_base_at_once_and_holds_it_until_a_resume(ros_node: Node) -> None:
    """A goal's cancel halts the base from another thread while the control loop runs on: the
    zero goes out at once and no command that moves follows it; the stall detector does not take
    the halted base for a blocked one; after a resume commands go out as given."""
    heard: list[float] = []
    ros_node.create_subscription(Twist, "cmd_vel_halt", lambda m: heard.append(m.linear.x), 1000)
    blocked: list[Pose2D] = []
    tf = TransformBuffer()
    tf.set_transform("map", "base_link", 0.0, Transform(np.array([1.0, 2.0, 0.0])), static=True)
    base = TwistBase(tf, ros_node.create_publisher(Twist, "cmd_vel_halt", 1000), "map", "base_link", PERIOD_S,
                     StallDetector(window_s=WINDOW_S), blocked.append)  # fmt: skip
    forward = Command(0.3, 0.0, FollowStatus.ACTIVE)
    stop = threading.Event()
    sent = [0]

    def control_loop() -> None:
        while not stop.is_set():
            base.command(forward)
            sent[0] += 1

    assert base.command(forward)  # before the loop: the first command moves
    loop = threading.Thread(target=control_loop, daemon=True)
    loop.start()
    try:
        assert wait_for(lambda: len(heard) >= 3, 10.0)
        base.halt()
        halted_at = sent[0]
        # the loop commands on for 2.5 stall windows, halted: all zero, no blockage
        assert wait_for(lambda: sent[0] >= halted_at + int(2.5 * WINDOW_S / PERIOD_S), 10.0)
    finally:
        stop.set()
        loop.join()
    assert wait_for(lambda: len(heard) >= sent[0] + 2, 10.0)  # every command and the halt's zero
    first_zero = heard.index(0.0)
    assert heard[:first_zero] == [0.3] * first_zero and first_zero >= 3
    assert set(heard[first_zero:]) == {0.0}, heard
    assert blocked == []
    base.resume()
    assert base.command(forward)
    assert wait_for(lambda: heard[-1] == 0.3, 10.0)
