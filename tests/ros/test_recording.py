"""A run's recordings, read back by other people's readers: ``run.mcap`` with the ``mcap``
library's ROS 2 decoder (mcap-ros2-support, not our code) must let Foxglove place every marker
and image through its recorded transforms; ``run.rrd`` with Rerun's own reader must hold the
entities the live view promises."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from nav_msgs.msg import OccupancyGrid
from rclpy.node import Node
from sg_search_interfaces.msg import ObjectObservationArray

from sg_search.ros.qos import LATCHED_QOS

pytestmark = [pytest.mark.ros, pytest.mark.xdist_group("robot")]

SMALL_CAMERA = ("-p", "width:=160", "-p", "height:=120", "-p", "rate_hz:=5.0")
RECORDED = (
    "-p", "topics:=['/tf', '/tf_static', 'odom', 'scene_graph/markers']",
    "-p", "throttled_topics:=['rgb', 'depth', 'camera_info']",
    "-p", "throttle_period_s:=1.0",
)  # fmt: skip


def _resolves(frame: str, parents: dict[str, str], root: str) -> bool:
    """True when ``frame`` reaches ``root`` through the child -> parent edges."""
    seen = set()
    while frame != root:
        if frame in seen or frame not in parents:
            return False
        seen.add(frame)
        frame = parents[frame]
    return True


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A short run of the sensing half of the stack with both recorders; their files."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from sg_search.ros.processes import NodeProcess

    folder = tmp_path_factory.mktemp("run")
    sim = ("-p", "use_sim_time:=true")
    procs = [
        NodeProcess("sim_bridge", *SMALL_CAMERA, "-p", "start_room:=kitchen_0"),
        NodeProcess("perception", *sim),
        NodeProcess("scene_graph_server", *sim, "-p", "markers_period_s:=0.5"),
        NodeProcess("frontier_planner", *sim),
        NodeProcess("recorder", *sim, "-p", f"output:={folder / 'run.mcap'}", *RECORDED),
    ]
    live_view = NodeProcess("live_view", *sim, "-p", f"output:={folder / 'run.rrd'}", "-p", "period_s:=0.2")
    procs.append(live_view)
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("recording_test", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    got: list[ObjectObservationArray] = []
    known_maps: list[OccupancyGrid] = []
    node.create_subscription(ObjectObservationArray, "observations", got.append, 10)

    def keep_known(msg: OccupancyGrid) -> None:
        if max(msg.data, default=-1) >= 0:
            known_maps.append(msg)

    node.create_subscription(OccupancyGrid, "map", keep_known, LATCHED_QOS)
    try:
        # the fusions, a map with known cells (an all-unknown map is not drawn) and the live
        # view's first map: under load the planner may integrate its first depth frame well
        # after perception fused three, and the live view (it imports Rerun) may start or
        # discover the planner well after this node did (in one run it logged for ~1 s only)
        def ready() -> bool:
            return len(got) >= 3 and bool(known_maps) and "first map logged" in live_view.output_so_far()

        deadline = time.monotonic() + 120.0
        while not ready() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        end = time.monotonic() + 4.0  # markers, a map period and a few more frames after that
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.1)
    finally:
        logs = {p.name: p.stop() for p in reversed(procs)}  # SIGINT: files are finished
        node.destroy_node()
        rclpy.shutdown(context=context)
    assert len(got) >= 3, f"no fused instances from the simulated camera: {logs['perception']}"
    assert known_maps, f"the planner never published a map with known cells: {logs['frontier_planner']}"
    assert "first map logged" in logs["live_view"], f"the live view logged no map: {logs['live_view']}"
    _assert_finished(folder / "run.mcap", logs["recorder"])
    return {"folder": folder, "logs": logs}


def _assert_finished(path: Path, log: str) -> None:
    """The recorder ended the file (its footer is there); else fail with the recorder's log,
    which says whether it was killed or why its shutdown stopped before finishing the file."""
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    with path.open("rb") as stream:
        try:
            make_reader(stream).get_summary()
        except McapError as exc:
            raise AssertionError(f"{path.name} is unfinished ({exc}); the recorder printed:\n{log}") from exc


def test_every_recorded_frame_resolves_through_the_recorded_transforms(recorded_run: dict[str, Any]) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    parents: dict[str, str] = {}
    frames: dict[str, set[str]] = {}
    markers = 0
    with (recorded_run["folder"] / "run.mcap").open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages():
            if channel.topic in ("/tf", "/tf_static"):
                for t in msg.transforms:
                    parents[t.child_frame_id] = t.header.frame_id
            elif channel.topic == "/scene_graph/markers":
                for marker in msg.markers:
                    frames.setdefault(channel.topic, set()).add(marker.header.frame_id)
                    markers += 1
            else:
                frames.setdefault(channel.topic, set()).add(msg.header.frame_id)
    log = recorded_run["logs"]["recorder"]
    assert {"/tf", "/tf_static", "/odom", "/rgb", "/depth", "/camera_info", "/scene_graph/markers"} <= set(
        frames
    ) | {
        "/tf",
        "/tf_static",
    }, log
    assert parents.get("odom") == "map", "map -> odom is not on /tf_static"
    assert markers > 1, "no scene-graph markers recorded"
    for topic, used in frames.items():
        for frame in used:
            assert _resolves(frame, parents, "map"), (
                f"{topic}: frame {frame!r} does not reach map via {parents}"
            )


def test_camera_topics_are_throttled_together(recorded_run: dict[str, Any]) -> None:
    from mcap.reader import make_reader

    with (recorded_run["folder"] / "run.mcap").open("rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None and summary.statistics is not None
    counts = {summary.channels[cid].topic: n for cid, n in summary.statistics.channel_message_counts.items()}
    # 5 Hz odometry, camera topics kept once per simulated second
    assert counts["/depth"] <= counts["/odom"] / 3, counts
    assert abs(counts["/depth"] - counts["/camera_info"]) <= 1 and abs(counts["/depth"] - counts["/rgb"]) <= 1


def test_the_live_view_recording_holds_the_search_entities(recorded_run: dict[str, Any]) -> None:
    from rerun.chunk import RrdReader

    reader = RrdReader(recorded_run["folder"] / "run.rrd")
    paths = {chunk.entity_path for chunk in reader.stream()}
    expected = {
        "/world/map", "/world/robot", "/world/trajectory", "/world/camera", "/world/camera/rgb",
        "/world/camera/depth", "/world/camera/instances", "/world/frontiers",
    }  # fmt: skip
    assert expected <= paths, (sorted(paths), recorded_run["logs"]["live_view"])
    assert paths & {"/world/graph/objects", "/world/graph/containers"}, sorted(paths)
