"""The reasoner node's distances over DDS: a container is as far as where the base would stand
to open it, as the in-process world measures it (:func:`sg_search.scene_graph.fronts.standing_points`),
asked of the planner's ``geodesic_distances`` service in one request, less the sides the
affordance executor's result reports it would not open from; a frontier as far as the goal the
planner publishes for it (:func:`sg_search.scene_graph.fronts.measured_at`)."""

from __future__ import annotations

import threading
from typing import Any, cast

import pytest
from conftest import wait_for
from geometry_msgs.msg import Point
from rclpy.action import ActionServer
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sg_search_interfaces.action import ExecuteAffordance
from sg_search_interfaces.msg import Frontier, FrontierArray
from sg_search_interfaces.srv import GetGeodesicDistances

from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.ros import ros_world
from sg_search.ros.action_client import ActionClient
from sg_search.ros.graph_mirror import GraphMirror
from sg_search.ros.ros_world import RosSensing, RosWorld
from sg_search.scene_graph import Layer, SceneGraph, SceneNode
from sg_search.scene_graph.model import Affordance, Box3D
from sg_search.search.config import ReasonerNodeConfig

pytestmark = pytest.mark.ros

KITCHEN = SceneNode(
    "room_1", Layer.ROOM, "room", "kitchen", (3.0, 2.0, 0.0), Box3D((3.0, 2.0, 1.25), (6.0, 4.0, 2.5))
)
# against the y = 0 wall: it opens towards +y, its front point 0.7 m from its centre at (2, 1.05)
FRIDGE = SceneNode(
    "obj_1", Layer.OBJECT, "object", "fridge", (2.0, 0.35, 0.9), Box3D((2.0, 0.35, 0.9), (0.8, 0.6, 1.8)),
    room_id="room_1", affordances=Affordance.OPENABLE,
)  # fmt: skip
MUG = SceneNode("obj_2", Layer.OBJECT, "object", "mug", (4.0, 3.0, 0.9), room_id="room_1")
# a frontier node sits at its segment's centroid; the planner drives to its goal cell
FRONTIER = SceneNode("frontier_3", Layer.REGION, "frontier", "frontier", (5.0, 1.0, 0.0), room_id="room_1")


class FixedGraphMirror:
    """Test double of :class:`GraphMirror`: always the same graph (no scene-graph server)."""

    def __init__(self, graph: SceneGraph) -> None:
        self.graph = graph

    def copy(self, wait_s: float = 0.0) -> SceneGraph:
        return self.graph


def _planner_distances(node: Node) -> list[list[tuple[float, float]]]:
    """Test double of the planner (the test's node): its ``reach_radii`` parameter (the
    shipped values, served by rclpy's parameter services) and its ``geodesic_distances``,
    which records each request's points and answers x + 10 y, except -1 (unreachable) for a
    point behind the fridge (y < 0)."""
    node.declare_parameter("reach_radii", [0.6, 0.7, 0.8])
    requests: list[list[tuple[float, float]]] = []
    lock = threading.Lock()

    def serve(request: Any, response: Any) -> Any:
        points = [(p.x, p.y) for p in request.points]
        with lock:
            requests.append(points)
        response.distances = [-1.0 if y < 0 else x + 10.0 * y for x, y in points]
        response.success = True
        return response

    node.create_service(
        GetGeodesicDistances, "geodesic_distances", serve, callback_group=ReentrantCallbackGroup()
    )
    return requests


def _sensing(ros_node: Node, planner_node: str = "") -> RosSensing:
    graph = SceneGraph()
    for node in (KITCHEN, FRIDGE, MUG, FRONTIER):
        graph.upsert_node(node)
    config = ReasonerNodeConfig(sensing_nodes=(), planner_node=planner_node or ros_node.get_name())
    sensing = RosSensing(ros_node, config, cast(GraphMirror, FixedGraphMirror(graph)))
    assert sensing._distance_client.wait_for_service(timeout_sec=10.0)
    return sensing


def test_a_container_is_as_far_as_its_front_and_one_request_asks_for_every_point(ros_node: Node) -> None:
    requests = _planner_distances(ros_node)
    sensing = _sensing(ros_node)

    distances = sensing.distances()

    assert distances["obj_1"] == pytest.approx(2.0 + 10.0 * 1.05)  # the +y front, not the centre (5.5)
    assert distances["obj_2"] == pytest.approx(4.0 + 30.0)
    assert distances["room_1"] == pytest.approx(3.0 + 20.0)
    assert distances["frontier_3"] == pytest.approx(5.0 + 10.0)  # no frontiers heard yet: its centroid
    assert len(requests) == 1 and len(requests[0]) == 1 + 4 + 1 + 1  # room, the fridge's faces, mug, frontier
    assert _sensing(ros_node, planner_node="no_planner").distances() == {}  # no reach_radii: no distances


def test_a_planner_node_that_never_answers_is_named_in_a_warning(
    ros_node: Node, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _planner_distances(ros_node)
    sensing = _sensing(ros_node, planner_node="no_planner")

    assert sensing.distances() == {}
    assert "reach_radii" not in capfd.readouterr().err  # within the grace (start-up): no warning
    monkeypatch.setattr(ros_world, "PLANNER_ANSWER_GRACE_S", 0.0)  # as if it had passed
    assert sensing.distances() == {}
    assert "'no_planner' does not answer for its reach_radii" in capfd.readouterr().err


def test_a_planner_node_without_reach_radii_gives_no_distances_and_is_asked_once(ros_node: Node) -> None:
    _planner_distances(ros_node)
    other = Node("not_a_planner", context=ros_node.context)  # answers get_parameters, has no reach_radii
    executor = SingleThreadedExecutor(context=ros_node.context)
    executor.add_node(other)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        sensing = _sensing(ros_node, planner_node="not_a_planner")
        assert sensing._planner_parameters.wait_for_service(timeout_sec=10.0)
        assert sensing.distances() == {}
        assert sensing._reach_radii == ()  # its answer is kept: not asked again at every decision
        assert sensing.distances() == {}
    finally:
        executor.shutdown()
        other.destroy_node()


def _refuse_from_the_front(handle: Any) -> Any:
    """Test double of the affordance executor: the open failed from the fridge's +y side."""
    handle.abort()
    result = ExecuteAffordance.Result(
        error_code=ExecuteAffordance.Result.MANIPULATION_FAILED, error_msg="open obj_1: wrong side"
    )
    result.refused_fronts = [0.0, 1.0]
    return result


def test_a_side_the_executor_would_not_open_from_is_not_measured(ros_node: Node) -> None:
    requests = _planner_distances(ros_node)
    sensing = _sensing(ros_node)
    ActionServer(ros_node, ExecuteAffordance, "refusing_executor", execute_callback=_refuse_from_the_front)
    client = ActionClient(ros_node, ExecuteAffordance, "refusing_executor")
    assert client.wait_for_server(timeout_sec=20.0)
    world = RosWorld(sensing, client, should_stop=lambda: False)

    report = world.execute(Candidate("obj_1", SkillAffordance.OPEN))
    distances = sensing.distances()

    assert not report.success
    assert distances["obj_1"] == pytest.approx(2.7 + 10.0 * 0.35)  # the +x side, next after the refused +y
    assert len(requests[-1]) == 1 + 3 + 1 + 1


def test_a_frontier_is_as_far_as_the_goal_the_planner_publishes_for_it(ros_node: Node) -> None:
    """As the in-process world measures it: the way to the frontier's goal cell on the
    planner's ``frontiers``, not to the centroid its node sits at."""
    _planner_distances(ros_node)
    sensing = _sensing(ros_node)
    publisher = ros_node.create_publisher(FrontierArray, "frontiers", 10)
    message = FrontierArray(frontiers=[Frontier(id="frontier_3", goal=Point(x=4.5, y=2.0))])

    def measured_at_goal() -> bool:
        publisher.publish(message)
        return sensing.distances().get("frontier_3") == pytest.approx(4.5 + 20.0)

    assert wait_for(measured_at_goal, timeout=10.0)
