"""Our ActionClient can be waited on from the moment its node lists it: an executor spinning
the node in another thread may build its wait set then (rclpy 9 dies there, ros2/rclpy#1589;
it ended the test node's spin thread in CI, and a goal's response never arrived)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rclpy.action import ActionClient as RclpyActionClient
from rclpy.node import Node
from sg_search_interfaces.action import NavigateTo

from sg_search.ros.action_client import ActionClient

pytestmark = pytest.mark.ros


@pytest.fixture
def unspun_node() -> Iterator[Node]:
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("action_client_probe", context=context)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=context)


def _query_when_added(node: Node, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make the node ask each waitable for its wait-set entities as it is added, as a spinning
    executor may; returns what the waitables answered (or the exception they raised)."""
    answers: list[Any] = []
    add = node.add_waitable

    def add_and_query(waitable: Any) -> None:
        add(waitable)
        try:
            answers.append(waitable.get_num_entities())
        except AttributeError as exc:
            answers.append(exc)

    monkeypatch.setattr(node, "add_waitable", add_and_query)
    return answers


def test_rclpy_9_action_client_cannot_be_waited_on_when_its_node_first_lists_it(
    unspun_node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The upstream gap our class closes; if this fails, rclpy fixed it and ours can go."""
    answers = _query_when_added(unspun_node, monkeypatch)
    RclpyActionClient(unspun_node, NavigateTo, "navigate")
    assert len(answers) == 1 and isinstance(answers[0], AttributeError)


def test_our_action_client_answers_from_the_start_and_keeps_one_lock(
    unspun_node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    answers = _query_when_added(unspun_node, monkeypatch)
    client = ActionClient(unspun_node, NavigateTo, "navigate")
    assert len(answers) == 1
    # the goal, cancel and result services' clients; the feedback and status subscriptions
    assert answers[0].num_clients == 3 and answers[0].num_subscriptions == 2
    early = client._lock
    client._lock = object()  # rclpy's own late assignment is ignored: an executor may hold this one
    assert client._lock is early
    assert not client.server_is_ready()
