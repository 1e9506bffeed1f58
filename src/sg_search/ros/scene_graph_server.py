"""scene_graph_server: hosts the SceneGraph, fed by perception, read by reasoners.

Topics (relative, so a launch file can namespace them):
  sub ``observations`` (ObjectObservationArray)   perception's fused instances, frame ``map``
  sub ``frontiers`` (FrontierArray)                the planner's current frontier segments
  sub ``map`` (nav_msgs/OccupancyGrid)             rooms segmented from its free cells (``rooms_from_map``)
  pub ``scene_graph/updates`` (SceneGraphUpdate)   incremental per change, full periodically
  pub ``scene_graph/markers`` (MarkerArray)        rviz view, at most every ``markers_period_s``
Services:
  ``scene_graph/get`` (GetSceneGraph)  snapshot or changes since a sequence
  ``scene_graph/query`` (QuerySceneGraph)
  ``scene_graph/schema`` (GetSchema)
  ``scene_graph/set_state`` (SetNodeState)  the executor records opened/explored nodes
  ``scene_graph/run_code`` (RunGraphCode)  sandboxed Python over a read-only copy (SG-RwR retriever)
With ``llm_edges``, an LLM proposes SG-Nav's long-range edges for new objects, one request per
``llm_edges_period_s`` (steady clock), outside the graph lock.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from nav_msgs.msg import OccupancyGrid
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sg_search_interfaces.msg import FrontierArray, ObjectObservationArray, SceneGraphUpdate
from sg_search_interfaces.srv import GetSceneGraph, GetSchema, QuerySceneGraph, RunGraphCode, SetNodeState
from std_msgs.msg import Header
from visualization_msgs.msg import MarkerArray

from sg_search.perception.room_segmentation import RoomSegmentationParams
from sg_search.reasoning.knowledge.room_naming import knowledge_map_rooms
from sg_search.reasoning.llm.edges import LlmEdgeProposer
from sg_search.ros.conversions import (
    frontiers_from_msg,
    grid_from_msg,
    instances_from_msg,
    node_to_msg,
    update_to_msg,
)
from sg_search.ros.liveliness import announce_alive
from sg_search.ros.markers import graph_markers
from sg_search.ros.params import declare_config
from sg_search.ros.qos import LATCHED_QOS
from sg_search.scene_graph import NodeState, SceneGraph
from sg_search.scene_graph.builder import SceneGraphBuilder
from sg_search.scene_graph.config import SceneGraphServerConfig
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.prior import load_prior
from sg_search.scene_graph.query import find_nodes
from sg_search.scene_graph.room_layer import MapRooms, graph_objects
from sg_search.scene_graph.sandbox import SandboxLimits, run_graph_code
from sg_search.scene_graph.schema import schema_yaml
from sg_search.scene_graph.serialization import load_snapshot, save_snapshot

UPDATES_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)


class SceneGraphServer(Node):
    """ROS host of one :class:`SceneGraph`; all graph logic lives in the core."""

    def __init__(self, node_name: str = "scene_graph_server", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        self.config = declare_config(self, SceneGraphServerConfig)
        self.graph = SceneGraph(self.config.history_limit, self.config.max_frame_ids)
        self.lock = threading.Lock()  # guards the graph
        self._sandboxes = threading.BoundedSemaphore(self.config.sandbox_max_concurrent)
        self._load_initial_graph()
        # Only when asked for: without ``llm_edges`` no proposer exists and no request is sent.
        self._proposer = LlmEdgeProposer.from_params(self.config.__dict__) if self.config.llm_edges else None
        self.builder = SceneGraphBuilder(
            self.graph,
            self.config.builder(),
            load_related_pairs(self.config.related_categories_file or None),
            proposer=self._proposer,
        )
        self.builder.refresh()
        self._published_sequence = 0
        self._saved_sequence = self.graph.sequence
        self._updates = self.create_publisher(SceneGraphUpdate, "scene_graph/updates", UPDATES_QOS)
        self._alive = announce_alive(self)  # DDS liveliness: dependants see this node die
        self._markers = self.create_publisher(MarkerArray, "scene_graph/markers", 1)
        self._markers_sequence = -1
        if self.config.markers_period_s > 0:
            self.create_timer(self.config.markers_period_s, self._publish_markers)
        if self.config.snapshot_file and self.config.snapshot_period_s > 0:
            self.create_timer(self.config.snapshot_period_s, self._save_periodically)
        self.create_subscription(ObjectObservationArray, "observations", self._on_observations, 10)
        self.create_subscription(FrontierArray, "frontiers", self._on_frontiers, 10)
        self._rooms: MapRooms | None = None
        self._last_rooms = -math.inf
        if self.config.rooms_from_map and not self.config.prior_scene_file:  # a prior brings its rooms
            # the learned model loads in the background: a map callback waiting for it would
            # hold up a shutdown past its deadline (room_naming's docstring)
            params = declare_config(self, RoomSegmentationParams, "rooms")
            self._rooms = knowledge_map_rooms(
                params=params, background=True, load_now=self.config.knowledge_at_start
            )
            self.create_subscription(
                OccupancyGrid,
                "map",
                self._on_map,
                LATCHED_QOS,
                callback_group=MutuallyExclusiveCallbackGroup(),
            )
        self.create_service(SetNodeState, "scene_graph/set_state", self._on_set_state)
        self.create_service(
            RunGraphCode, "scene_graph/run_code", self._on_run_code, callback_group=ReentrantCallbackGroup()
        )
        self.create_service(GetSceneGraph, "scene_graph/get", self._on_get)
        self.create_service(QuerySceneGraph, "scene_graph/query", self._on_query)
        self.create_service(GetSchema, "scene_graph/schema", self._on_schema)
        if self.config.full_update_period_s > 0:
            self.create_timer(self.config.full_update_period_s, self._publish_full)
        if self._proposer is not None:
            self.create_timer(
                self.config.llm_edges_period_s,
                self._propose_edges,
                callback_group=MutuallyExclusiveCallbackGroup(),
                clock=Clock(clock_type=ClockType.STEADY_TIME),
            )
        self._publish_full()

    def _load_initial_graph(self) -> None:
        """Continue from the snapshot file if there is one, else start from the prior (if any)."""
        snapshot = Path(self.config.snapshot_file) if self.config.snapshot_file else None
        if snapshot is not None and snapshot.is_file():
            load_snapshot(snapshot, self.graph)
            self.get_logger().info(
                f"restored {len(self.graph)} nodes (sequence {self.graph.sequence}) from {snapshot}"
            )
        elif self.config.prior_scene_file:
            load_prior(self.config.prior_scene_file, self.graph)
            self.get_logger().info(
                f"loaded prior scene {self.config.prior_scene_file}: {len(self.graph)} nodes"
            )

    def save(self) -> None:
        """Write the snapshot file (atomically) if the graph changed since the last save."""
        if not self.config.snapshot_file:
            return
        with self.lock:  # take the (immutable) snapshot under the lock, serialise outside it
            if self.graph.sequence == self._saved_sequence:
                return
            snapshot = self.graph.snapshot()
        save_snapshot(snapshot, self.config.snapshot_file)
        self._saved_sequence = snapshot.sequence

    def _save_periodically(self) -> None:
        """The snapshot timer: a failed save (a full disk) is logged, and tried again on the next
        tick; the graph in memory is untouched."""
        try:
            self.save()
        except OSError as exc:
            self.get_logger().error(f"could not save snapshot {self.config.snapshot_file}: {exc}")

    def destroy_node(self) -> None:
        """Save the snapshot before going away."""
        self._save_periodically()
        super().destroy_node()

    def _publish_markers(self) -> None:
        if self._markers.get_subscription_count() == 0 or self._markers_sequence == self.graph.sequence:
            return
        with self.lock:
            markers = graph_markers(self.graph, self.config.frame_id, self.get_clock().now().to_msg())
            self._markers_sequence = self.graph.sequence
        self._markers.publish(markers)

    def _header(self) -> Header:
        return Header(stamp=self.get_clock().now().to_msg(), frame_id=self.config.frame_id)

    def _on_observations(self, msg: ObjectObservationArray) -> None:
        self._apply(
            f"observations of frame {msg.frame_index}",
            msg.header.frame_id,
            lambda: self.builder.integrate(
                msg.frame_index, instances_from_msg(msg), msg.removed_instance_ids
            ),
        )

    def _on_frontiers(self, msg: FrontierArray) -> None:
        self._apply(
            "frontiers",
            msg.header.frame_id,
            lambda: self.builder.integrate_frontiers(frontiers_from_msg(msg)),
        )

    def _on_map(self, msg: OccupancyGrid) -> None:
        """Re-segment rooms at most every ``rooms_period_s`` (wall clock: it costs ~0.3 s)."""
        if self._rooms is None or time.monotonic() - self._last_rooms < self.config.rooms_period_s:
            return
        if msg.header.frame_id and msg.header.frame_id != self.config.frame_id:
            self.get_logger().error(f"map in frame '{msg.header.frame_id}': rooms not updated")
            return
        try:
            spec, states = grid_from_msg(msg)
        except ValueError as exc:
            self.get_logger().error(f"map rejected, rooms not updated: {exc}")
            return
        self._last_rooms = time.monotonic()
        rooms = self._rooms
        with self.lock:
            objects = graph_objects(self.graph)
        segmentation, names = rooms.segment(objects, states == 0, spec)  # ~0.3 s: outside the lock
        self._apply("rooms", "", lambda: rooms.tracker.update(self.graph, segmentation, names))

    def _propose_edges(self) -> None:
        """SG-Nav long edges for the objects added since the last proposal (the builder's; the
        graph lock is not held while the model thinks)."""
        assert self._proposer is not None
        failures = len(self._proposer.failures)
        kept = self.builder.propose_pending(self.lock)
        if len(self._proposer.failures) > failures:
            self.get_logger().warning(f"long-edge proposal failed: {self._proposer.failures[-1]}")
        if kept:
            with self.lock:
                self._publish_incremental()

    def _on_set_state(
        self, request: SetNodeState.Request, response: SetNodeState.Response
    ) -> SetNodeState.Response:
        try:
            state = NodeState(request.state)
        except ValueError:
            response.success, response.message = False, f"invalid state {request.state}"
            return response
        with self.lock:
            node = self.graph.get(request.node_id)
            if node is None:
                response.success, response.message = False, f"unknown node {request.node_id!r}"
                return response
            self.graph.upsert_node(replace(node, state=state))
            self._publish_incremental()
        response.success, response.message = True, f"{request.node_id} is {state.name}"
        return response

    def _apply(self, what: str, frame_id: str, change: Callable[[], object]) -> None:
        """Run one change of the graph; refuse it whole (graph unchanged) on bad input."""
        if frame_id and frame_id != self.config.frame_id:
            self.get_logger().error(
                f"{what} in frame '{frame_id}', expected '{self.config.frame_id}': ignored"
            )
            return
        with self.lock:
            try:
                change()
            except (ValueError, KeyError) as exc:
                self.get_logger().error(f"{what} rejected, graph unchanged: {exc}")
                return
            self._publish_incremental()

    def _on_run_code(
        self, request: RunGraphCode.Request, response: RunGraphCode.Response
    ) -> RunGraphCode.Response:
        """Refused at once (graph untouched) with a bad time limit, or while
        ``sandbox_max_concurrent`` calls run: sensing keeps its executor threads."""
        try:
            limits = SandboxLimits(
                time_s=float(request.time_limit_s) or self.config.sandbox_time_limit_s,
                memory_mb=self.config.sandbox_memory_mb,
            )
        except ValueError as exc:
            response.success = False
            response.error = f"run_code refused: time_limit_s {request.time_limit_s}: {exc}"
            return response
        if not self._sandboxes.acquire(blocking=False):
            response.success = False
            response.error = (
                f"run_code refused: {self.config.sandbox_max_concurrent} calls are running; try again"
            )
            return response
        try:
            with self.lock:
                copy = SceneGraph()
                copy.apply(self.graph.snapshot())
            result = run_graph_code(request.code, copy, limits)
        finally:
            self._sandboxes.release()
        response.success, response.stdout = result.ok, result.stdout
        response.error, response.timed_out = result.error, result.timed_out
        return response

    def _publish_incremental(self) -> None:
        if self.graph.sequence == self._published_sequence:
            return
        update = self.graph.updates_since(self._published_sequence)
        self._updates.publish(update_to_msg(update, self._header()))
        self._published_sequence = update.sequence

    def _publish_full(self) -> None:
        with self.lock:
            self._updates.publish(update_to_msg(self.graph.snapshot(), self._header()))
            self._published_sequence = self.graph.sequence

    def _on_get(
        self, request: GetSceneGraph.Request, response: GetSceneGraph.Response
    ) -> GetSceneGraph.Response:
        with self.lock:
            response.update = update_to_msg(self.graph.updates_since(request.since_sequence), self._header())
        response.success = True
        return response

    def _on_query(
        self, request: QuerySceneGraph.Request, response: QuerySceneGraph.Response
    ) -> QuerySceneGraph.Response:
        try:
            with self.lock:
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
