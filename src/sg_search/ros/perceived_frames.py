"""Which camera frames perception has processed, from its ``observations`` messages.

Perception publishes one ``ObjectObservationArray`` per processed frame (empty when the frame
changed nothing), stamped with the frame's capture time. A skill that moved the camera waits
here until perception has processed frames captured after the move, so that what the robot
saw there is in the scene graph before the search decides again — instead of a fixed sleep,
which a loaded machine outruns (perception needs ``min_observations`` frames of an object
before it reports it).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray

from sg_search.ros.perception_node import stamp_of

POLL_S = 0.05


@dataclass(frozen=True)
class ProcessedFrame:
    """One frame perception processed: capture stamp [s, the node's clock], its index, and
    whether it reported instances (then the scene graph's nodes list the index; ids merged
    away leave no trace there to wait for)."""

    stamp_s: float
    index: int
    reported: bool


class PerceivedFrames:
    """The last ``kept`` frames perception processed (a subscription on ``node``)."""

    def __init__(self, node: Node, kept: int = 32) -> None:
        self._frames: deque[ProcessedFrame] = deque(maxlen=kept)
        self._lock = threading.Lock()
        node.create_subscription(ObjectObservationArray, "observations", self._on_observations, 10)

    def _on_observations(self, msg: ObjectObservationArray) -> None:
        frame = ProcessedFrame(stamp_of(msg), int(msg.frame_index), bool(msg.observations))
        with self._lock:
            self._frames.append(frame)

    def after(self, stamp_s: float) -> list[ProcessedFrame]:
        """The frames captured after ``stamp_s`` [s], oldest first."""
        with self._lock:
            return [f for f in self._frames if f.stamp_s > stamp_s]

    def wait_after(
        self,
        stamp_s: float,
        count: int,
        timeout_s: float,
        in_graph: Callable[[int], bool],
        stop: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Wait until perception processed ``count`` frames captured after ``stamp_s`` [s] and
        ``in_graph`` says the last of them that reported something has reached the scene
        graph; at most ``timeout_s`` [s] of wall time, or until ``stop()``. True when it did."""
        deadline = time.monotonic() + timeout_s
        while True:
            frames = self.after(stamp_s)
            reported = [f.index for f in frames if f.reported]
            if len(frames) >= count and (not reported or in_graph(reported[-1])):
                return True
            if stop() or time.monotonic() > deadline:
                return False
            time.sleep(POLL_S)
