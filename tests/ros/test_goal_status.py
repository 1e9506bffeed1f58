"""A crashed action server is a failure, not a success: rclpy aborts the goal of an execute
callback that raised with an empty result, whose ``error_code`` 0 reads as "no error". The
reasoner's world (reading the affordance executor) and the affordance executor (reading the
planner) check the goal's status first; a planner that found no way is told from one that
failed (the search does not count it as a fault). The servers are real action servers over
DDS in the test's node."""

from __future__ import annotations

import types
from typing import Any

import pytest
from rclpy.action import ActionServer
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance, NavigateTo, SearchObject
from test_stack_over_dds import SCENE, STARTUP_S

from sg_search.planning.navigator import NavError
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros.action_client import ActionClient
from sg_search.ros.futures import wait_future
from sg_search.ros.ros_world import RosWorld
from sg_search.search.config import ReasonerNodeConfig
from sg_search.search.executor import ExecutorError
from sg_search.search.outcome import SearchError

pytestmark = pytest.mark.ros


def _crash(handle: Any) -> Any:
    raise RuntimeError("a bug in the server")


def _no_way(handle: Any) -> Any:
    handle.abort()
    return NavigateTo.Result(
        error_code=NavigateTo.Result.NO_VALID_PATH, error_msg="no reachable viewpoint around kitchen_0"
    )


def test_the_reasoner_world_reads_a_crashed_executor_as_a_failure(ros_node: Node) -> None:
    ActionServer(ros_node, ExecuteAffordance, "crashing_executor", execute_callback=_crash)
    client = ActionClient(ros_node, ExecuteAffordance, "crashing_executor")
    assert client.wait_for_server(timeout_sec=20.0)
    # what execute() reads and writes of RosSensing
    sensing = types.SimpleNamespace(config=ReasonerNodeConfig(), dead=lambda: [], refused={})
    world = RosWorld(sensing, client, should_stop=lambda: False)  # type: ignore[arg-type]

    report = world.execute(Candidate("cabinet_0", SkillAffordance.OPEN))

    assert not report.success
    assert "affordance executor" in report.message and "ABORTED" in report.message, report.message


def test_the_executor_reads_a_crashed_planner_as_a_failed_navigation(start_node: Any, ros_node: Node) -> None:
    ActionServer(ros_node, NavigateTo, "crashing_planner", execute_callback=_crash)
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node(
        "affordance_executor", "-p", "navigate_action:=crashing_planner", "-p", "navigation_retries:=0"
    )
    result = execute_goal(ros_node, "kitchen_0", SkillAffordance.NAVIGATE, 60.0)

    assert result.error_code == ExecutorError.NAVIGATION_FAILED, result
    assert "frontier planner" in result.error_msg, result.error_msg


def test_the_executor_passes_on_a_planner_that_found_no_way(start_node: Any, ros_node: Node) -> None:
    ActionServer(ros_node, NavigateTo, "wayless_planner", execute_callback=_no_way)
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node("affordance_executor", "-p", "navigate_action:=wayless_planner", "-p", "navigation_retries:=0")
    result = execute_goal(ros_node, "kitchen_0", SkillAffordance.NAVIGATE, 60.0)

    assert result.error_code == ExecutorError.NO_PATH, result
    assert "no reachable viewpoint around kitchen_0" in result.error_msg, result.error_msg


def test_the_cores_result_codes_are_the_actions_constants() -> None:
    """A code crosses the nodes as its number: each core enumeration names every constant of
    its action's result with the same value."""
    pairs = ((ExecutorError, ExecuteAffordance), (NavError, NavigateTo), (SearchError, SearchObject))
    for codes, action in pairs:
        constants = {n: v for n, v in vars(action.Result).items() if n.isupper() and isinstance(v, int)}
        assert constants == {c.name: int(c) for c in codes}, action.__name__


def execute_goal(ros_node: Node, node_id: str, affordance: SkillAffordance, timeout_s: float) -> Any:
    """One goal to the running affordance executor; its result (the test fails without one)."""
    client = ActionClient(ros_node, ExecuteAffordance, "execute_affordance")
    assert client.wait_for_server(timeout_sec=STARTUP_S), "the affordance executor never came up"
    goal = ExecuteAffordance.Goal(node_id=node_id, affordance=int(affordance))
    handle = client.send_goal_with_resend(goal, timeout_s=20.0)
    assert handle is not None and handle.accepted
    response = wait_future(handle.get_result_async(), timeout_s)
    assert response is not None, f"no result within {timeout_s} s"
    return response.result
