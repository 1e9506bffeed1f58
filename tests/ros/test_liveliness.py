"""A watch on a node's liveliness tells its owner of the loss as it happens (``on_lost``), so
that a node driving the base for it stops at once instead of at its next look; a node that
does not react can be asked what it is doing."""

from __future__ import annotations

import signal
from typing import Any

import pytest
import rclpy
from conftest import wait_for
from rclpy.node import Node

from sg_search.ros.liveliness import AliveWatch, announce_alive

pytestmark = pytest.mark.ros


def test_the_loss_of_a_watched_node_is_told_once_per_loss(ros_node: Node) -> None:
    losses: list[bool] = []
    watch = AliveWatch(ros_node, "watched_double", on_lost=lambda: losses.append(True))
    context = rclpy.Context()  # a participant of its own, as another process's node has
    rclpy.init(context=context)
    watched = Node("watched_double", context=context)  # its publisher is all that counts
    try:
        publisher = announce_alive(watched)
        assert wait_for(lambda: watch.alive, 10.0) and losses == []
        watched.destroy_publisher(publisher)
        assert wait_for(lambda: watch.lost, 10.0)
        assert wait_for(lambda: losses == [True], 5.0)
        publisher = announce_alive(watched)  # restarted, then lost again
        assert wait_for(lambda: watch.alive, 10.0)
        watched.destroy_publisher(publisher)
        assert wait_for(lambda: len(losses) == 2, 10.0)
        assert watch.losses == 2  # what a goal compares with the count at its start
    finally:
        watched.destroy_node()
        rclpy.shutdown(context=context)


def test_a_node_prints_its_threads_stacks_on_sigusr1_and_runs_on(start_node: Any, ros_node: Node) -> None:
    """What a node that does not react is doing, without stopping it: SIGUSR1's default action
    would end the process."""
    planner = start_node("frontier_planner")
    watch = AliveWatch(ros_node, "frontier_planner")
    assert wait_for(lambda: watch.alive, 60.0), planner.output_so_far()
    planner.process.send_signal(signal.SIGUSR1)
    printed = planner.output_so_far
    assert wait_for(lambda: "most recent call first" in printed(), 10.0), printed()
    assert "frontier_planner" in printed()  # the node's own frames are among them
    assert planner.process.poll() is None and watch.alive
