from __future__ import annotations

from dataclasses import replace

import pytest

from sg_search.scene_graph import Affordance, Box3D, EdgeKind, NodeState, SceneGraph
from sg_search.scene_graph.observations import (
    IntegrationParams,
    ObjectInstance,
    current_unit,
    integrate_instances,
    is_a,
    seen_within_reach,
)

PARAMS = IntegrationParams(openable_categories=("fridge", "nightstand", "cabinet"))


def _inst(i: str, cat: str, xyz: tuple[float, float, float], conf: float = 0.9) -> ObjectInstance:
    return ObjectInstance(i, cat, conf, xyz)


def test_instances_get_room_and_container_parents(two_rooms: SceneGraph) -> None:
    integrate_instances(
        two_rooms,
        1,
        [
            _inst("p", "passports", (7.5, 0.5, 0.2)),
            _inst("m", "mug", (7.5, 0.5, 0.62)),
            _inst("s", "shoe", (2.0, 1.0, 0.05)),
        ],
        params=PARAMS,
    )
    passport = two_rooms.node("p")
    assert passport.category == "passport"
    assert passport.room_id == "bedroom_0" and passport.parent_id == "nightstand_0"
    relations = {(e.source, e.relation) for e in two_rooms.edges(EdgeKind.SPATIAL)}
    assert ("p", "inside") in relations and ("m", "on") in relations
    assert two_rooms.node("s").parent_id == "kitchen_0"


def test_one_frame_is_one_sequence_number_and_frame_ids_are_bounded(two_rooms: SceneGraph) -> None:
    two_rooms.max_frame_ids = 3
    for frame in range(1, 6):
        before = two_rooms.sequence
        integrate_instances(
            two_rooms,
            frame,
            [_inst("a", "mug", (1.0, 1.0, 0.5)), _inst("b", "cup", (1.5, 1.0, 0.5))],
            params=PARAMS,
        )
        assert two_rooms.sequence == before + 1
    assert two_rooms.node("a").frame_ids == (3, 4, 5)


def test_the_base_stays_where_it_sees_an_object_within_reach(two_rooms: SceneGraph) -> None:
    """A search ends where the base stands if it saw the object there in the newest frame and
    stands within reach; not for an object seen earlier only, one out of reach, or a container."""
    box = Box3D((6.0, 0.5, 0.4), (0.6, 0.5, 0.8))
    cabinet = ObjectInstance("c", "cabinet", 0.9, box.center, box)
    passport = _inst("p", "passport", (7.5, 0.5, 0.2))
    integrate_instances(two_rooms, 1, [passport, cabinet], params=PARAMS)
    integrate_instances(two_rooms, 2, [_inst("m", "mug", (6.0, 2.0, 0.5))], params=PARAMS)
    assert seen_within_reach(two_rooms, two_rooms.node("m"), (6.5, 2.0), 0.9)
    assert not seen_within_reach(two_rooms, two_rooms.node("m"), (7.0, 2.0), 0.9)  # 1 m away
    assert not seen_within_reach(two_rooms, two_rooms.node("p"), (7.0, 0.5), 0.9)  # not in frame 2
    integrate_instances(two_rooms, 3, [passport, cabinet], params=PARAMS)
    assert seen_within_reach(two_rooms, two_rooms.node("p"), (7.0, 0.5), 0.9)
    assert not seen_within_reach(two_rooms, two_rooms.node("c"), (6.5, 0.5), 0.9)  # it opens


def test_moving_object_changes_relation(two_rooms: SceneGraph) -> None:
    integrate_instances(two_rooms, 1, [_inst("m", "mug", (7.5, 0.5, 0.62))], params=PARAMS)
    integrate_instances(two_rooms, 2, [_inst("m", "mug", (7.5, 0.5, 0.2))], params=PARAMS)
    spatial = [e for e in two_rooms.edges(EdgeKind.SPATIAL) if e.source == "m"]
    assert [e.relation for e in spatial] == ["inside"]
    integrate_instances(two_rooms, 3, [_inst("m", "mug", (2.0, 2.0, 0.5))], params=PARAMS)
    assert [e for e in two_rooms.edges(EdgeKind.SPATIAL) if e.source == "m"] == []
    assert two_rooms.node("m").parent_id == "kitchen_0"


def test_openable_category_becomes_closed_container(two_rooms: SceneGraph) -> None:
    box = Box3D((1.0, 0.5, 0.45), (0.6, 0.5, 0.9))
    integrate_instances(two_rooms, 1, [ObjectInstance("c", "Cabinets", 0.8, box.center, box)], params=PARAMS)
    cabinet = two_rooms.node("c")
    assert cabinet.kind == "container" and cabinet.state == NodeState.CLOSED
    assert cabinet.affordances & Affordance.OPENABLE


def test_bad_instance_leaves_graph_unchanged(two_rooms: SceneGraph) -> None:
    before = (two_rooms.sequence, len(two_rooms))
    with pytest.raises(ValueError, match=r"'bad'.*confidence"):
        integrate_instances(
            two_rooms, 1, [_inst("ok", "mug", (1, 1, 1)), _inst("bad", "mug", (1, 1, 1), 3.0)]
        )
    with pytest.raises(ValueError, match=r"'nan'.*not finite"):
        integrate_instances(two_rooms, 1, [_inst("nan", "mug", (float("nan"), 1, 1))])
    with pytest.raises(ValueError, match="collides with a room"):
        integrate_instances(
            two_rooms, 1, [_inst("ok", "mug", (1, 1, 1)), _inst("kitchen_0", "mug", (1, 1, 1))]
        )
    assert (two_rooms.sequence, len(two_rooms)) == before


def test_removed_instances_leave_the_graph(two_rooms: SceneGraph) -> None:
    integrate_instances(two_rooms, 1, [_inst("a", "mug", (1.0, 1.0, 0.5))])
    result = integrate_instances(two_rooms, 2, [], removed_instance_ids=["a", "kitchen_0"])
    assert result.removed == ["a"]
    assert "a" not in two_rooms and "kitchen_0" in two_rooms


def test_two_overlapping_containers_never_hold_each_other() -> None:
    from sg_search.scene_graph import Box3D, SceneGraph
    from sg_search.scene_graph.observations import IntegrationParams, ObjectInstance, integrate_instances

    params = IntegrationParams(openable_categories=("cabinet",))
    graph = SceneGraph()
    box = Box3D((0.0, 0.0, 0.5), (1.0, 1.0, 1.0))
    integrate_instances(graph, 1, [ObjectInstance("a", "cabinet", 0.9, (0.1, 0.0, 0.5), box)], params=params)
    integrate_instances(graph, 2, [ObjectInstance("b", "cabinet", 0.9, (0.0, 0.1, 0.5), box)], params=params)
    integrate_instances(graph, 3, [ObjectInstance("a", "cabinet", 0.9, (0.1, 0.0, 0.5), box)], params=params)
    assert graph.node("b").parent_id == "a" and graph.node("a").parent_id != "b"
    assert graph.remove_node("a") and "b" not in graph  # removal ends (no cycle to recurse in)


def test_compounds_inherit_what_their_head_noun_affords() -> None:
    graph = SceneGraph()
    params = IntegrationParams(openable_categories=("cabinet",), receptacle_categories=("table",))
    seen = [
        ObjectInstance("a", "bottom cabinet", 0.9, (0.0, 0.0, 0.4)),
        ObjectInstance("b", "kitchen cabinet", 0.9, (2.0, 0.0, 0.4)),
        ObjectInstance("c", "coffee table", 0.9, (4.0, 0.0, 0.4)),
        ObjectInstance("d", "table lamp", 0.9, (6.0, 0.0, 0.4)),
        ObjectInstance("e", "cabinetry", 0.9, (8.0, 0.0, 0.4)),
    ]
    integrate_instances(graph, 1, seen, params=params)
    kinds = {i: (graph.get(i).kind, graph.get(i).state) for i in "abcde"}  # type: ignore[union-attr]
    assert kinds["a"] == kinds["b"] == ("container", NodeState.CLOSED)
    assert kinds["c"][0] == "container" and kinds["d"][0] == "object" and kinds["e"][0] == "object"
    assert is_a("pedestal sink", ("sink",)) and not is_a("sinkhole", ("sink",))


def test_an_opened_container_seen_anew_is_not_closed_again() -> None:
    def fridge(instance_id: str, x: float, y: float, width: float) -> ObjectInstance:
        return ObjectInstance(
            instance_id, "fridge", 0.9, (x, y, 0.9), bbox=Box3D((x, y, 0.9), (width, width, 1.8))
        )

    graph = SceneGraph()
    params = IntegrationParams(openable_categories=("fridge",))
    integrate_instances(graph, 1, [fridge("f1", 1.0, 1.0, 0.7)], params=params)
    graph.upsert_node(replace(graph.node("f1"), state=NodeState.OPEN))
    door_open, far = fridge("f2", 1.2, 0.7, 1.2), fridge("f3", 5.0, 1.0, 0.7)
    integrate_instances(graph, 2, [door_open, far], params=params)
    assert graph.node("f2").state == NodeState.OPEN and graph.node("f3").state == NodeState.CLOSED
    # searched and closed again (EXPLORED), then reported anew in its closed shape: still searched
    graph.upsert_node(replace(graph.node("f2"), state=NodeState.EXPLORED))
    integrate_instances(graph, 3, [fridge("f4", 1.0, 1.0, 0.7)], params=params)
    assert graph.node("f4").state == NodeState.EXPLORED


def test_an_opened_container_that_perception_merges_away_stays_opened() -> None:
    """Perception merged the opened fridge into its open-door twin, whose centre lay inside the
    fridge's box: removing the fridge removed the twin with it, the twin came back closed (a
    demo's report showed the fridge it had opened as never opened, and a search could open it
    again) and the tomato inside vanished from the graph until perception reported it again."""

    def fridge(instance_id: str, z: float) -> ObjectInstance:
        return ObjectInstance(
            instance_id, "fridge", 0.9, (9.6, -2.3, z), bbox=Box3D((9.6, -2.3, z), (1.0, 0.8, 1.8))
        )

    graph = SceneGraph()
    params = IntegrationParams(openable_categories=("fridge",))
    integrate_instances(graph, 1, [fridge("obj_1", 0.9)], params=params)
    graph.upsert_node(replace(graph.node("obj_1"), state=NodeState.OPEN))
    tomato = ObjectInstance("obj_10", "beefsteak tomato", 0.9, (9.7, -2.3, 0.1))
    integrate_instances(graph, 2, [fridge("obj_9", 0.73), tomato], params=params)  # its open-door shape
    assert graph.node("obj_9").state == NodeState.OPEN and graph.node("obj_9").parent_id == "obj_1"
    assert graph.node("obj_10").parent_id == "obj_1"
    integrate_instances(graph, 3, [fridge("obj_9", 0.9)], ["obj_1"], params=params)  # merged away
    assert graph.get("obj_1") is None and graph.node("obj_9").state == NodeState.OPEN
    assert graph.node("obj_10").parent_id == ""  # not seen in this frame: still in the graph
    integrate_instances(graph, 4, [fridge("obj_12", 0.9)], ["obj_9"], params=params)  # under a new id
    assert graph.node("obj_12").state == NodeState.OPEN
    integrate_instances(graph, 5, [tomato], params=params)
    assert graph.node("obj_10").parent_id == "obj_12"


def test_a_chosen_container_merged_away_before_its_open_is_the_unit_now_around_it() -> None:
    """A demo's reasoner chose fridge obj_2; perception merged it into obj_5 while the robot
    drove there, and the open's state went to a node no longer in the graph (its report drew
    the fridge as never opened): the state belongs on the unit now around obj_2's centre."""
    graph = SceneGraph()
    box = Box3D((9.6, -2.3, 0.9), (1.0, 0.8, 1.8))
    integrate_instances(
        graph, 1, [ObjectInstance("obj_2", "fridge", 0.9, box.center, bbox=box)], params=PARAMS
    )
    chosen = graph.node("obj_2")
    assert current_unit(graph, chosen) == chosen
    shifted = Box3D((9.75, -2.3, 0.8), (1.1, 0.8, 1.6))
    merged = ObjectInstance("obj_5", "fridge", 0.9, shifted.center, bbox=shifted)
    integrate_instances(graph, 2, [merged], ["obj_2"], params=PARAMS)
    assert graph.get("obj_2") is None
    now = current_unit(graph, chosen)
    assert now is not None and now.id == "obj_5"
    elsewhere = replace(chosen, position=(3.0, 1.0, 0.9), bbox=Box3D((3.0, 1.0, 0.9), (1.0, 0.8, 1.8)))
    assert current_unit(graph, elsewhere) is None
    assert current_unit(graph, replace(chosen, category="cabinet")) is None
