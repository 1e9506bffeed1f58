"""A look waits for perception over DDS: it counts only frames captured after the camera moved,
and waits until what the last of them reported is in the scene graph."""

from __future__ import annotations

import threading

import pytest
from conftest import wait_for
from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray
from std_msgs.msg import Header

from sg_search.ros.conversions import instances_to_msg
from sg_search.ros.perceived_frames import PerceivedFrames
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros

MOVED_S = 100.0  # the camera's move ended at this stamp [s]


def _frame(index: int, stamp_s: float, reported: bool) -> ObjectObservationArray:
    header = Header(frame_id="map")
    header.stamp.sec, header.stamp.nanosec = int(stamp_s), int((stamp_s % 1) * 1e9)
    mug = ObjectInstance("obj_1", "mug", 0.9, (1.0, 2.0, 0.8))
    return instances_to_msg([mug] if reported else [], header, index)


def test_only_frames_taken_after_the_move_count_and_the_graph_must_hold_the_last_report(
    ros_node: Node,
) -> None:
    frames = PerceivedFrames(ros_node)
    publisher = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    assert wait_for(lambda: publisher.get_subscription_count() > 0)
    for index, stamp in enumerate((98.0, 99.5, 100.0), start=1):  # before or at the move
        publisher.publish(_frame(index, stamp, True))
    assert wait_for(lambda: len(frames.after(0.0)) == 3)
    in_graph: set[int] = set()
    assert not frames.wait_after(MOVED_S, 2, 0.3, in_graph.__contains__)

    publisher.publish(_frame(4, 100.1, True))
    publisher.publish(_frame(5, 100.2, False))  # processed, nothing new
    assert wait_for(lambda: len(frames.after(MOVED_S)) == 2)
    assert not frames.wait_after(MOVED_S, 2, 0.3, in_graph.__contains__), "frame 4 is not in the graph yet"

    done: list[bool] = []
    waiting = threading.Thread(
        target=lambda: done.append(frames.wait_after(MOVED_S, 2, 20.0, in_graph.__contains__))
    )
    waiting.start()
    in_graph.add(4)  # the scene graph server integrated frame 4
    waiting.join(timeout=20.0)
    assert done == [True]
    assert [f.index for f in frames.after(MOVED_S)] == [4, 5]


def test_a_wait_stops_when_asked(ros_node: Node) -> None:
    frames = PerceivedFrames(ros_node)
    done: list[bool] = []
    waiting = threading.Thread(
        target=lambda: done.append(frames.wait_after(MOVED_S, 3, 600.0, bool, lambda: True))
    )
    waiting.start()
    waiting.join(timeout=20.0)
    assert done == [False], "the wait did not stop"


def test_a_frame_that_only_merged_ids_away_needs_no_graph_entry(ros_node: Node) -> None:
    frames = PerceivedFrames(ros_node)
    publisher = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    assert wait_for(lambda: publisher.get_subscription_count() > 0)
    merged = _frame(7, 100.5, False)
    merged.removed_instance_ids = ["obj_3"]  # no node lists frame 7: nothing there to wait for
    publisher.publish(merged)
    assert wait_for(lambda: len(frames.after(MOVED_S)) == 1)
    assert frames.wait_after(MOVED_S, 1, 0.3, lambda index: False)
