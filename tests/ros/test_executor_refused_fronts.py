"""The affordance executor node over DDS: a container that would not open from the side the
base stands before (the open service answers WRONG_SIDE) has that side ruled out. The next
approach's ``NavigateTo`` goal carries it, and so does ``ExecuteAffordance``'s result, where
the reasoner node reads it for its container distances (tests/ros/test_ros_sensing_distances.py).
A drive into a room carries the room tolerance the in-process world drives with. The planner
and the simulator's open service are test doubles in the test's node; the scene graph server
and the executor are the real nodes."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import NavigateTo
from sg_search_interfaces.srv import SetContainer
from test_goal_status import execute_goal
from test_stack_over_dds import SCENE

from sg_search.geometry import Transform
from sg_search.reasoning.base import SkillAffordance
from sg_search.ros.tf import TfBroadcaster, transform_to_msg
from sg_search.search.executor import ExecutorError

pytestmark = pytest.mark.ros

# the apartment's fridge_0 stands at (0.4, 5.5) against the kitchen's x = 0 wall; the base
# stands 0.8 m beyond its +x face
BASE_XY = (1.2, 5.5)


def test_a_side_a_container_would_not_open_from_is_passed_on(start_node: Any, ros_node: Node) -> None:
    goals: list[list[float]] = []
    lock = threading.Lock()

    def navigate(handle: Any) -> Any:
        """Test double of the planner: records the goal's refused sides, arrives at once."""
        with lock:
            goals.append([float(v) for v in handle.request.refused_fronts])
        handle.succeed()
        return NavigateTo.Result(error_code=NavigateTo.Result.NONE)

    def refuse(request: Any, response: Any) -> Any:
        """Test double of the simulator's open service: not from this side."""
        response.success, response.error_code = False, SetContainer.Response.WRONG_SIDE
        response.message = f"{request.node_id} does not open towards the base"
        return response

    group = ReentrantCallbackGroup()
    ActionServer(ros_node, NavigateTo, "double_navigate", execute_callback=navigate, callback_group=group)
    ros_node.create_service(SetContainer, "double_open", refuse, callback_group=group)
    base = transform_to_msg("map", "base_link", 0.0, Transform([*BASE_XY, 0.0]))
    TfBroadcaster(ros_node).send_static([base])
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node(
        "affordance_executor", "-p", "navigate_action:=double_navigate", "-p", "open_service:=double_open"
    )

    result = execute_goal(ros_node, "fridge_0", SkillAffordance.OPEN, 60.0)

    assert result.error_code == ExecutorError.MANIPULATION_FAILED, result
    assert list(result.refused_fronts) == [1.0, 0.0]  # the +x side, where the base stands
    assert goals == [[], [1.0, 0.0]]  # the second approach (open_sides 2) leaves it out


def test_a_room_is_driven_into_to_within_the_room_tolerance(start_node: Any, ros_node: Node) -> None:
    """A NAVIGATE to a room (a sweep) is a pose goal at its centre with ``room_arrive_m`` as its
    tolerance, as the in-process world drives into a room."""
    goals: list[tuple[float, float, float]] = []

    def navigate(handle: Any) -> Any:
        """Test double of the planner: records the goal's position and tolerance, arrives at once."""
        request = handle.request
        goals.append((request.pose.pose.position.x, request.pose.pose.position.y, request.tolerance))
        handle.succeed()
        return NavigateTo.Result(error_code=NavigateTo.Result.NONE)

    ActionServer(ros_node, NavigateTo, "double_navigate", execute_callback=navigate)
    base = transform_to_msg("map", "base_link", 0.0, Transform([*BASE_XY, 0.0]))
    TfBroadcaster(ros_node).send_static([base])
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node("affordance_executor", "-p", "navigate_action:=double_navigate", "-p", "room_arrive_m:=0.8")

    result = execute_goal(ros_node, "living_room_0", SkillAffordance.NAVIGATE, 60.0)

    assert result.error_code == ExecutorError.NONE, result
    assert goals == [(5.5, 4.0, pytest.approx(0.8))]
