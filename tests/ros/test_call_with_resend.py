"""A service call that may be repeated without harm survives a response the server could not
send (Fast DDS drops it when the client's response reader has not matched yet): the request is
sent again, and the caller learns what was done instead of waiting out its timeout. The server
is a real rclpy service over DDS in the test's node; only the dropped response is a test
double of the network."""

from __future__ import annotations

from typing import Any

import pytest
from rclpy.node import Node
from sg_search_interfaces.srv import SetNodeState

from sg_search.ros.futures import call_with_resend, wait_future

pytestmark = pytest.mark.ros


def _service_dropping_responses(node: Node, name: str, drop: int) -> list[str]:
    """A SetNodeState service whose first ``drop`` responses never leave it; returns the node
    ids it was asked to set, in order."""
    handled: list[str] = []

    def handle(request: Any, response: Any) -> Any:
        handled.append(request.node_id)
        response.success, response.message = True, f"{request.node_id} set"
        return response

    service = node.create_service(SetNodeState, name, handle)
    send = service.send_response
    dropped = 0

    def send_response(response: Any, header: Any) -> None:
        nonlocal dropped
        if dropped < drop:
            dropped += 1
            return
        send(response, header)

    service.send_response = send_response  # type: ignore[method-assign]
    return handled


@pytest.mark.parametrize("resend", [False, True])
def test_a_lost_response_is_asked_for_again(ros_node: Node, resend: bool) -> None:
    name = f"drops_first_response_{resend}"  # the node outlives the test: one service per case
    handled = _service_dropping_responses(ros_node, name, drop=1)
    client = ros_node.create_client(SetNodeState, name)
    assert client.wait_for_service(timeout_sec=20.0)
    request = SetNodeState.Request(node_id="drawer_3", state=2)

    if resend:
        response = call_with_resend(client, request, timeout_s=20.0, resend_s=0.5)
        assert response is not None and response.message == "drawer_3 set"
        assert not client._pending_requests, "the first request is still pending after the call returned"
    else:  # the same loss, waited for once: no answer, though the request was carried out
        assert wait_future(client.call_async(request), 3.0) is None
    assert handled[0] == "drawer_3"


def test_a_service_that_never_answers_gives_none_within_the_timeout(ros_node: Node) -> None:
    handled = _service_dropping_responses(ros_node, "never_answers", drop=1_000)
    client = ros_node.create_client(SetNodeState, "never_answers")
    assert client.wait_for_service(timeout_sec=20.0)

    response = call_with_resend(client, SetNodeState.Request(node_id="drawer_3", state=2), 2.0, 0.5)

    assert response is None
    assert len(handled) >= 2  # sent again while waiting
    assert not client._pending_requests, "the unanswered requests were left pending"
