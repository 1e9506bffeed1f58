"""Every service and action of the stack gets a malformed request over DDS (separate processes):
each is refused with a message naming what is wrong, or handled, and every node keeps serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import wait_for
from geometry_msgs.msg import Point
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance, LookAt, NavigateTo
from sg_search_interfaces.srv import (
    GetGeodesicDistances,
    GetSceneGraph,
    QuerySceneGraph,
    RunGraphCode,
    SelectTarget,
    SetContainer,
    SetNodeState,
)
from test_search_robustness import STARTUP_S, _start_stack
from test_stack_over_dds import call

from sg_search.ros.action_client import ActionClient
from sg_search.ros.futures import wait_future

pytestmark = [pytest.mark.ros, pytest.mark.xdist_group("robot")]  # see pyproject.toml
NAN, INF = float("nan"), float("inf")
LONG = "x" * 10_000
CONTROL = "mug\x00\x1b[2J\u202e"


def _goal(node: Node, action: Any, name: str, goal: Any) -> Any:
    """Send ``goal``; the result (accepted and ended) or the string "rejected"."""
    client = ActionClient(node, action, name)
    assert client.wait_for_server(timeout_sec=STARTUP_S), f"no {name} action server"
    handle = client.send_goal_with_resend(goal, timeout_s=20.0)
    assert handle is not None, f"{name}: no answer to the goal"
    if not handle.accepted:
        return "rejected"
    response = wait_future(handle.get_result_async(), 60.0)
    assert response is not None, f"{name}: the goal never ended"
    return response.result


def test_malformed_requests_are_refused_naming_the_field_and_every_node_keeps_serving(
    start_node: Any, ros_node: Node, tmp_path: Path
) -> None:
    procs = _start_stack(start_node, tmp_path / "graph.json")
    call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request(), timeout=STARTUP_S)

    def refused(srv: Any, name: str, naming: str, **fields: Any) -> None:
        reply = call(ros_node, srv, name, srv.Request(**fields), timeout=STARTUP_S)
        text = getattr(reply, "message", "") or getattr(reply, "error", "")
        assert not reply.success and naming in text, (name, fields, text)

    # scene_graph_server
    refused(SetNodeState, "scene_graph/set_state", "unknown node ''", node_id="", state=1)
    refused(SetNodeState, "scene_graph/set_state", "invalid state 200", node_id="root", state=200)
    refused(SetNodeState, "scene_graph/set_state", "unknown node", node_id=CONTROL, state=1)
    for text in (LONG, CONTROL, ""):
        reply = call(ros_node, QuerySceneGraph, "scene_graph/query", QuerySceneGraph.Request(text=text))
        assert reply.success or reply.message, text[:20]
    refused(RunGraphCode, "scene_graph/run_code", "time_limit_s", code="print(1)", time_limit_s=NAN)
    refused(RunGraphCode, "scene_graph/run_code", "time_limit_s", code="print(1)", time_limit_s=-1.0)
    ran = call(ros_node, RunGraphCode, "scene_graph/run_code", RunGraphCode.Request(code=LONG + CONTROL))
    assert not ran.success and "Error" in ran.error, ran  # (DDS strings end at a NUL byte)
    # frontier_planner
    points = [Point(x=NAN, y=0.0), Point(x=INF, y=-INF), Point(x=1e300, y=1e300)]
    reply = call(
        ros_node, GetGeodesicDistances, "geodesic_distances", GetGeodesicDistances.Request(points=points)
    )
    assert not reply.success or list(reply.distances) == [-1.0, -1.0, -1.0], list(reply.distances)
    nan_goal = NavigateTo.Goal()
    nan_goal.pose.header.frame_id = "map"
    nan_goal.pose.pose.position.x = NAN
    result = _goal(ros_node, NavigateTo, "navigate", nan_goal)
    assert result == "rejected" or (
        result.error_code == NavigateTo.Result.INVALID_GOAL and "position" in result.error_msg
    )
    bad_tolerance = NavigateTo.Goal(node_id="root", tolerance=NAN)
    result = _goal(ros_node, NavigateTo, "navigate", bad_tolerance)
    assert result == "rejected" or (
        result.error_code == NavigateTo.Result.INVALID_GOAL and "tolerance" in result.error_msg
    )
    # affordance_executor
    result = _goal(
        ros_node,
        ExecuteAffordance,
        "execute_affordance",
        ExecuteAffordance.Goal(node_id="root", affordance=99),
    )
    assert result == "rejected" or (result.error_code != 0 and "affordance" in result.error_msg), result
    result = _goal(
        ros_node,
        ExecuteAffordance,
        "execute_affordance",
        ExecuteAffordance.Goal(node_id=CONTROL, affordance=1),
    )
    assert result == "rejected" or result.error_code == ExecuteAffordance.Result.UNKNOWN_NODE, result
    timeout = ExecuteAffordance.Goal(node_id="root", affordance=1, timeout_s=NAN)
    result = _goal(ros_node, ExecuteAffordance, "execute_affordance", timeout)
    assert result == "rejected" or (result.error_code != 0 and "timeout_s" in result.error_msg), result
    # sim_bridge
    refused(SetContainer, "open", "", node_id="", point=Point(x=NAN, y=NAN, z=NAN))
    refused(SetContainer, "close", "", node_id=CONTROL)
    look = LookAt.Goal()
    look.target.point.x = NAN
    result = _goal(ros_node, LookAt, "look_at", look)
    assert result == "rejected" or result.error_code == LookAt.Result.INVALID_GOAL, result
    # reasoner
    for query in ("", LONG, "\x00\x01"):
        refused(SelectTarget, "select_target", "query", query=query)
    refused(SelectTarget, "select_target", "psychic", query="mug", reasoner="psychic")

    for name, proc in procs.items():
        assert proc.process.poll() is None, f"{name} died:\n{proc.output_so_far()[-3000:]}"
    assert wait_for(lambda: call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).success)
