"""The Habitat bridge: its motion and metric functions always; the node itself only where
habitat-sim is installed (it has no wheel for this project's Python) and a dataset is named."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from sg_search.habitat.convert import (
    position_to_ros,
    rotation_to_ros,
    semantic_to_instances,
    stable_lookup,
    yaw_of,
)
from sg_search.habitat.motion import objectnav_outcome, step_target, turned


def test_a_step_follows_the_heading_and_a_left_turn_is_a_ros_left_turn() -> None:
    facing_minus_z = np.array([0.0, 0.0, 0.0, 1.0])  # Habitat's default: looking along -Z
    assert step_target([1.0, 0.2, 1.0], facing_minus_z, 0.25) == pytest.approx([1.0, 0.2, 0.75])
    assert position_to_ros([0.0, 0.0, -0.25]) == pytest.approx([0.25, 0.0, 0.0])  # -Z is ROS +x: forward
    left = turned(facing_minus_z, math.radians(30))
    assert yaw_of(rotation_to_ros(left)) == pytest.approx(math.radians(30))
    ahead = position_to_ros(step_target([0.0, 0.0, 0.0], left, 1.0))
    assert math.atan2(ahead[1], ahead[0]) == pytest.approx(math.radians(30))


def test_objectnav_outcome() -> None:
    found = objectnav_outcome(start_to_goal=5.0, end_to_goal=0.6, travelled=8.0)
    assert (
        found.success
        and found.spl == pytest.approx(5 / 8)
        and found.soft_spl == pytest.approx((1 - 0.6 / 5) * 5 / 8)
    )
    missed = objectnav_outcome(start_to_goal=5.0, end_to_goal=2.0, travelled=4.0)
    assert not missed.success and missed.spl == 0.0 and missed.soft_spl == pytest.approx(0.6)
    assert not objectnav_outcome(5.0, math.inf, 3.0).success


def test_instance_ids_stay_the_same_across_frames() -> None:
    categories = {7: "chair", 40: "bed", 900: "sofa"}
    lookup = stable_lookup(categories)
    a, table_a = semantic_to_instances(np.array([[40, 40], [0, 900]], dtype=np.uint32), categories, lookup)
    b, table_b = semantic_to_instances(np.array([[900, 7], [7, 5]], dtype=np.uint32), categories, lookup)
    assert a[1, 1] == b[0, 0] == lookup[900] and b[1, 1] == 0  # unknown id 5 is no instance
    assert table_a[lookup[40]] == ("habitat_40", "bed") and table_b[lookup[7]] == ("habitat_7", "chair")


def test_bridge_node_against_a_real_habitat_scene() -> None:
    pytest.importorskip(
        "habitat_sim", reason="habitat-sim is not installed (no wheel for this Python; README)"
    )
    episodes = os.environ.get("SG_SEARCH_HABITAT_EPISODES", "")
    if not episodes:
        pytest.skip("set SG_SEARCH_HABITAT_EPISODES (and SG_SEARCH_HABITAT_SCENES) to an ObjectNav dataset")
    import rclpy
    from rclpy.parameter import Parameter

    from sg_search.ros.habitat_bridge import HabitatBridge

    rclpy.init()
    try:
        node = HabitatBridge(
            parameter_overrides=[
                Parameter("episodes_file", value=episodes),
                Parameter("scenes_dir", value=os.environ.get("SG_SEARCH_HABITAT_SCENES", "")),
            ]
        )
        start = node.sim.get_agent(0).get_state().position.copy()
        node._move(1.0, 0.0)
        moved = node.sim.get_agent(0).get_state().position
        assert 0.0 < float(np.linalg.norm(np.asarray(moved) - start)) <= 1.0 + 1e-6
        assert math.isfinite(node.start_to_goal) and node.categories
        node.destroy_node()
    finally:
        rclpy.shutdown()
