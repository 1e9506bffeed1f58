from __future__ import annotations

import pytest

from sg_search.reasoning import SkillAffordance, actionable_candidates
from sg_search.scene_graph import Layer, SceneGraph
from sg_search.scene_graph.frontier_nodes import FrontierObservation, integrate_frontiers
from sg_search.scene_graph.invariants import check_invariants


def test_frontiers_replace_the_previous_set_and_are_actionable(two_rooms: SceneGraph) -> None:
    integrate_frontiers(
        two_rooms,
        [
            FrontierObservation("f1", (1.0, 3.9, 0.0), (1.0, 3.7, 0.0), 12, 0.6),
            FrontierObservation("f2", (9.5, 2.0, 0.0), (9.3, 2.0, 0.0), 8, 0.4),
        ],
    )
    check_invariants(two_rooms)
    f1, f2 = two_rooms.node("f1"), two_rooms.node("f2")
    assert (f1.layer, f1.room_id, f1.parent_id) == (Layer.REGION, "kitchen_0", "kitchen_0")
    assert (f2.room_id, f2.parent_id) == ("", "building_0")
    navigate = {
        c.node_id for c in actionable_candidates(two_rooms) if c.affordance == SkillAffordance.NAVIGATE
    }
    assert {"f1", "f2"} <= navigate
    removed = integrate_frontiers(two_rooms, [FrontierObservation("f2", (9.5, 2.0, 0.0), (9.3, 2.0, 0.0))])
    assert removed == ["f1"] and "f1" not in two_rooms
    check_invariants(two_rooms)


def test_bad_frontiers_change_nothing(two_rooms: SceneGraph) -> None:
    before = two_rooms.sequence
    good = FrontierObservation("f1", (1.0, 1.0, 0.0), (1.0, 1.0, 0.0))
    with pytest.raises(ValueError, match="duplicate"):
        integrate_frontiers(two_rooms, [good, good])
    with pytest.raises(ValueError, match="not finite"):
        integrate_frontiers(two_rooms, [FrontierObservation("f3", (float("inf"), 1.0, 0.0), (1.0, 1.0, 0.0))])
    with pytest.raises(ValueError, match="collides with a room"):
        integrate_frontiers(two_rooms, [FrontierObservation("kitchen_0", (1.0, 1.0, 0.0), (1.0, 1.0, 0.0))])
    assert two_rooms.sequence == before
