"""A reasoner-side copy of the server's scene graph, kept current from update messages."""

from __future__ import annotations

import threading

from rclpy.node import Node
from rclpy.task import Future
from sg_search_interfaces.msg import SceneGraphUpdate
from sg_search_interfaces.srv import GetSceneGraph

from sg_search.ros.conversions import update_from_msg
from sg_search.ros.futures import call_with_resend
from sg_search.ros.scene_graph_server import UPDATES_QOS
from sg_search.scene_graph import SceneGraph, SequenceGapError


class GraphMirror:
    """Applies ``scene_graph/updates``; on a sequence gap asks ``scene_graph/get`` for a snapshot.

    ``copy()`` gives a consistent private copy for one decision step.
    """

    def __init__(self, node: Node) -> None:
        self._node = node
        self._graph = SceneGraph()
        self._synced = False
        self._lock = threading.Lock()
        self._client = node.create_client(GetSceneGraph, "scene_graph/get")
        node.create_subscription(SceneGraphUpdate, "scene_graph/updates", self._on_update, UPDATES_QOS)

    @property
    def synced(self) -> bool:
        """True once a full graph has been received."""
        return self._synced

    @property
    def sequence(self) -> int:
        """The sequence of the graph held (-1 before the first one): cheaper than a copy."""
        with self._lock:
            return self._graph.sequence if self._synced else -1

    def has_frame(self, frame_index: int) -> bool:
        """Whether a node of the graph held lists ``frame_index`` among its frames."""
        with self._lock:
            return any(frame_index in n.frame_ids for n in self._graph.nodes())

    def _on_update(self, msg: SceneGraphUpdate) -> None:
        try:
            update = update_from_msg(msg)
        except ValueError as exc:
            self._node.get_logger().error(f"bad scene graph update {msg.sequence}: {exc}")
            return
        with self._lock:
            if not self._synced and not update.is_full:
                self._request_snapshot()
                return
            try:
                if not self._graph.apply(update):
                    # Older than what we hold: a restarted server (snapshot behind us) or a replay.
                    self._request_snapshot()
                    return
                self._synced = True
            except SequenceGapError as exc:
                self._node.get_logger().warning(f"{exc}; requesting a snapshot")
                self._request_snapshot()

    def _request_snapshot(self) -> None:
        if not self._client.service_is_ready():
            return
        future = self._client.call_async(GetSceneGraph.Request(since_sequence=0))
        future.add_done_callback(self._on_snapshot)

    def _on_snapshot(self, future: Future) -> None:
        response = future.result()
        if response is not None:
            self._on_update(response.update)

    def catch_up(self, timeout_s: float) -> bool:
        """Bring the copy up to the server's graph now (a ``scene_graph/get`` snapshot, applied
        when newer than the copy) instead of waiting for the update stream, which another
        subscriber may have been served sooner. False if the server did not answer within
        ``timeout_s`` [s]; the stream still keeps the copy current then."""
        if not self._client.wait_for_service(timeout_sec=timeout_s):
            return False
        response = call_with_resend(self._client, GetSceneGraph.Request(since_sequence=0), timeout_s)
        if response is None:
            return False
        try:
            update = update_from_msg(response.update)
        except ValueError as exc:
            self._node.get_logger().error(f"bad scene graph snapshot {response.update.sequence}: {exc}")
            return False
        with self._lock:
            if not self._synced or update.sequence > self._graph.sequence:
                self._graph.apply(update)
                self._synced = True
        return True

    def copy(self, wait_s: float = 0.0) -> SceneGraph | None:
        """A private copy of the current graph; None if no graph arrived within ``wait_s``."""
        if not self._synced and wait_s > 0:
            self.catch_up(wait_s)
        with self._lock:
            if not self._synced:
                return None
            copy = SceneGraph(self._graph.history_limit, self._graph.max_frame_ids)
            copy.apply(self._graph.snapshot())
            return copy
