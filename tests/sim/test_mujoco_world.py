"""The MuJoCo world renders for real (Mesa on the CPU): geometry, containers, skills, errors."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from sg_search.bench.sim import backprojection_errors, frame_digest
from sg_search.cli import main
from sg_search.sim.episodes import Episode, make_episodes
from sg_search.sim.metrics import EpisodeRun, distance_to_success, soft_spl, spl, target_found
from sg_search.sim.mujoco.mjcf import SmallObject
from sg_search.sim.mujoco.scene import (
    MIN_START_TO_TARGET_M,
    TARGET_ID,
    episode_world,
    facing_viewpoint,
    layout_for,
    nearest_free,
    solvable,
)
from sg_search.sim.mujoco.world import CameraConfig, SimError, SimWorld, WrongSideError

FRIDGE = "kitchen_0/fridge_0"


@pytest.fixture(scope="module")
def world() -> SimWorld:
    layout = layout_for("Rs_int", 0)
    with SimWorld(
        layout, [SmallObject("target", "milk carton", "inside", FRIDGE)], CameraConfig(160, 120)
    ) as w:
        yield w


def face(world: SimWorld, node_id: str, gap: float = 0.8) -> None:
    view = facing_viewpoint(world, node_id, gaps=(gap,))
    assert view is not None
    world.set_pose(*view[:3], tilt=view[3])


def test_a_closed_container_hides_its_content_and_open_shows_it(world: SimWorld) -> None:
    face(world, FRIDGE)
    world.set_open(FRIDGE, False)
    frame = world.render()
    assert world.visible_pixels(FRIDGE, frame) > 1000 and world.visible_pixels("target", frame) == 0
    world.set_open(FRIDGE, True)
    assert world.is_open(FRIDGE) and world.visible_pixels("target") > 20
    world.set_open(FRIDGE, False)
    assert world.visible_pixels("target") == 0


def test_depth_back_projects_onto_the_true_surfaces(world: SimWorld) -> None:
    face(world, FRIDGE, gap=1.5)
    frame = world.render()
    f = 60 / math.tan(math.radians(30))
    assert frame.intrinsics == pytest.approx((f, f, 79.5, 59.5))
    assert frame.depth.dtype == np.float32 and frame.rgb.shape == (120, 160, 3)
    errors = backprojection_errors(world, frame, stride=1)
    assert len(errors) > 0.5 * frame.depth.size
    assert np.median(errors) < 1e-3 and np.percentile(errors, 95) < 1e-2
    rotation = frame.T_map_camera[:3, :3]
    assert np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-9)
    assert frame.T_map_camera[2, 3] == pytest.approx(0.9)


def test_instances_name_scene_graph_nodes_and_images_repeat(world: SimWorld) -> None:
    face(world, FRIDGE)
    first, second = world.render(), world.render()
    assert frame_digest(first) == frame_digest(second)
    seen = {int(i) for i in np.unique(first.instance)} - {0}
    assert seen and all(i in first.instances for i in seen)
    assert first.instances[world.instance_id[FRIDGE]] == (FRIDGE, "fridge")


def test_refused_skills_say_why_and_change_nothing(world: SimWorld) -> None:
    face(world, FRIDGE, gap=2.5)
    with pytest.raises(SimError, match=r"m away; reach is 1\.00 m"):
        world.set_open(FRIDGE, True)
    assert not world.is_open(FRIDGE)
    sofa = next(f.furniture_id for f in world.layout.furniture if f.category == "sofa")
    with pytest.raises(SimError, match="is not openable"):
        world.set_open(sofa, True)
    with pytest.raises(SimError, match="does not exist"):
        world.set_open("garage_9/fridge_0", True)
    pose = world.pose
    with pytest.raises(SimError, match="finite"):
        world.step_velocity(float("nan"), 0.0, 0.1)
    with pytest.raises(SimError, match="unknown action"):
        world.discrete("jump")
    assert world.pose == pose


def test_inspect_points_the_camera_at_the_node(world: SimWorld) -> None:
    x, y = nearest_free(world, *world.layout.room("kitchen_0").center)
    world.set_pose(x, y, 0.0)
    world.look_at(FRIDGE)
    frame = world.render()
    h, w = frame.instance.shape
    assert frame.instance[h // 2, w // 2] == world.instance_id[FRIDGE]
    with pytest.raises(SimError, match="no body"):
        world.look_at("nowhere_0/box_0")


def test_the_base_turns_in_discrete_steps_and_stops_at_walls(world: SimWorld) -> None:
    x, y = nearest_free(world, *world.layout.room("bathroom_0").center)
    world.set_pose(x, y, 0.0)
    assert world.discrete("turn_left") and world.pose[2] == pytest.approx(math.radians(30))
    for _ in range(200):  # drive at the wall; it must stop on free space
        world.step_velocity(0.5, 0.0, 0.1)
    assert world.is_free(world.pose[0], world.pose[1])
    assert not world.move(0.25, 0.0)


def test_sim_render_writes_the_views(tmp_path: Path) -> None:
    assert (
        main(
            ["sim", "render", "--scene", "Rs_int", "--out", str(tmp_path), "--width", "80", "--height", "60"]
        )
        == 0
    )
    names = {p.name for p in tmp_path.iterdir()}
    assert {
        "rgb.png",
        "depth_mm.png",
        "instance.png",
        "instances.json",
        "camera.json",
        "topdown.png",
    } <= names
    assert (
        main(["sim", "render", "--scene", "Rs_int", "--out", str(tmp_path), "--pose", "-50", "0", "0"]) == 2
    )


def test_metrics_follow_the_objectnav_definitions(world: SimWorld) -> None:
    assert spl(True, 5.0, 10.0) == 0.5 and spl(False, 5.0, 5.0) == 0.0 and spl(True, 5.0, 4.0) == 1.0
    assert soft_spl(5.0, 10.0, 4.0, 1.0) == pytest.approx(0.75 * 0.5)
    assert soft_spl(5.0, 10.0, 4.0, 8.0) == 0.0
    face(world, FRIDGE)
    world.set_open(FRIDGE, False)
    assert not target_found(world, world.render(), "target")
    world.set_open(FRIDGE, True)
    assert target_found(world, world.render(), "target", within_m=2.0)
    assert not target_found(world, world.render(), "target", within_m=0.3)
    world.set_open(FRIDGE, False)


def test_an_episode_run_counts_what_the_agent_did(world: SimWorld) -> None:
    x, y = nearest_free(world, *world.layout.room("kitchen_0").center)
    world.set_pose(x, y, 0.0)
    run = EpisodeRun(world, "target")
    assert 0.0 <= run.start_to_goal < 10.0
    view = facing_viewpoint(world, FRIDGE, gaps=(0.5,))  # the fridge's middle is then < 1 m away
    assert view is not None
    world.move(0.0, 0.5)  # one turn, then drive straight to the viewpoint
    steps = 0
    while math.dist(world.pose[:2], view[:2]) > 0.05 and steps < 100:
        heading = math.atan2(view[1] - world.pose[1], view[0] - world.pose[0])
        world.move(min(0.25, math.dist(world.pose[:2], view[:2])), heading - world.pose[2])
        steps += 1
    world.set_pose(*world.pose[:2], view[2], tilt=view[3])
    world.set_open(FRIDGE, True)
    result = run.result()
    world.set_open(FRIDGE, False)
    assert result["success"] == 1.0 and result["opened"] == 1.0
    assert result["steps"] == steps + 1 and result["path_m"] > 0.0
    assert 0.0 < result["SPL"] <= 1.0 and result["SoftSPL"] == pytest.approx(result["SPL"])


def test_a_drawer_slides_out_with_its_content() -> None:
    layout = layout_for("house_single_floor", 0)
    unit = "utility_room_0/bottom_cabinet_no_top_3"
    spoon = SmallObject("spoon", "spoon", "inside", unit, size=(0.15, 0.05, 0.03))
    with SimWorld(layout, [spoon], CameraConfig(160, 120, height_m=1.3)) as w:  # an HSR-height head
        view = facing_viewpoint(w, unit, gaps=(0.7, 0.8, 0.9))
        assert view is not None
        w.set_pose(*view[:3], tilt=0.8)
        before = np.array(w.data.body("spoon").xpos)
        assert w.visible_pixels("spoon") == 0
        w.set_open(unit, True)
        assert w.is_open(unit) and w.visible_pixels("spoon") > 20
        moved = np.array(w.data.body("spoon").xpos) - before
        assert np.linalg.norm(moved[:2]) == pytest.approx(0.8 * (0.6 - 2 * 0.02), abs=1e-6)


def test_the_head_rises_to_see_into_an_open_drawer_and_comes_down_to_drive() -> None:
    """From the robot's 0.9 m, the front of an open top drawer hides what lies in it; the
    head lift (as the HSR's torso) looks over it."""
    layout = layout_for("house_single_floor", 0)
    unit = "utility_room_0/bottom_cabinet_no_top_3"
    spoon = SmallObject("spoon", "spoon", "inside", unit, size=(0.15, 0.05, 0.03))
    with SimWorld(layout, [spoon], CameraConfig(160, 120, height_m=0.9)) as w:
        view = facing_viewpoint(w, unit, gaps=(0.7, 0.8, 0.9))
        assert view is not None
        w.set_pose(*view[:3])
        w.set_open(unit, True)
        target = tuple(float(v) for v in w.data.body("spoon").xpos)
        w.aim_head(target, max_lift_m=0.0, min_down_rad=0.79, min_tilt_rad=0.0)
        assert w.lift == 0.0 and w.visible_pixels("spoon") == 0
        w.aim_head(target, max_lift_m=0.4, min_down_rad=0.79, min_tilt_rad=0.0)
        assert 0.0 < w.lift <= 0.4 and w.visible_pixels("spoon") > 20
        assert w.camera_pose()[2, 3] == pytest.approx(0.9 + w.lift)
        w.move(0.0, 0.5)  # turning in place keeps the head up
        assert w.lift > 0.0
        w.move(-0.25, 0.0)
        assert w.lift == 0.0 and w.camera_pose()[2, 3] == pytest.approx(0.9)


def test_a_velocity_command_into_a_wall_slides_along_it(world: SimWorld) -> None:
    x, y = nearest_free(world, *world.layout.room("bathroom_0").center)
    world.set_pose(x, y, math.radians(80))  # nearly straight at the +y wall, 1.3 m away
    for _ in range(100):
        world.step_velocity(0.5, 0.0, 0.1)
    # Straight on, the base would stop at the wall ~0.23 m further in x; sliding carries it on.
    assert world.pose[0] - x > 0.45 and world.pose[1] - y > 1.0
    assert world.is_free(*world.pose[:2])


def test_an_object_on_deep_furniture_lies_on_its_free_side_within_reach_of_the_floor() -> None:
    """A double bed with another bed at its foot: at its centre a shirt has no floor within
    ObjectNav's 1 m (an episode no one can succeed in); it lies near the free side instead."""
    layout = layout_for("hotel_suite_large", 0)
    bed = "bedroom_0/bed_0"
    item = next(f for f in layout.furniture if f.furniture_id == bed)
    with SimWorld(layout, [SmallObject("shirt", "shirt", "ontop", bed)], CameraConfig(80, 60)) as w:
        shirt = np.array(w.data.body("shirt").xpos)
        assert distance_to_success(w, "shirt") < math.inf
    half = np.array(item.size[:2]) / 2
    assert np.all(np.abs(shirt[:2] - np.array(item.center[:2])) <= half)  # still on the bed
    assert shirt[2] > item.center[2] + item.size[2] / 2  # on top of it


def test_an_episode_starts_where_the_base_can_drive() -> None:
    # restaurant_cafeteria's dining room centre lies between a table's chairs: its nearest free
    # cell is a pocket of four cells from which no move leaves (two train episodes pushed there
    # for their whole budget)
    layout = layout_for("restaurant_cafeteria", 0)
    with SimWorld(layout, [], CameraConfig(64, 48)) as world:
        x, y = nearest_free(world, *layout.room("dining_room_0").center)
        drives = 0
        for k in range(12):
            world.set_pose(x, y, k * math.pi / 6)
            drives += world.move(0.25, 0.0)
        assert drives >= 3


def test_an_episode_in_a_one_room_house_starts_outside_the_success_region() -> None:
    # gates_bedroom is one room: the start room is the target's, and an "in the room" target
    # lies at the room's centre, where the start used to be (two test episodes began on it)
    episode = Episode(
        "gates_bedroom", 0, "test", "typical", "backpack", "backpack.n.01", "inroom", "", "",
        "bedroom", "bedroom_0", "bedroom_0", "",
    )  # fmt: skip
    with episode_world(episode, CameraConfig(64, 48)) as world:
        target = np.asarray(world.data.body(TARGET_ID).xpos[:2])
        assert np.hypot(*(target - np.asarray(world.pose[:2]))) >= MIN_START_TO_TARGET_M
        assert 1.0 <= distance_to_success(world, TARGET_ID) < math.inf  # outside, and reachable


def test_an_object_on_a_room_floor_lies_beside_the_furniture_at_its_centre_and_can_be_seen() -> None:
    """Rs_int's bed covers its bedroom's centre, where an "in the room" object used to lie: inside
    the bed's box, seen from nowhere (val's sheet was searched for 996 actions). It now lies on
    the free floor nearest the centre, and a camera 1 m away that faces it sees it."""
    layout = layout_for("Rs_int", 0)
    room = layout.room("bedroom_0")
    cx, cy = room.center
    assert any(
        abs(cx - f.center[0]) < f.size[0] / 2 and abs(cy - f.center[1]) < f.size[1] / 2
        for f in layout.furniture
    )
    with SimWorld(
        layout, [SmallObject(TARGET_ID, "sheet", "inroom", "bedroom_0")], CameraConfig(160, 120)
    ) as world:
        tx, ty = (float(v) for v in world.data.body(TARGET_ID).xpos[:2])
        assert room.contains(tx, ty)
        for f in layout.furniture:  # the object's 0.1 m footprint clear of every piece
            assert (
                abs(tx - f.center[0]) >= f.size[0] / 2 + 0.05 or abs(ty - f.center[1]) >= f.size[1] / 2 + 0.05
            )
        x, y = nearest_free(world, tx, ty, away_from=((tx, ty), 1.0))
        world.set_pose(x, y, math.atan2(ty - y, tx - x), tilt=0.25)
        assert world.visible_pixels(TARGET_ID) > 20


@pytest.mark.parametrize(
    ("holder", "lift"), [("kitchen_0/furniture_sink_0", 0.4), ("living_room_0/bookcase_0", 0.0)]
)
def test_what_lies_inside_a_receptacle_without_a_door_can_be_seen(holder: str, lift: float) -> None:
    """A mug in a sink lies in its basin (seen over the rim from a raised head), a book in a
    bookcase on its shelf (seen from the front); neither is sealed in a solid box."""
    layout = layout_for("Rs_int", 0)
    with SimWorld(layout, [SmallObject("thing", "mug", "inside", holder)], CameraConfig(160, 120)) as w:
        view = facing_viewpoint(w, holder)
        assert view is not None
        x, y, yaw, _ = view
        w.set_pose(x, y, yaw)
        w.aim_head(tuple(float(v) for v in w.data.body("thing").xpos), lift, 0.79 if lift else 0.0)
        assert w.visible_pixels("thing") > 20
        with pytest.raises(SimError, match="is not openable"):
            w.set_open(holder, True)


def test_a_door_opens_only_from_in_front_of_it(world: SimWorld) -> None:
    """Within reach beside the fridge, past the corner of its front on the hinge side (behind
    the opened door) or behind the wall at its back, the base cannot open it; past the corner
    on the handle side it can."""
    item = next(f for f in world.layout.furniture if f.furniture_id == FRIDGE)
    nx, ny = world.spec.fronts[FRIDGE]
    depth = abs(nx) * item.size[0] + abs(ny) * item.size[1]
    width = abs(ny) * item.size[0] + abs(nx) * item.size[1]
    cx, cy = item.center[:2]
    behind = (cx - nx * (depth / 2 + 0.3), cy - ny * (depth / 2 + 0.3))
    beside = (cx - ny * (width / 2 + 0.3), cy + nx * (width / 2 + 0.3))
    ahead = (cx + nx * (depth / 2 + 0.4), cy + ny * (depth / 2 + 0.4))
    hx, hy = world.spec.hinge_sides[FRIDGE]
    past_hinge = (ahead[0] + hx * (width / 2 + 0.3), ahead[1] + hy * (width / 2 + 0.3))
    past_handle = (ahead[0] - hx * (width / 2 + 0.3), ahead[1] - hy * (width / 2 + 0.3))
    world.set_pose(*ahead, 0.0)
    world.set_open(FRIDGE, False)
    refusals = (
        (behind, "a wall stands between"),
        (beside, "not in front of it"),
        (past_hinge, "not in front of it"),
    )
    for (x, y), why in refusals:
        world.set_pose(x, y, 0.0)
        with pytest.raises(WrongSideError, match=why):
            world.set_open(FRIDGE, True)
        assert not world.is_open(FRIDGE)
    for x, y in (ahead, past_handle):
        world.set_pose(x, y, 0.0)
        world.set_open(FRIDGE, True)
        assert world.is_open(FRIDGE)
        world.set_open(FRIDGE, False)


def test_a_perceived_node_closes_what_its_open_opened_until_the_episode_resets(world: SimWorld) -> None:
    """A perceived node opens the container nearest its box; its close goes to that container
    wherever its box has moved since; an episode reset forgets the record (the next search may
    reuse the node id)."""
    face(world, FRIDGE)
    item = next(f for f in world.layout.furniture if f.furniture_id == FRIDGE)
    nowhere = (item.center[0], item.center[1], 50.0)  # above the house: no container is near
    assert world.set_open_for("obj_7", item.center, True) == FRIDGE and world.is_open(FRIDGE)
    assert world.set_open_for("obj_7", nowhere, False) == FRIDGE and not world.is_open(FRIDGE)
    assert world.set_open_for("obj_7", nowhere, False) == FRIDGE  # a retried close
    world.close_all()
    with pytest.raises(SimError, match="nothing openable"):
        world.set_open_for("obj_7", nowhere, False)


def test_an_open_door_hides_the_shelves_from_beside_it_not_from_within_the_front(world: SimWorld) -> None:
    """Why a container is opened from within the width of its front
    (:func:`~sg_search.planning.viewpoints.facing_square`): 0.45 m ahead of the fridge, the
    carton inside shows from the middle of the front, and not from 0.25 m past its edge on the
    hinge side, where the opened door stands between the camera and the shelves."""
    item = next(f for f in world.layout.furniture if f.furniture_id == FRIDGE)
    assert world.spec.fronts[FRIDGE] == (0.0, 1.0)  # the edge at x = 3.4 is the hinge side
    cx, cy, cz = item.center
    seen = {}
    y = cy + item.size[1] / 2 + 0.45
    for name, x in (("middle", cx), ("beside the hinge", cx + item.size[0] / 2 + 0.25)):
        world.set_pose(x, y, math.atan2(cy - y, cx - x), tilt=0.25, lift=0.0)
        if name == "middle":
            world.set_open(FRIDGE, True)  # from beside the hinge the simulator refuses to open it
        world.aim_head((cx, cy, cz), 0.4, 0.79)
        seen[name] = world.visible_pixels("target")
    world.set_pose(cx, y, 0.0)
    world.set_open(FRIDGE, False)
    assert seen["middle"] > 20 and seen["beside the hinge"] == 0, seen


def test_an_episode_whose_container_no_base_can_open_from_its_room_is_not_solvable() -> None:
    # val's Wainscott_0_int kitchen: a row of drawers, sinks, ovens and chairs closes off the
    # floor before some cabinets; the success regions are reachable (from behind), the fronts not
    def cereal_in(container_id: str) -> Episode:
        return Episode(
            "Wainscott_0_int", 0, "val", "typical", "box of cereal", "box__of__cereal.n.01", "inside",
            container_id.split("/")[1].rsplit("_", 1)[0], container_id, "kitchen", "kitchen_0",
            "dining_room_0", "putting_shopping_away",
        )  # fmt: skip

    # its front faces a pocket no way leads into
    drawers = cereal_in("kitchen_0/bottom_cabinet_no_top_6")
    # its front is reached only from the room behind the kitchen's west wall
    wall_cabinet = cereal_in("kitchen_0/top_cabinet_0")
    dishwasher = cereal_in("kitchen_0/dishwasher_0")
    for episode in (drawers, wall_cabinet):
        with episode_world(episode) as world:
            assert math.isfinite(distance_to_success(world, TARGET_ID))
        assert not solvable(episode)
    assert solvable(dishwasher)
    with episode_world(wall_cabinet) as world:  # its front, 0.2 m beyond the kitchen's west wall
        assert not world.layout.room("kitchen_0").contains(7.2, 2.3)
        with pytest.raises(WrongSideError, match="a wall stands between"):
            world.check_opens_from("kitchen_0/top_cabinet_0", (7.2, 2.3))


def test_an_episode_whose_success_region_is_out_of_reach_is_refused_and_the_rest_keep_their_order() -> None:
    # val's third draw puts a prawn in Wainscott_0's fridge, in a pocket behind a run of cabinets:
    # no free cell within 1 m of it is reachable from the start (ObjectNav keeps no such episode)
    drawn, _ = make_episodes("val", 4)
    assert drawn[2].scene == "Wainscott_0_int"
    with episode_world(drawn[2]) as world:
        assert math.isinf(distance_to_success(world, TARGET_ID))
    reachable = [e for e in drawn if solvable(e)]
    assert reachable == [drawn[0], drawn[1], drawn[3]]
    kept, refused = make_episodes("val", 3, keep=solvable)
    assert kept == reachable
    assert refused == 1 + make_episodes("val", 4)[1]  # the same draws: those not placed, and this one
