"""Which way a container opens, and where an opening skill takes hold of it."""

from __future__ import annotations

import math

import pytest

from sg_search.scene_graph.fronts import handle_pose, opening_front
from sg_search.scene_graph.model import Affordance, Box3D, Layer, SceneNode

KITCHEN = SceneNode("room_1", Layer.ROOM, "room", "kitchen", bbox=Box3D((3.0, 2.0, 1.25), (6.0, 4.0, 2.5)))


def container(x: float, y: float, affordances: Affordance = Affordance.OPENABLE) -> SceneNode:
    return SceneNode(
        "obj_1", Layer.OBJECT, "object", "fridge", (x, y, 0.9),
        Box3D((x, y, 0.9), (0.8, 0.6, 1.8)), room_id="room_1", affordances=affordances,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("x", "y", "front"),
    [(3.0, 0.35, (0.0, 1.0)), (3.0, 3.65, (0.0, -1.0)), (0.45, 2.0, (1.0, 0.0)), (5.55, 1.0, (-1.0, 0.0))],
)
def test_a_container_opens_away_from_the_nearest_edge_of_its_room(
    x: float, y: float, front: tuple[float, float]
) -> None:
    assert opening_front(container(x, y), KITCHEN) == front


def test_the_handle_is_on_the_front_face_facing_out() -> None:
    pose = handle_pose(container(3.0, 0.35), KITCHEN)
    assert pose is not None
    (hx, hy, hz), yaw = pose
    assert (hx, hy, hz) == pytest.approx((3.0, 0.65, 0.9)) and yaw == pytest.approx(math.pi / 2)


def test_no_front_without_a_room_box_or_for_what_does_not_open() -> None:
    assert opening_front(container(3.0, 0.35), None) is None
    assert opening_front(container(3.0, 0.35), SceneNode("room_2", Layer.ROOM, "room")) is None
    assert opening_front(container(3.0, 0.35, Affordance.RECEPTACLE), KITCHEN) is None
    assert handle_pose(container(3.0, 0.35), None) is None
