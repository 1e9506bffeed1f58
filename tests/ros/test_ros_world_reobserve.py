"""Verification over DDS faces the candidate before each observation, as the in-process world
aims before each frame: a base that rolled past its viewpoint after the approach would
otherwise end an accepted find with the object out of view (a demo run did)."""

from __future__ import annotations

import threading

import pytest
from rclpy.action import ActionServer
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance

from sg_search.ros.action_client import ActionClient
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.ros_world import RosSensing, RosWorld
from sg_search.scene_graph import Layer, SceneNode
from sg_search.search.config import ReasonerNodeConfig

pytestmark = pytest.mark.ros


def test_each_reobservation_faces_the_candidate_through_the_executor(ros_node: Node) -> None:
    goals: list[tuple[str, int]] = []
    lock = threading.Lock()

    def execute(handle: ServerGoalHandle) -> ExecuteAffordance.Result:
        """Test double of the affordance executor: records the goal and succeeds."""
        with lock:
            goals.append((handle.request.node_id, handle.request.affordance))
        handle.succeed()
        return ExecuteAffordance.Result()

    ActionServer(
        ros_node, ExecuteAffordance, "execute_affordance", execute_callback=execute,
        callback_group=ReentrantCallbackGroup(),
    )  # fmt: skip
    config = ReasonerNodeConfig(verify_observation_timeout_s=0.2, sensing_nodes=())
    client = ActionClient(ros_node, ExecuteAffordance, "execute_affordance")
    assert client.wait_for_server(timeout_sec=20.0)
    world = RosWorld(RosSensing(ros_node, config, GraphMirror(ros_node)), client, lambda: False)
    tomato = SceneNode("obj_13", Layer.OBJECT, "object", "beefsteak tomato", position=(9.7, -2.3, 0.1))

    assert world.reobserve(tomato, after_frame=10) is None  # no perception runs: not seen again
    assert world.reobserve(tomato, after_frame=10) is None
    assert goals == [("obj_13", ExecuteAffordance.Goal.NAVIGATE)] * 2
