"""Node deaths mid-search, each in its own process over DDS: the base stops within 2 s, the
client hears about it naming the node, and a restart lets the next search succeed.
Liveliness comes from DDS (``sg_search.ros.liveliness``), not from pings."""

from __future__ import annotations

import itertools
import math
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sg_search_interfaces.srv import GetSceneGraph
from std_srvs.srv import Trigger
from test_search_robustness import SIM, STARTUP_S, _start_stack, stack_args, wait_for_search
from test_stack_over_dds import call

from sg_search.ros.liveliness import AliveWatch
from sg_search.ros.processes import REAP_S, NodeProcess
from sg_search.ros.search_client import SearchClient, TaskResult
from sg_search.scene_graph.serialization import load_snapshot
from sg_search.search import SearchError

pytestmark = [pytest.mark.ros, pytest.mark.xdist_group("robot")]  # see pyproject.toml
STOP_S = 2.0  # the base is at rest this soon after a node dies
# what stops the base after a sensing node dies, and the base itself
CHAIN = ("reasoner", "affordance_executor", "frontier_planner", "sim_bridge")


def _odometry(ros_node: Node) -> list[Odometry]:
    """Every odometry message from now on (the newest last)."""
    odom: list[Odometry] = []
    ros_node.create_subscription(
        Odometry, "odom", odom.append, QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT)
    )
    return odom


def _moving(odom: list[Odometry]) -> bool:
    twist = odom[-1].twist.twist if odom else None
    return twist is not None and math.hypot(twist.linear.x, twist.angular.z) > 1e-6


def _navigating(search: SearchClient, odom: list[Odometry]) -> bool:
    """The search acts (to a frontier, a viewpoint or a container) and the base moves."""
    return any(f.phase in ("navigate", "inspect", "open") for f in search.feedback) and _moving(odom)


def test_a_dead_executor_or_reasoner_stops_the_base_and_is_named(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    procs = _start_stack(start_node, tmp_path / "graph.json")
    odom = _odometry(ros_node)
    search = SearchClient(ros_node)
    executor = AliveWatch(ros_node, "affordance_executor")
    wait_for_search(ros_node, search)
    call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request(), timeout=STARTUP_S)

    # 1. the affordance executor dies while the planner drives for it
    assert search.start("find the unicorn", timeout_s=300.0)
    assert wait_for(lambda: _navigating(search, odom), 120.0), "the robot never drove"
    procs["affordance_executor"].process.send_signal(signal.SIGKILL)
    assert wait_for(lambda: not _moving(odom), STOP_S + 0.5), "the base kept driving for a dead executor"
    assert search.wait(30.0), "the search did not end after the executor died"
    result = search.result()
    assert result is not None and result.error_code == SearchError.EXECUTION_FAILED, result
    assert "affordance executor" in result.error_msg, result.error_msg

    # 2. the reasoner dies while its executor drives: the client hears it, the base stops
    start_node("affordance_executor", *SIM, "-p", "server_wait_s:=5.0")
    assert wait_for(lambda: executor.alive, STARTUP_S), "the restarted executor never came up"
    search.feedback.clear()
    assert search.start("find the unicorn", timeout_s=300.0)
    assert wait_for(lambda: _navigating(search, odom), 120.0), "the robot never drove"
    procs["reasoner"].process.send_signal(signal.SIGKILL)
    assert wait_for(lambda: not _moving(odom), STOP_S + 0.5), "the base kept driving for a dead reasoner"
    assert wait_for(lambda: search.server_lost, 5.0), "the client did not notice the reasoner's death"

    # 3. after a restart the next search succeeds
    start_node("reasoner", *SIM, "-p", "verify:=false", "-p", "executor_wait_s:=5.0")
    reset = call(ros_node, Trigger, "reset_episode", Trigger.Request())
    assert reset.success, reset.message
    fresh = SearchClient(ros_node)
    wait_for_search(ros_node, fresh)  # the restarted reasoner, not the killed one DDS still lists
    assert fresh.start("find the bed", timeout_s=400.0)
    assert fresh.wait(500.0), "the search after the restarts did not end"
    assert fresh.status() == TaskResult.SUCCEEDED, fresh.result()


def test_a_dead_sensing_node_ends_the_search_naming_it_and_a_restart_recovers(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    """perception, scene_graph_server and sim_bridge die in turn mid-navigation: the base is
    stopped (no motion; the planner's last command is zero), the search ends within 30 s naming
    the node, the graph survives the server's restart, and the next search succeeds."""
    snapshot = tmp_path / "graph.json"
    procs = _start_stack(start_node, snapshot)
    odom: list[Odometry] = []
    commands: list[Twist] = []
    # (monotonic s, speed) of each message; the simulator's clock tells a stalled simulator
    # from odometry that does not arrive
    arrivals: dict[str, list[tuple[float, float]]] = {"odom": [], "cmd_vel": [], "/clock": []}

    def heard(messages: list[Any], topic: str, speed: Callable[[Any], float]) -> Callable[[Any], None]:
        def on_message(msg: Any) -> None:
            messages.append(msg)
            arrivals[topic].append((time.monotonic(), speed(msg)))

        return on_message

    ros_node.create_subscription(
        Odometry,
        "odom",
        heard(odom, "odom", lambda m: math.hypot(m.twist.twist.linear.x, m.twist.twist.angular.z)),
        QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT),
    )
    ros_node.create_subscription(
        Twist, "cmd_vel", heard(commands, "cmd_vel", lambda m: math.hypot(m.linear.x, m.angular.z)), 10
    )
    ros_node.create_subscription(Clock, "/clock", heard([], "/clock", lambda _: 0.0), 10)
    search = SearchClient(ros_node)
    wait_for_search(ros_node, search)

    def nodes_in_graph() -> int:
        reply = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request(), timeout=STARTUP_S)
        return len(reply.update.nodes)

    nodes_in_graph()
    lost_at: dict[str, float] = {}  # [s, monotonic] when this process's watch saw each loss

    def watch(name: str) -> AliveWatch:
        return AliveWatch(ros_node, name, on_lost=lambda: lost_at.setdefault(name, time.monotonic()))

    watches = {name: watch(name) for name in ("perception", "scene_graph_server", "sim_bridge")}
    endings: dict[str, float] = {}
    for name in ("perception", "scene_graph_server", "sim_bridge"):
        search.feedback.clear()
        assert search.start("find the unicorn", timeout_s=300.0)
        assert wait_for(lambda: _navigating(search, odom), 120.0), (
            f"the robot never drove ({name}): {search.result()}, {[f.phase for f in search.feedback]}"
        )
        procs[name].process.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        procs[name].process.wait(REAP_S)  # dead: no save can follow this read
        reaped = time.monotonic()
        saved = len(load_snapshot(snapshot).nodes()) if snapshot.exists() else 0  # at most 10 s old
        if name == "sim_bridge":  # the base itself is gone; its commander must stop too
            assert wait_for(lambda: _still(commands[-1]), STOP_S + 0.5), "the planner kept commanding"
        else:
            stopped = wait_for(lambda: not _moving(odom), STOP_S + 0.5)
            if not stopped:  # what the stop's chain and the simulator do, printed with the failure
                _dump_stacks([procs[n] for n in CHAIN])
            assert stopped, (
                f"the base kept driving ({name}): "
                f"{_timeline(arrivals, killed, reaped, lost_at.get(name), search)}"
            )
        print(f"after {name}'s death: {_timeline(arrivals, killed, reaped, lost_at.get(name), search)}")
        assert search.wait(30.0), f"the search did not end after {name} died"
        endings[name] = time.monotonic() - killed
        result = search.result()
        assert result is not None and result.error_code == SearchError.EXECUTION_FAILED, result
        assert f"{name} died" in result.error_msg, result.error_msg
        procs[name] = start_node(name, *stack_args(snapshot)[name])
        restarted = procs[name]
        assert wait_for(lambda: watches[name].alive, STARTUP_S), (  # noqa: B023
            f"the restarted {name} never came up (exit code {restarted.process.poll()}; "
            f"publishers of alive/{name} in the graph: {ros_node.count_publishers(f'alive/{name}')}): "
            f"{restarted.output_so_far()[-2000:]}"
        )
        if name == "scene_graph_server":  # restarted from its last snapshot
            # The count it restored, from its log: fusion may merge or drop nodes right after.
            restored = f"restored {saved} nodes"
            assert saved > 0 and wait_for(lambda: restored in procs[name].output_so_far(), 5.0), (  # noqa: B023
                procs[name].output_so_far()[-2000:]
            )
            assert nodes_in_graph() > 0

    reset = call(ros_node, Trigger, "reset_episode", Trigger.Request(), timeout=STARTUP_S)
    assert reset.success, reset.message
    search.feedback.clear()
    assert search.start("find the bed", timeout_s=400.0)
    assert search.wait(500.0), "the search after the restarts did not end"
    assert search.status() == TaskResult.SUCCEEDED, search.result()
    print("search ended after the death of " + ", ".join(f"{n}: {s:.1f} s" for n, s in endings.items()))


def _timeline(
    arrivals: dict[str, list[tuple[float, float]]],
    killed: float,
    reaped: float,
    lost_at: float | None,
    search: SearchClient,
) -> str:
    """What the base and its commander did after a node's death, in seconds after the kill (a
    loss the test's own watch saw early and the reasoner's log did not points into the reasoner)."""
    seen = f"{lost_at - killed:.2f} s" if lost_at is not None else "not yet"
    parts = [f"reaped at {reaped - killed:.2f} s", f"the test's watch saw the loss at {seen}"]
    for topic, heard in arrivals.items():
        times = [killed, *(t for t, _ in heard if t >= killed)]
        gap = max(b - a for a, b in itertools.pairwise([*times, time.monotonic()]))  # to now
        moving = [t - killed for t, v in heard if t >= killed and v > 1e-6]
        still = [t - killed for t, v in heard if t >= killed and v <= 1e-6]
        last_moving = f"{moving[-1]:.2f} s" if moving else "-"
        first_still = f"{still[0]:.2f} s" if still else "-"
        motion = f", moving last at {last_moving}, still at {first_still}" if topic != "/clock" else ""
        parts.append(f"{topic}: {len(times) - 1} heard (largest gap {gap:.2f} s){motion}")
    parts.append(f"search phases {[f.phase for f in search.feedback][-8:]}, result {search.result()}")
    return "; ".join(parts)


def _dump_stacks(procs: list[NodeProcess]) -> None:
    """Each node prints every thread's Python stack (SIGUSR1, ``sg_search.ros.runner``)."""
    for proc in procs:
        proc.process.send_signal(signal.SIGUSR1)
    for proc in procs:
        wait_for(lambda: "most recent call first" in proc.output_so_far(), 5.0)  # noqa: B023


def _still(command: Twist) -> bool:
    return math.hypot(command.linear.x, command.linear.y, command.angular.z) < 1e-6


def test_a_sensing_node_that_stalls_is_not_taken_for_dead(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    """perception stops (SIGSTOP) for longer than its liveliness lease, as a starved process
    can on a loaded machine, and resumes: the reasoner waits ``revive_wait_s`` for it, and the
    search goes on to the end of its budget instead of ending with "perception died"."""
    procs = _start_stack(start_node, tmp_path / "graph.json")
    odom = _odometry(ros_node)
    search = SearchClient(ros_node)
    perception = AliveWatch(ros_node, "perception")
    wait_for_search(ros_node, search)
    assert wait_for(lambda: perception.alive, STARTUP_S)
    assert search.start("find the unicorn", timeout_s=90.0)
    assert wait_for(lambda: _navigating(search, odom), 120.0), "the robot never drove"
    procs["perception"].process.send_signal(signal.SIGSTOP)
    try:
        assert wait_for(lambda: perception.lost, 10.0), "perception's liveliness never lapsed"
        time.sleep(1.0)  # the stall outlasts the lapse: the reasoner has seen it too
    finally:
        procs["perception"].process.send_signal(signal.SIGCONT)
    assert wait_for(lambda: perception.alive, 10.0), "perception did not come back"
    assert search.wait(120.0), "the search did not end"
    result = search.result()
    recoveries = [f"{f.target_node_id}: {f.explanation}" for f in search.feedback if f.phase == "recover"]
    planner_log = procs["frontier_planner"].output_so_far()[-4000:]
    assert result is not None and result.error_code == SearchError.TIMEOUT, (result, recoveries, planner_log)
