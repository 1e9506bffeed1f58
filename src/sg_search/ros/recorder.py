"""recorder: topics into an MCAP file in the ROS 2 profile (CDR messages, ``ros2msg`` schemas),
which Foxglove and ``ros2 bag`` (rosbag2_storage_mcap) open. The pip-only ROS 2 has no
rosbag2, so this writes the file itself with the ``mcap`` package.

Messages are taken serialised (raw subscriptions: no decode, no re-encode). Each topic's
type is discovered from the graph; its schema is the ``.msg`` definition with its
dependencies appended, read from ``<prefix>/share/<package>/msg``. Topics in
``throttled_topics`` (images, the map) are kept once per ``throttle_period_s`` window, the same
window for all of them, so a kept RGB image has its depth and camera_info beside it.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from sg_search.ros.params import declare_config

PRIMITIVES = {
    "bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16",
    "int32", "uint32", "int64", "uint64", "string", "wstring",
}  # fmt: skip
SEPARATOR = "=" * 80


@dataclass(frozen=True)
class RecorderConfig:
    """See config/sg_search.yaml (``recorder``)."""

    output: str = "run.mcap"
    topics: tuple[str, ...] = (
        "/tf", "/tf_static", "odom", "cmd_vel", "plan", "frontiers", "scene_graph/updates",
        "scene_graph/markers", "observations", "search/target",
    )  # fmt: skip
    throttled_topics: tuple[str, ...] = ("rgb", "depth", "camera_info", "map")
    throttle_period_s: float = 2.0
    discovery_period_s: float = 1.0


def _msg_file(full_type: str) -> Path:
    package, _, name = full_type.split("/")
    prefixes = [sys.prefix, *os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)]
    for prefix in filter(None, prefixes):
        path = Path(prefix) / "share" / package / "msg" / f"{name}.msg"
        if path.is_file():
            return path
    raise FileNotFoundError(f"no definition of {full_type} under {prefixes}")


def message_definition(full_type: str) -> str:
    """The ``ros2msg`` schema text of ``pkg/msg/Type``: its .msg file, then each dependency
    once as ``====`` + ``MSG: pkg/Type`` + its .msg file."""
    text = _msg_file(full_type).read_text()
    parts, seen, queue = [text], {full_type}, _dependencies(text, full_type.split("/")[0])
    while queue:
        dep = queue.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        body = _msg_file(dep).read_text()
        package, _, name = dep.split("/")
        parts.append(f"{SEPARATOR}\nMSG: {package}/{name}\n{body}")
        queue += _dependencies(body, package)
    return "\n".join(parts)


def _dependencies(text: str, package: str) -> list[str]:
    out = []
    for line in text.splitlines():
        tokens = line.split("#", 1)[0].split()
        if len(tokens) < 2 or "=" in tokens[1]:  # blank, comment or constant
            continue
        kind = re.sub(r"\[.*?\]|<=\d+", "", tokens[0])
        if kind in PRIMITIVES:
            continue
        if kind == "Header":
            kind = "std_msgs/Header"
        pkg, _, name = kind.rpartition("/")
        out.append(f"{pkg or package}/msg/{name}")
    return out


class Recorder(Node):
    """See the module docstring; the file is complete after :meth:`destroy_node`."""

    def __init__(self, node_name: str = "recorder", **kwargs: object) -> None:
        super().__init__(node_name, **kwargs)  # type: ignore[arg-type]
        from mcap.writer import Writer

        self.config = declare_config(self, RecorderConfig)
        self._file = open(self.config.output, "wb")  # noqa: SIM115 - closed in destroy_node
        self._writer = Writer(self._file)
        self._writer.start(profile="ros2", library="sg_search recorder")
        self._lock = threading.Lock()
        self._channels: dict[str, int] = {}
        self._last: dict[str, int] = {}
        self._schemas: dict[str, int] = {}
        self._recorded: list[Any] = []
        self.messages = 0
        # Discovery runs on the wall clock: on simulated time it would wait for /clock.
        self.create_timer(
            self.config.discovery_period_s, self._discover, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )

    def _discover(self) -> None:
        wanted = {self.resolve_topic_name(t): t for t in (*self.config.topics, *self.config.throttled_topics)}
        for topic, types in self.get_topic_names_and_types():
            if topic not in wanted or topic in self._channels or not types:
                continue
            full_type = types[0]
            try:
                package, _, name = full_type.split("/")
                msg_class = getattr(importlib.import_module(f"{package}.msg"), name)
                schema = self._schemas.get(full_type)
                if schema is None:
                    schema = self._writer.register_schema(
                        full_type, "ros2msg", message_definition(full_type).encode()
                    )
                    self._schemas[full_type] = schema
            except (ImportError, AttributeError, FileNotFoundError, ValueError) as exc:
                self.get_logger().warning(f"cannot record {topic} ({full_type}): {exc}")
                self._channels[topic] = -1
                continue
            with self._lock:
                self._channels[topic] = self._writer.register_channel(topic, "cdr", schema)
            publishers = self.get_publishers_info_by_topic(topic)
            offered = publishers[0].qos_profile if publishers else None
            qos = QoSProfile(
                depth=10,
                reliability=offered.reliability if offered else ReliabilityPolicy.BEST_EFFORT,
                durability=offered.durability if offered else DurabilityPolicy.VOLATILE,
            )
            throttled = wanted[topic] in self.config.throttled_topics
            self._recorded.append(
                self.create_subscription(
                    msg_class,
                    topic,
                    lambda data, t=topic, th=throttled: self._write(t, data, th),
                    qos,
                    raw=True,
                )
            )

    def _write(self, topic: str, data: bytes, throttled: bool) -> None:
        now = self.get_clock().now().nanoseconds
        with self._lock:
            if self._file.closed:
                return
            window = int(now // (self.config.throttle_period_s * 1e9))
            if throttled and self._last.get(topic) == window:
                return
            self._last[topic] = window
            self._writer.add_message(self._channels[topic], log_time=now, data=data, publish_time=now)
            self.messages += 1

    def destroy_node(self) -> None:
        """Finish the MCAP file (summary and index), then the node."""
        with self._lock:
            if not self._file.closed:
                self._writer.finish()
                self._file.close()
        super().destroy_node()
