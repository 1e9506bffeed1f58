"""scene_graph_server: hosts the SceneGraph, fed by perception, read by reasoners.

Topics (relative, so a launch file can namespace them):
  sub ``observations`` (ObjectObservationArray)   perception's fused instances, frame ``map``
  pub ``scene_graph/updates`` (SceneGraphUpdate)   incremental per change, full periodically
Services:
  ``scene_graph/get`` (GetSceneGraph)  snapshot or changes since a sequence
  ``scene_graph/query`` (QuerySceneGraph)
  ``scene_graph/schema`` (GetSchema)
"""

from __future__ import annotations

import threading

from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sg_search_interfaces.msg import ObjectObservationArray, SceneGraphUpdate
from sg_search_interfaces.srv import GetSceneGraph, GetSchema, QuerySceneGraph
from std_msgs.msg import Header

from sg_search.ros.conversions import instances_from_msg, node_to_msg, update_to_msg
from sg_search.ros.params import declare_config
from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.config import SceneGraphServerConfig
from sg_search.scene_graph.observations import integrate_instances
from sg_search.scene_graph.prior import load_prior
from sg_search.scene_graph.query import find_nodes
from sg_search.scene_graph.schema import schema_yaml

UPDATES_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class SceneGraphServer(Node):
    """ROS host of one :class:`SceneGraph`; all graph logic lives in the core."""

    def __init__(self, node_name: str = "scene_graph_server", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, SceneGraphServerConfig)
        self.graph = SceneGraph(self.config.history_limit, self.config.max_frame_ids)
        self._lock = threading.Lock()
        if self.config.prior_scene_file:
            load_prior(self.config.prior_scene_file, self.graph)
            self.get_logger().info(
                f"loaded prior scene {self.config.prior_scene_file}: {len(self.graph)} nodes"
            )
        self._integration = self.config.integration()
        self._published_sequence = 0
        self._updates = self.create_publisher(SceneGraphUpdate, "scene_graph/updates", UPDATES_QOS)
        self.create_subscription(ObjectObservationArray, "observations", self._on_observations, 10)
        self.create_service(GetSceneGraph, "scene_graph/get", self._on_get)
        self.create_service(QuerySceneGraph, "scene_graph/query", self._on_query)
        self.create_service(GetSchema, "scene_graph/schema", self._on_schema)
        if self.config.full_update_period_s > 0:
            self.create_timer(self.config.full_update_period_s, self._publish_full)
        self._publish_full()

    def _header(self) -> Header:
        return Header(stamp=self.get_clock().now().to_msg(), frame_id=self.config.frame_id)

    def _on_observations(self, msg: ObjectObservationArray) -> None:
        if msg.header.frame_id and msg.header.frame_id != self.config.frame_id:
            self.get_logger().error(
                f"observations in frame '{msg.header.frame_id}', expected '{self.config.frame_id}': ignored"
            )
            return
        with self._lock:
            try:
                integrate_instances(
                    self.graph,
                    msg.frame_index,
                    instances_from_msg(msg),
                    msg.removed_instance_ids,
                    self._integration,
                )
            except (ValueError, KeyError) as exc:
                self.get_logger().error(f"frame {msg.frame_index} rejected, graph unchanged: {exc}")
                return
            self._publish_incremental()

    def _publish_incremental(self) -> None:
        if self.graph.sequence == self._published_sequence:
            return
        update = self.graph.updates_since(self._published_sequence)
        self._updates.publish(update_to_msg(update, self._header()))
        self._published_sequence = update.sequence

    def _publish_full(self) -> None:
        with self._lock:
            self._updates.publish(update_to_msg(self.graph.snapshot(), self._header()))
            self._published_sequence = self.graph.sequence

    def _on_get(
        self, request: GetSceneGraph.Request, response: GetSceneGraph.Response
    ) -> GetSceneGraph.Response:
        with self._lock:
            response.update = update_to_msg(self.graph.updates_since(request.since_sequence), self._header())
        response.success = True
        return response

    def _on_query(
        self, request: QuerySceneGraph.Request, response: QuerySceneGraph.Response
    ) -> QuerySceneGraph.Response:
        try:
            with self._lock:
                nodes = find_nodes(
                    self.graph, request.text, request.kind, request.room_id, request.max_results
                )
        except ValueError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.nodes = [node_to_msg(n) for n in nodes]
        return response

    def _on_schema(self, request: GetSchema.Request, response: GetSchema.Response) -> GetSchema.Response:
        response.schema_yaml = schema_yaml()
        response.sequence = self.graph.sequence
        return response
