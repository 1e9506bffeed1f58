"""The live view node in-process: what it draws of the map."""

from __future__ import annotations

from pathlib import Path

import pytest
from nav_msgs.msg import OccupancyGrid
from rclpy.parameter import Parameter

pytestmark = pytest.mark.ros


def _grid(value: int) -> OccupancyGrid:
    msg = OccupancyGrid()
    msg.header.frame_id = "map"
    msg.info.width, msg.info.height, msg.info.resolution = 8, 6, 0.05
    msg.data = [value] * 48
    return msg


def test_an_unknown_map_does_not_delay_the_first_known_one(tmp_path: Path) -> None:
    """The planner publishes all-unknown maps until its first depth frame; the first known map
    must be drawn at once, not a map period later (a short run would end with no map)."""
    import rclpy
    from rerun.chunk import RrdReader

    from sg_search.ros.live_view import LiveView

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = LiveView(
            context=context,
            parameter_overrides=[
                Parameter("output", value=str(tmp_path / "run.rrd")),
                Parameter("period_s", value=3600.0),  # only the explicit calls below log
            ],
        )
        node._on_map(_grid(-1))
        node.log_once()
        node._on_map(_grid(0))
        node.log_once()
        assert "map" not in node._latest, "the known map waits for the next map period"
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    paths = {chunk.entity_path for chunk in RrdReader(tmp_path / "run.rrd").stream()}
    assert "/world/map" in paths, sorted(paths)
