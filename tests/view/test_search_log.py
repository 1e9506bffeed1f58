"""The live view's core (no ROS): what goes into a recording, read back with Rerun's reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sg_search.mapping.grid import GridSpec
from sg_search.view import CameraFrame, SearchLog
from sg_search.view.rerun_log import KIND_COLOURS, MAP_COLOURS, known_window, occupancy_texture


def test_the_map_texture_puts_the_largest_y_in_its_first_row() -> None:
    states = np.full((4, 3), -1, dtype=np.int8)
    states[3, 0] = 100  # top row of the grid (largest y), left column
    states[0, 2] = 0  # bottom row, right column
    image = occupancy_texture(states)
    assert tuple(image[0, 0]) == MAP_COLOURS["occupied"]
    assert tuple(image[3, 2]) == MAP_COLOURS["free"]
    assert tuple(image[1, 1]) == MAP_COLOURS["unknown"]


def test_only_the_known_part_of_the_map_is_kept_with_a_margin() -> None:
    states = np.full((100, 200), -1, dtype=np.int8)
    assert known_window(states) is None
    states[40:50, 120:130] = 0
    rows, cols = known_window(states, margin=5)
    assert (rows.start, rows.stop, cols.start, cols.stop) == (35, 55, 115, 135)
    states[0, 0] = 100
    rows, cols = known_window(states, margin=5)
    assert (rows.start, cols.start) == (0, 0)


def test_instances_take_their_kind_colour_and_unknown_ids_are_background(tmp_path: Path) -> None:
    log = SearchLog.to_file(tmp_path / "run.rrd")
    instances = np.array([[0, 1, 7], [7, 9, 1]], dtype=np.int32)
    frame = CameraFrame(np.eye(4), (1.0, 1.0, 1.0, 1.0), instances=instances, instance_kinds={7: "container"})
    classes = log._instance_classes(frame)
    container = list(KIND_COLOURS).index("container") + 1
    assert classes.tolist() == [[0, 0, container], [container, 0, 0]]
    log.close()


def test_a_search_lands_in_the_rrd_under_the_documented_entities(tmp_path: Path) -> None:
    from rerun.chunk import RrdReader

    from sg_search.config import package_share
    from sg_search.scene_graph.prior import load_prior

    log = SearchLog.to_file(tmp_path / "run.rrd")
    spec = GridSpec(0.1, 50, 40, -2.0, -2.0)
    states = np.zeros(spec.shape, dtype=np.int8)
    log.set_time(1.5)
    log.robot(0.5, 0.5, 0.3)
    log.map(states, spec)
    log.graph(load_prior(package_share() / "config" / "demo" / "apartment.yaml"), target_id="fridge_0")
    log.frontiers([(1.0, 1.0)])
    depth = np.full((6, 8), 2.5, np.float32)
    log.camera(CameraFrame(np.eye(4), (4.0, 4.0, 4.0, 3.0), np.zeros((6, 8, 3), np.uint8), depth))
    log.target("fridge_0", (1.0, 2.0, 0.5), 0.8, "milk is kept cold")
    log.decision("step 1: open the fridge")
    log.close()
    paths = {chunk.entity_path for chunk in RrdReader(tmp_path / "run.rrd").stream()}
    assert {
        "/world/map", "/world/robot", "/world/trajectory", "/world/graph/rooms", "/world/graph/containers",
        "/world/graph/edges", "/world/frontiers", "/world/camera", "/world/camera/rgb", "/world/camera/depth",
        "/world/target", "/decisions",
    } <= paths  # fmt: skip
