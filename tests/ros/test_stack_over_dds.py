"""scene_graph_server and reasoner in separate processes; this process talks to them over DDS:
a topic (observations in, graph updates out), services (get, query, select_target) and the
search action (feedback, result, rejection of a second goal, cancel)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import OBSERVE_ONLY, wait_for
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sg_search_interfaces.msg import ObjectObservationArray, SceneGraphUpdate
from sg_search_interfaces.srv import GetSceneGraph, QuerySceneGraph, SelectTarget
from std_msgs.msg import Header

from sg_search.config import package_share
from sg_search.ros.conversions import instances_to_msg
from sg_search.ros.futures import wait_future
from sg_search.ros.search_client import SearchClient, TaskResult
from sg_search.scene_graph.observations import ObjectInstance

pytestmark = pytest.mark.ros
# The reasoner node loads the SBERT knowledge model before it serves (~10 s, more on a busy CI machine).
STARTUP_S = 90.0
SCENE = package_share() / "config" / "demo" / "apartment.yaml"


def call(node: Node, srv_type: Any, name: str, request: Any, timeout: float = 20.0) -> Any:
    """Call a service, retrying: a request sent before discovery completes (or to a server
    that died while DDS still lists it) is lost, as in any ROS 2 client. Each retry waits twice
    as long as the one before: a server slower than a fixed wait under load would otherwise
    queue a retry per wait and answer each just after its caller gave up on it."""
    client = node.create_client(srv_type, name)
    deadline = time.monotonic() + timeout
    wait_s = 3.0
    while (left := deadline - time.monotonic()) > 0:
        if not client.wait_for_service(timeout_sec=1.0):
            continue
        pending = client.call_async(request)
        response = wait_future(pending, min(wait_s, left))
        if response is not None:
            return response
        client.remove_pending_request(pending)
        wait_s *= 2
    raise AssertionError(f"service {name} did not answer within {timeout} s")


def observe(
    node: Node, publisher: Any, frame: int, *instances: ObjectInstance, frame_id: str = "map"
) -> None:
    header = Header(stamp=node.get_clock().now().to_msg(), frame_id=frame_id)
    publisher.publish(instances_to_msg(list(instances), header, frame))


def graph_io(node: Node) -> tuple[list[SceneGraphUpdate], Any]:
    """The graph's updates as they arrive, and a publisher of perception's observations."""
    updates: list[SceneGraphUpdate] = []
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    node.create_subscription(SceneGraphUpdate, "scene_graph/updates", updates.append, qos)
    return updates, node.create_publisher(ObjectObservationArray, "observations", 10)


@pytest.fixture
def stack(start_node: Any) -> None:
    start_node("scene_graph_server", "-p", f"prior_scene_file:={SCENE}", "-p", "full_update_period_s:=1.0")
    start_node(
        "reasoner", "-p", "step_period_s:=0.05", "-p", "max_steps:=2000", *OBSERVE_ONLY
    )  # see conftest


def test_search_finds_object_reported_by_perception(stack: None, ros_node: Node) -> None:
    updates, observations = graph_io(ros_node)

    snapshot = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request(since_sequence=0))
    assert snapshot.success and snapshot.update.is_full
    assert {n.id for n in snapshot.update.nodes if n.kind == "room"} >= {"kitchen_0", "bedroom_0"}
    start_sequence = snapshot.update.sequence
    assert wait_for(lambda: observations.get_subscription_count() > 0)

    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)
    assert client.start("find the passport", timeout_s=60.0)
    assert wait_for(lambda: len(client.feedback) >= 3), "no feedback from the search"
    assert all(fb.phase == "reason" for fb in client.feedback[:3])
    assert {fb.target_node_id for fb in client.feedback[:3]} <= {
        "kitchen_0",
        "living_room_0",
        "bedroom_0",
        "fridge_0",
        "nightstand_0",
        "counter_0",
        "sofa_0",
        "bed_0",
    }

    second = SearchClient(ros_node)
    assert not second.start("find the mug"), "a second search must be rejected while one runs"

    observe(ros_node, observations, 1, ObjectInstance("obj_9", "passport", 0.81, (7.6, -1.5, 0.2)))
    assert client.wait(20.0), "search did not finish after the passport was observed"
    result = client.result()
    assert client.status() == TaskResult.SUCCEEDED, result
    assert (result.object_id, result.category, result.room_id) == ("obj_9", "passport", "bedroom_0")
    assert result.pose.header.frame_id == "map" and abs(result.pose.pose.position.x - 7.6) < 1e-6
    assert "inside nightstand_0" in result.explanation

    assert wait_for(lambda: any(not u.is_full and u.sequence > start_sequence for u in updates))
    incremental = next(u for u in updates if not u.is_full and u.sequence > start_sequence)
    assert incremental.base_sequence == start_sequence
    assert [n.id for n in incremental.nodes] == ["obj_9"]

    found = call(ros_node, QuerySceneGraph, "scene_graph/query", QuerySceneGraph.Request(text="Passports"))
    assert [n.id for n in found.nodes] == ["obj_9"]
    ranked = call(ros_node, SelectTarget, "select_target", SelectTarget.Request(query="mug"))
    assert ranked.success and ranked.ranked
    assert all(0.0 <= t.utility <= 1.0 for t in ranked.ranked)


def test_bad_input_is_refused_and_loses_nothing(stack: None, ros_node: Node) -> None:
    observations = ros_node.create_publisher(ObjectObservationArray, "observations", 10)
    before = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).update
    assert wait_for(lambda: observations.get_subscription_count() > 0)
    observe(ros_node, observations, 1, ObjectInstance("x", "mug", 7.0, (1.0, 1.0, 1.0)))
    observe(ros_node, observations, 2, ObjectInstance("y", "mug", 0.9, (1.0, 1.0, 1.0)), frame_id="odom")
    observe(ros_node, observations, 3, ObjectInstance("z", "mug", 0.9, (1.0, 1.0, 1.0)))

    def has_z() -> bool:
        nodes = call(
            ros_node, QuerySceneGraph, "scene_graph/query", QuerySceneGraph.Request(text="mug")
        ).nodes
        return [n.id for n in nodes] == ["z"]

    assert wait_for(has_z), "the valid frame after two bad ones must still be integrated"
    after = call(ros_node, GetSceneGraph, "scene_graph/get", GetSceneGraph.Request()).update
    assert len(after.nodes) == len(before.nodes) + 1

    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)
    assert client.start("mug", reasoner="oracle")
    assert client.wait(20.0)
    assert client.status() == TaskResult.FAILED and "unknown reasoner" in client.result().error_msg


def test_cancel_stops_a_running_search(stack: None, ros_node: Node) -> None:
    client = SearchClient(ros_node)
    assert client.wait_until_ready(STARTUP_S)
    assert client.start("find the unicorn", timeout_s=60.0)
    assert wait_for(lambda: len(client.feedback) >= 2)
    client.cancel()
    assert client.wait(10.0)
    assert client.status() == TaskResult.CANCELED, client.result()
    assert client.result().error_code == 5  # CANCELED
