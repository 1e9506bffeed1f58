"""QoS profiles shared by the nodes."""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

SENSOR_QOS = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
"""Camera streams: best effort matches both best-effort (drivers, sim_bridge) and reliable publishers."""

LATCHED_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
"""The last message for late joiners: the map, static tables."""

CMD_VEL_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
"""Velocity commands: only the newest counts. A driver whose executor fell behind must not play
a queue of old commands after the newest one (a stop): the simulated base rolled 0.1 m past
where the planner had stopped it, and a container was opened from there."""
