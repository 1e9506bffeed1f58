"""Which nodes of the stack are alive, through DDS liveliness (no pings).

Each node announces itself with a publisher on ``alive/<node name>`` whose QoS liveliness is
AUTOMATIC with a lease of ``LEASE_S``: DDS asserts it for as long as the process runs. A node
that depends on another watches that topic; the middleware reports the publisher's loss
about one lease after the process dies (measured here: 0.5 s after SIGKILL), and its return
when it is restarted. Nothing is ever published on these topics.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rclpy.duration import Duration
from rclpy.event_handler import QoSLivelinessChangedInfo, SubscriptionEventCallbacks
from rclpy.qos import DurabilityPolicy, LivelinessPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Empty

if TYPE_CHECKING:
    from rclpy.node import Node
    from rclpy.publisher import Publisher

LEASE_S = 1.0
ALIVE_QOS = QoSProfile(
    depth=1,
    liveliness=LivelinessPolicy.AUTOMATIC,
    liveliness_lease_duration=Duration(seconds=LEASE_S),
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def announce_alive(node: Node) -> Publisher:
    """The publisher whose liveliness says that ``node`` runs (keep a reference to it)."""
    return node.create_publisher(Empty, f"alive/{node.get_name()}", ALIVE_QOS)


class AliveWatch:
    """Whether the node named ``name`` is alive, as DDS sees its ``alive/<name>`` publisher.

    ``lost`` is true once the node has been seen alive and is no longer: a node that was
    never started is not "lost" (a stack without it is a valid configuration). ``losses``
    counts the losses: a goal records it when it starts and stops once it grows (its sender
    died during it), which a goal sent by a restarted node before the watch has seen it again
    does not. An empty ``name`` watches nothing and is never lost (a parameter's way to turn
    the watch off).
    """

    def __init__(self, node: Node, name: str, on_lost: Callable[[], None] = lambda: None) -> None:
        """``on_lost`` is called (on an executor thread) each time the node is lost."""
        self.name = name
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._alive = 0
        self._seen = False
        self._losses = 0
        if name:
            self._subscription = node.create_subscription(
                Empty,
                f"alive/{name}",
                lambda _: None,
                ALIVE_QOS,
                event_callbacks=SubscriptionEventCallbacks(liveliness=self._on_liveliness),
            )

    def _on_liveliness(self, info: QoSLivelinessChangedInfo) -> None:
        with self._lock:
            lost = self._alive > 0 and info.alive_count == 0  # the moment of the loss
            self._alive = int(info.alive_count)
            self._seen = self._seen or self._alive > 0
            self._losses += lost
        if lost:
            self._on_lost()

    @property
    def alive(self) -> bool:
        """At least one instance of the node is alive."""
        with self._lock:
            return self._alive > 0

    @property
    def losses(self) -> int:
        """How many times the node has been lost so far."""
        with self._lock:
            return self._losses

    @property
    def lost(self) -> bool:
        """Seen alive once, and none is alive now."""
        with self._lock:
            return self._seen and self._alive == 0
