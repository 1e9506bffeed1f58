"""Shutting a spinning executor down loses no handler to its destroyed guard condition: rclpy's
shutdown destroyed it while handlers were still queued in the thread pool, and each such handler
failed ("cannot use Destroyable because destruction was requested"), printed at exit as an
exception never retrieved (up to 20 lines after a demo run)."""

from __future__ import annotations

import time

import pytest
import rclpy
import rclpy.task
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node

from sg_search.ros.commands import spinning

pytestmark = pytest.mark.ros


def test_handlers_queued_at_shutdown_run_before_the_guard_condition_is_destroyed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failed: list[Exception] = []  # what the executor's handler tasks ended with
    set_exception = rclpy.task.Future.set_exception

    def record(future: rclpy.task.Future[object], exception: Exception) -> None:
        failed.append(exception)
        set_exception(future, exception)

    monkeypatch.setattr(rclpy.task.Future, "set_exception", record)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("busy", context=context)
    try:
        group = MutuallyExclusiveCallbackGroup()  # every timer but one finds its group busy
        for _ in range(200):
            node.create_timer(0.001, lambda: time.sleep(0.02), callback_group=group)
        for _ in range(4):  # on rclpy's order, 3 of 5 such runs lost handlers
            with spinning([node], threads=2):
                time.sleep(0.5)
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert failed == []


def test_a_node_is_destroyed_even_when_shutting_the_executor_down_is_interrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A node's destruction writes what it owes (the recorder's MCAP footer, the graph server's
    snapshot): an exception while the executor's pool drains (an interrupt, a failed shutdown)
    must not skip it."""
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor

    from sg_search.ros import runner

    destroyed: list[str] = []

    class Probe(Node):
        def __init__(self) -> None:
            super().__init__("probe")

        def destroy_node(self) -> None:
            destroyed.append(self.get_name())
            super().destroy_node()

    class EndsAtOnce(MultiThreadedExecutor):
        def spin(self) -> None:  # the context was shut down (SIGINT) while it spun
            raise ExternalShutdownException()

    def interrupted(executor: MultiThreadedExecutor) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "MultiThreadedExecutor", EndsAtOnce)
    monkeypatch.setattr(runner, "shut_down", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.spin_nodes([Probe], args=["probe"])
    assert destroyed == ["probe"]
    assert not rclpy.ok()
