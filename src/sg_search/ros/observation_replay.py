"""observation_replay: publishes recorded fused instances on ``observations`` on schedule.

Parameters: ``replay_file`` (YAML, see sg_search.perception.replay), ``frame_id`` (``map``),
``start_delay_s`` (wait for subscribers), ``rate_scale`` (2.0 = twice as fast).
"""

from __future__ import annotations

from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray
from std_msgs.msg import Header

from sg_search.perception.replay import load_replay
from sg_search.ros.conversions import instances_to_msg


class ObservationReplay(Node):
    """Plays a replay file once; ``finished`` turns True after the last frame."""

    def __init__(self, node_name: str = "observation_replay", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        path = self.declare_parameter("replay_file", "").value
        self._frame_id = str(self.declare_parameter("frame_id", "map").value)
        delay = float(self.declare_parameter("start_delay_s", 1.0).value)
        self._scale = float(self.declare_parameter("rate_scale", 1.0).value)
        if not path:
            raise ValueError("observation_replay needs the parameter 'replay_file'")
        if self._scale <= 0:
            raise ValueError(f"rate_scale must be > 0, got {self._scale}")
        self._frames = load_replay(str(path))
        self._next = 0
        self.finished = not self._frames
        self._publisher = self.create_publisher(ObjectObservationArray, "observations", 10)
        self._start = self.get_clock().now().nanoseconds * 1e-9 + delay
        self._timer = self.create_timer(0.05, self._tick)

    def _tick(self) -> None:
        elapsed = (self.get_clock().now().nanoseconds * 1e-9 - self._start) * self._scale
        while self._next < len(self._frames) and self._frames[self._next].t <= elapsed:
            frame = self._frames[self._next]
            header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self._frame_id)
            self._publisher.publish(instances_to_msg(frame.instances, header, frame.index, frame.removed))
            self._next += 1
        if self._next >= len(self._frames) and not self.finished:
            self.finished = True
            self.get_logger().info(f"replayed {len(self._frames)} frames")
            self._timer.cancel()
