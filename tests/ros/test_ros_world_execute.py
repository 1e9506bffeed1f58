"""An ExecuteAffordance goal over DDS that is refused or never answered ends the step with a
report naming the affordance executor: a refusal is one failed step, silence is fatal (the
executor is gone). A killed executor whose last goal had just ended is met by the silence of
the next goal, and the search's error must still name it (a CI run read "executor refused")."""

from __future__ import annotations

import pytest
from rclpy.action import ActionServer, GoalResponse
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance

from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.ros_world import RosSensing, RosWorld
from sg_search.search.config import ReasonerNodeConfig

pytestmark = pytest.mark.ros

FRONTIER = Candidate("frontier_9", SkillAffordance.NAVIGATE, 0.3)


def _world(node: Node) -> RosWorld:
    config = ReasonerNodeConfig(executor_wait_s=0.5, sensing_nodes=())
    client = ActionClient(node, ExecuteAffordance, "execute_affordance")
    assert client.wait_for_server(timeout_sec=20.0)
    return RosWorld(RosSensing(node, config, GraphMirror(node)), client, lambda: False)


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
