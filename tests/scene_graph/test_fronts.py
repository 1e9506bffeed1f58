"""Which way a container opens, and where an opening skill takes hold of it."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from sg_search.scene_graph.fronts import (
    RefusedFronts,
    approach_distance,
    approach_face,
    handle_pose,
    opening_front,
    opening_fronts,
    standing_points,
)
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


def test_the_handle_is_on_the_face_it_opens_towards_facing_out() -> None:
    pose = handle_pose(container(3.0, 0.35), (0.0, 1.0))
    assert pose is not None
    (hx, hy, hz), yaw = pose
    assert (hx, hy, hz) == pytest.approx((3.0, 0.65, 0.9)) and yaw == pytest.approx(math.pi / 2)
    side = handle_pose(container(3.0, 0.35), (-1.0, 0.0))
    assert (
        side is not None and side[0] == pytest.approx((2.6, 0.35, 0.9)) and side[1] == pytest.approx(math.pi)
    )


def test_no_front_without_a_room_box_or_for_what_does_not_open() -> None:
    assert opening_front(container(3.0, 0.35), None) is None
    assert opening_front(container(3.0, 0.35), SceneNode("room_2", Layer.ROOM, "room")) is None
    assert opening_front(container(3.0, 0.35, Affordance.RECEPTACLE), KITCHEN) is None
    assert opening_fronts(container(3.0, 0.35, Affordance.RECEPTACLE), KITCHEN) == ()


def test_the_sides_are_ordered_by_the_nearest_edges_and_a_refused_one_is_left_out() -> None:
    """A fridge at (2, 0.35) of a 6 m x 4 m kitchen: nearest edge y = 0 (0.05 m off), then
    x = 0 (1.6), y = 4 (3.35), x = 6 (3.6): it opens towards +y, else +x, -y, -x. The base
    refused from in front of +y rules that side out; every side refused leaves none."""
    fridge, refused = container(2.0, 0.35), RefusedFronts()
    assert opening_fronts(fridge, KITCHEN) == ((0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (-1.0, 0.0))
    assert refused.refuse(fridge, (2.1, 1.2)) and refused.of("obj_1") == ((0.0, 1.0),)
    assert refused.refuse(fridge, (2.1, 1.3)) and refused.of("obj_1") == ((0.0, 1.0),)  # the same side
    assert opening_front(fridge, KITCHEN, refused.of("obj_1")) == (1.0, 0.0)
    assert refused.refuse(fridge, (3.0, 0.3)) and refused.refuse(fridge, (2.0, -0.5))
    assert not refused.refuse(fridge, (1.0, 0.4))  # the fourth side was the last
    assert opening_front(fridge, KITCHEN, refused.of("obj_1")) is None
    assert refused.of("obj_2") == ()


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
    assert face is not None and face.directions == ((-1.0, 0.0),) and face.centre == (2.0, 0.35, 0.9)
    above = approach_face(tomato, nodes.get, True, (2.1, 1.5))
    assert above is not None and above.directions == ((0.0, 1.0),)
    own = approach_face(fridge, nodes.get, False, (1.0, 0.8))
    assert own is not None and own.directions == ((0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (-1.0, 0.0))
    refused = approach_face(fridge, nodes.get, False, (1.0, 0.8), refused=((0.0, 1.0),))
    assert refused is not None and refused.directions[0] == (1.0, 0.0) and len(refused.directions) == 3
    assert approach_face(tomato, nodes.get, False, (1.0, 0.8)) is None
    assert approach_face(tomato, {"room_1": KITCHEN}.get, True, (1.0, 0.8)) is None


def test_a_container_is_as_far_as_where_the_base_would_stand_to_open_it() -> None:
    """The fridge at (2, 0.35) opens towards +y, else +x, -y, -x (above): the base stands at the
    middle reach circle (0.7 m) from its centre before each face it may open from, likeliest
    first (at least 0.25 m beyond the face: 0.65 m on x), less the sides it would not open
    from; the reasoner's distance is the way to the first of those points that has one,
    measured no further than that. A node that does not open is as far as its position."""
    fridge = container(2.0, 0.35)
    lookup = {"room_1": KITCHEN}.get
    points = standing_points(fridge, lookup, (0.6, 0.7, 0.8))
    flat = [v for point in points for v in point]
    assert flat == pytest.approx([2.0, 1.05, 2.7, 0.35, 2.0, -0.35, 1.3, 0.35])
    assert standing_points(fridge, lookup, (0.2, 0.3, 0.4))[1] == pytest.approx((2.65, 0.35))
    refused = standing_points(fridge, lookup, (0.6, 0.7, 0.8), refused=((0.0, 1.0), (1.0, 0.0)))
    assert [v for point in refused for v in point] == pytest.approx([2.0, -0.35, 1.3, 0.35])
    assert approach_distance([7.5, 1.0, 2.0]) == 7.5  # its back is nearer: the way round counts
    assert approach_distance([math.inf, 1.0]) == 1.0  # no way before the likeliest face
    assert approach_distance([math.inf, math.inf]) == math.inf
    measured: list[float] = []

    def measure() -> Iterator[float]:
        for way in (math.inf, 3.0, 1.0):
            measured.append(way)
            yield way

    assert approach_distance(measure()) == 3.0
    assert measured == [math.inf, 3.0]  # the faces after the first with a way are not measured
    shelf = container(2.0, 0.35, Affordance.RECEPTACLE)
    assert standing_points(shelf, lookup, (0.6, 0.7, 0.8)) == ((2.0, 0.35),)
