"""The reasoner node's world over DDS, against a test double of the affordance executor.

Verification faces the candidate before each observation, as the in-process world aims before
each frame: a base that rolled past its viewpoint after the approach would otherwise end an
accepted find with the object out of view (a demo run did). A base that still stands where the
approach left it is not sent again.

An ExecuteAffordance goal that is refused or never answered ends the step with a report naming
the affordance executor: a refusal is one failed step, silence is fatal (the executor is gone).
A killed executor whose last goal had just ended is met by the silence of the next goal, and
the search's error must still name it (a CI run read "executor refused")."""

from __future__ import annotations

import time

import numpy as np
import pytest
from rclpy.action import ActionServer, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance

from sg_search.geometry import Transform, frames
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.ros_world import RosSensing, RosWorld
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.scene_graph import Layer, SceneNode
from sg_search.search import ExecutionReport
from sg_search.search.config import ReasonerNodeConfig

pytestmark = pytest.mark.ros


def _executor_double(node: Node) -> None:
    """Test double of the affordance executor: every goal succeeds at once."""

    def execute(handle: ServerGoalHandle) -> ExecuteAffordance.Result:
        handle.succeed()
        return ExecuteAffordance.Result()

    ActionServer(
        node, ExecuteAffordance, "execute_affordance", execute_callback=execute,
        callback_group=ReentrantCallbackGroup(),
    )  # fmt: skip


def _sent(world: RosWorld) -> list[tuple[str, int]]:
    """What ``world`` asks the executor for, one entry per goal it sends. Counted at the world,
    not at the double: a goal whose first response came late is sent again under a new id and
    the later attempt cancelled (``send_goal_with_resend``), but a double that succeeds at once
    has run both by then (a make-test run counted a second approach so)."""
    sent: list[tuple[str, int]] = []
    send = world.execute

    def execute(candidate: Candidate) -> ExecutionReport:
        sent.append((candidate.node_id, int(candidate.affordance)))
        return send(candidate)

    world.execute = execute  # type: ignore[method-assign]
    return sent


def _world(node: Node) -> RosWorld:
    config = ReasonerNodeConfig(verify_observation_timeout_s=0.2, sensing_nodes=())
    client = ActionClient(node, ExecuteAffordance, "execute_affordance")
    assert client.wait_for_server(timeout_sec=20.0)
    return RosWorld(RosSensing(node, config, GraphMirror(node)), client, lambda: False)


TOMATO = SceneNode("obj_13", Layer.OBJECT, "object", "beefsteak tomato", position=(9.7, -2.3, 0.1))
NAVIGATE = ExecuteAffordance.Goal.NAVIGATE


def test_each_reobservation_faces_the_candidate_through_the_executor(ros_node: Node) -> None:
    _executor_double(ros_node)
    world = _world(ros_node)  # no TF: where the base stands is unknown, so it faces again
    goals = _sent(world)

    assert world.reobserve(TOMATO, after_frame=10) is None  # no perception runs: not seen again
    assert world.reobserve(TOMATO, after_frame=10) is None
    assert goals == [("obj_13", NAVIGATE)] * 2


def _place_base(broadcaster: TfBroadcaster, world: RosWorld, x: float) -> None:
    """The base at (x, 0) facing +x in the map, and wait until the world's TF knows it."""
    pose = Transform(np.array([x, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0]))
    broadcaster.send_static([transform_to_msg(frames.MAP, frames.BASE_LINK, 0.0, pose)])
    deadline = time.monotonic() + 10.0
    while (p := world.pose()) is None or abs(p[0] - x) > 1e-6:
        assert time.monotonic() < deadline, f"TF never placed the base at x = {x}"
        time.sleep(0.02)


def test_a_base_that_has_not_moved_since_the_approach_is_not_sent_again(ros_node: Node) -> None:
    _executor_double(ros_node)
    world = _world(ros_node)
    goals = _sent(world)
    broadcaster = TfBroadcaster(ros_node)
    _place_base(broadcaster, world, 1.0)

    world.approach(TOMATO)  # what verification does first
    assert world.reobserve(TOMATO, after_frame=10) is None
    assert goals == [("obj_13", NAVIGATE)]  # still where the approach left it: no second drive

    _place_base(broadcaster, world, 1.2)  # the base rolled on after arriving
    assert world.reobserve(TOMATO, after_frame=10) is None
    assert goals == [("obj_13", NAVIGATE)] * 2


FRONTIER = Candidate("frontier_9", SkillAffordance.NAVIGATE, 0.3)


def test_a_refused_goal_is_one_failed_step_naming_the_executor(ros_node: Node) -> None:
    ActionServer(
        ros_node, ExecuteAffordance, "execute_affordance",
        execute_callback=lambda handle: ExecuteAffordance.Result(),
        goal_callback=lambda goal: GoalResponse.REJECT,
    )  # fmt: skip
    report = _world(ros_node).execute(FRONTIER)
    assert not report.success and not report.fatal
    assert report.message == "the affordance executor refused frontier_9"


def test_a_goal_nobody_answers_is_fatal_and_names_the_executor(ros_node: Node) -> None:
    server = ActionServer(
        ros_node, ExecuteAffordance, "execute_affordance",
        execute_callback=lambda handle: ExecuteAffordance.Result(),
    )  # fmt: skip
    world = _world(ros_node)
    server.destroy()  # gone after the client saw it, as a SIGKILLed executor between goals
    report = world.execute(FRONTIER)
    assert not report.success and report.fatal
    assert report.message == "the affordance executor did not answer the goal for frontier_9"
