"""Do 640x480 RGB-D frames at 30 Hz cross processes without loss on this machine?

A child process publishes rgb8 (921,600 B) and 32FC1 depth (1,228,800 B) images at
30 Hz for ``DURATION_S`` seconds per episode; this process subscribes (BEST_EFFORT, the
usual sensor QoS) and counts what arrives and how late. Loopback only; the shipped Fast
DDS profile (config/fastdds_localhost.xml) is used unless FASTDDS_DEFAULT_PROFILES_FILE
is set. Rates in [0, 1]; latency in milliseconds (publisher stamp to callback).
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace

import numpy as np

from sg_search.bench.harness import BenchOptions, BenchReport, map_episodes, summarise

DURATION_S = 5.0
RATE_HZ = 30.0
WIDTH, HEIGHT = 640, 480


def _episode(seed: int) -> dict[str, float]:
    from sg_search.ros_env import ensure_ros_env, use_localhost_profile

    ensure_ros_env()
    use_localhost_profile()
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    rclpy.init()
    node = Node(f"dds_images_sink_{seed}")
    latencies: dict[str, list[float]] = {"rgb": [], "depth": []}

    def sink(kind: str):  # type: ignore[no-untyped-def]
        def on_image(msg: Image) -> None:
            sent = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            latencies[kind].append((time.time() - sent) * 1e3)

        return on_image

    node.create_subscription(Image, "bench/rgb", sink("rgb"), qos_profile_sensor_data)
    node.create_subscription(Image, "bench/depth", sink("depth"), qos_profile_sensor_data)
    publisher = subprocess.Popen([sys.executable, "-m", "sg_search.ros.dds_images_bench", "--publish"])
    try:
        deadline = time.monotonic() + DURATION_S + 15.0
        while publisher.poll() is None and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.01)
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        if publisher.poll() is None:
            publisher.kill()
        node.destroy_node()
        rclpy.shutdown()
    sent = int(DURATION_S * RATE_HZ)
    rgb, depth = np.array(latencies["rgb"] or [np.nan]), np.array(latencies["depth"] or [np.nan])
    return {
        "rgb_received_rate": min(1.0, len(latencies["rgb"]) / sent),
        "depth_received_rate": min(1.0, len(latencies["depth"]) / sent),
        "rgb_latency_ms_p50": float(np.nanpercentile(rgb, 50)),
        "rgb_latency_ms_p95": float(np.nanpercentile(rgb, 95)),
        "depth_latency_ms_p50": float(np.nanpercentile(depth, 50)),
        "depth_latency_ms_p95": float(np.nanpercentile(depth, 95)),
    }


def _publish() -> None:
    """Child process: wait for the subscriber, then publish at RATE_HZ for DURATION_S."""
    from sg_search.ros_env import ensure_ros_env

    ensure_ros_env()
    import rclpy
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import Image

    rclpy.init()
    node = Node("dds_images_source")
    pubs = {
        "rgb": node.create_publisher(Image, "bench/rgb", qos_profile_sensor_data),
        "depth": node.create_publisher(Image, "bench/depth", qos_profile_sensor_data),
    }
    rgb = Image(height=HEIGHT, width=WIDTH, encoding="rgb8", step=WIDTH * 3)
    rgb.data = bytes(WIDTH * HEIGHT * 3)
    depth = Image(height=HEIGHT, width=WIDTH, encoding="32FC1", step=WIDTH * 4)
    depth.data = np.full(WIDTH * HEIGHT, 1.5, dtype=np.float32).tobytes()
    wait_until = time.monotonic() + 10.0
    while time.monotonic() < wait_until and min(p.get_subscription_count() for p in pubs.values()) == 0:
        rclpy.spin_once(node, timeout_sec=0.05)
    time.sleep(0.5)  # let discovery settle on both sides
    start = time.monotonic()
    for i in range(int(DURATION_S * RATE_HZ)):
        while time.monotonic() < start + i / RATE_HZ:
            time.sleep(0.001)
        now = time.time()
        for msg in (rgb, depth):
            msg.header.stamp.sec, msg.header.stamp.nanosec = int(now), int((now % 1.0) * 1e9)
        pubs["rgb"].publish(rgb)
        pubs["depth"].publish(depth)
    time.sleep(0.3)
    node.destroy_node()
    rclpy.shutdown()


def run(options: BenchOptions) -> BenchReport:
    """``options.episodes`` runs of DURATION_S seconds each (workers are forced to 1)."""
    if options.split != "all":
        raise ValueError(f"dds-images has no splits; use --split all (got {options.split!r})")
    serial = replace(options, workers=1, backend="local")  # one publisher at a time: it measures DDS
    rows = map_episodes(_episode, serial, "dds-images")
    return BenchReport("dds-images", serial, summarise(rows), rows)


if __name__ == "__main__" and "--publish" in sys.argv:
    _publish()
