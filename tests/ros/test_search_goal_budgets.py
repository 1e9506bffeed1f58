"""A search goal's budgets over DDS: a NaN timeout is refused naming the field; a timeout binds
while an execution is in flight (the executor's goal is cancelled and the search ends TIMEOUT
at once, not when the execution would have ended). The executor here is a test double that
never finishes a goal until it is cancelled (a navigation across a large house)."""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import pytest
from rclpy.action import ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance
from test_stack_over_dds import SCENE, STARTUP_S

from sg_search.ros.search_client import SearchClient
from sg_search.search import SearchError

pytestmark = pytest.mark.ros
# Its own action name: a test node's endpoints may outlive it in the DDS graph for a while, and
# a later test on this worker whose stack has no executor must not find this one.
EXECUTOR = "budget_test_executor"


def test_a_nan_timeout_is_refused_and_a_timeout_cancels_the_execution_in_flight(
    start_node: Any, ros_node: Node
) -> None:
    canceled = threading.Event()
    accepted = threading.Event()

    def never_done(handle: Any) -> ExecuteAffordance.Result:
        accepted.set()
        while not handle.is_cancel_requested:
            time.sleep(0.02)
        canceled.set()
        handle.canceled()
        return ExecuteAffordance.Result(error_code=ExecuteAffordance.Result.CANCELED, error_msg="canceled")

    ActionServer(
        ros_node, ExecuteAffordance, EXECUTOR, execute_callback=never_done,
        cancel_callback=lambda _: CancelResponse.ACCEPT, callback_group=ReentrantCallbackGroup(),
    )  # fmt: skip
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}")
    start_node(
        "reasoner", "-p", "verify:=false", "-p", "executor_wait_s:=5.0", "-p", f"executor_action:={EXECUTOR}"
    )
    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)

    assert client.start("find the mug", reasoner="nearest", timeout_s=math.nan)
    assert client.wait(30.0)
    result = client.result()
    assert result is not None and result.error_code == SearchError.INVALID_QUERY, result
    assert "timeout_s" in result.error_msg, result.error_msg

    assert client.start("find the mug", reasoner="nearest", timeout_s=3.0)
    assert accepted.wait(30.0), "the reasoner never asked the executor for anything"
    assert client.wait(15.0), "the search outlived its 3 s budget by more than 12 s"
    result = client.result()
    assert result is not None and result.error_code == SearchError.TIMEOUT, result
    assert canceled.is_set(), "the execution in flight was not cancelled"
