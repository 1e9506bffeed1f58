"""QoS profiles shared by the nodes."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

SENSOR_QOS = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
"""Camera streams: best effort matches both best-effort (drivers, sim_bridge) and reliable publishers."""

LATCHED_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""The last message for late joiners: the map, static tables."""
