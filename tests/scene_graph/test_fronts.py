"""Which way a container opens, and where an opening skill takes hold of it."""

from __future__ import annotations

import math

import pytest

from sg_search.scene_graph.fronts import RefusedFronts, approach_face, handle_pose, opening_front
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


def test_a_refused_side_gives_way_to_the_next_nearest_edge_until_none_is_left() -> None:
    """A fridge at (2, 0.35) of a 6 m x 4 m kitchen: its back is estimated at the nearest edge
    (y = 0), so it opens towards +y. Refused from there, the next estimate turns away from the
    next nearest edge (x = 0, 1.6 m off), and so on; the refusals are the fridge's only."""
    fridge, refused = container(2.0, 0.35), RefusedFronts()
    assert refused.refuse(fridge, KITCHEN) and refused.of("obj_1") == ((0.0, 1.0),)
    assert opening_front(fridge, KITCHEN, refused.of("obj_1")) == (1.0, 0.0)
    pose = handle_pose(fridge, KITCHEN, refused.of("obj_1"))
    assert pose is not None and pose[0] == pytest.approx((2.4, 0.35, 0.9)) and pose[1] == pytest.approx(0.0)
    assert refused.refuse(fridge, KITCHEN) and refused.refuse(fridge, KITCHEN)
    assert not refused.refuse(fridge, KITCHEN)  # the fourth side was the last
    assert opening_front(fridge, KITCHEN, refused.of("obj_1")) is None
    assert refused.of("obj_2") == () and not refused.refuse(fridge, None)


def test_an_object_inside_a_container_is_approached_from_the_side_the_base_sees_it_from() -> None:
    """The tomato found inside the opened fridge: the base goes back to the side of the fridge
    it stands beyond now (it saw the tomato from there), not to the room box's estimate of the
    front; a container itself is approached from its estimated front, less the refused sides;
    an object on a surface, or whose container is unknown, has no face to keep to."""
    fridge = container(2.0, 0.35)  # x 1.6..2.4, y 0.05..0.65; estimated to open towards +y
    tomato = SceneNode(
        "obj_9", Layer.OBJECT, "object", "tomato", (2.0, 0.3, 0.1),
        Box3D((2.0, 0.3, 0.1), (0.1, 0.1, 0.1)), parent_id="obj_1", room_id="room_1",
    )  # fmt: skip
    nodes = {n.id: n for n in (KITCHEN, fridge, tomato)}
    face = approach_face(tomato, nodes.get, True, (1.0, 0.8))  # beyond the -x face more than the +y one
    assert face is not None and face.direction == (-1.0, 0.0) and face.centre == (2.0, 0.35, 0.9)
    above = approach_face(tomato, nodes.get, True, (2.1, 1.5))
    assert above is not None and above.direction == (0.0, 1.0)
    own = approach_face(fridge, nodes.get, False, (1.0, 0.8))
    assert own is not None and own.direction == (0.0, 1.0)
    refused = approach_face(fridge, nodes.get, False, (1.0, 0.8), refused=((0.0, 1.0),))
    assert refused is not None and refused.direction == (1.0, 0.0)
    assert approach_face(tomato, nodes.get, False, (1.0, 0.8)) is None
    assert approach_face(tomato, {"room_1": KITCHEN}.get, True, (1.0, 0.8)) is None
