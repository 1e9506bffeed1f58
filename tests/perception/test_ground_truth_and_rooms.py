"""The ground-truth detector's noise model and room segmentation/naming on synthetic maps."""

from __future__ import annotations

import numpy as np
import pytest

from sg_search.mapping.grid import GridSpec
from sg_search.perception.backproject import mask_voxels
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import RgbdImage
from sg_search.perception.ground_truth import GroundTruthDetector, NoiseParams
from sg_search.perception.pipeline import PerceptionPipeline
from sg_search.perception.room_segmentation import name_rooms, room_match_fraction, segment_rooms


def _image() -> RgbdImage:
    instance = np.zeros((60, 80), dtype=np.int32)
    instance[:, :] = 1  # walls
    instance[10:30, 10:30] = 2
    instance[35:55, 40:70] = 3
    table = {1: ("house", "structure"), 2: ("kitchen_0/fridge_0", "fridge"), 3: ("bed_0", "Beds")}
    return RgbdImage(np.zeros((60, 80, 3), np.uint8), np.ones((60, 80), np.float32), instance, table)


def test_clean_detections_are_the_instances() -> None:
    detections = GroundTruthDetector().detect(_image())
    assert {(d.source, d.category, int(d.mask.sum())) for d in detections} == {
        ("kitchen_0/fridge_0", "fridge", 400),
        ("bed_0", "bed", 600),
    }
    assert [d.category for d in GroundTruthDetector().detect(_image(), ["bed"])] == ["bed"]


def test_noise_drops_swaps_and_reshapes_masks_reproducibly() -> None:
    image = _image()
    dropped = [len(GroundTruthDetector(NoiseParams(drop_rate=0.5), seed=s).detect(image)) for s in range(40)]
    assert 0 < np.mean(dropped) < 2
    swapped = GroundTruthDetector(NoiseParams(label_swap_rate=1.0), seed=0)
    swapped.detect(image)
    assert {d.category for d in swapped.detect(image)} == {"fridge", "bed"}  # each got the other's label
    assert all(d.confidence < 0.9 for d in swapped.detect(image))
    eroded = GroundTruthDetector(NoiseParams(erode_px=2)).detect(image)
    assert sorted(int(d.mask.sum()) for d in eroded) == [16 * 16, 16 * 26]
    assert all(d.mask.sum() > 400 for d in GroundTruthDetector(NoiseParams(dilate_px=1)).detect(image))
    a = GroundTruthDetector(NoiseParams(drop_rate=0.5), seed=3)
    b = GroundTruthDetector(NoiseParams(drop_rate=0.5), seed=3)
    assert [len(a.detect(image)) for _ in range(10)] == [len(b.detect(image)) for _ in range(10)]
    with pytest.raises(ValueError, match="drop_rate"):
        NoiseParams(drop_rate=1.5)


def test_back_projection_erodes_the_masks_by_the_detectors_known_bleed_too() -> None:
    # a bleed-grown mask keeps a rim of what stands beside the object, at the object's depth,
    # which no depth clustering can split off: eroded by the bleed, it gives the clean voxels back
    image, intrinsics, pose = _image(), (60.0, 60.0, 40.0, 30.0), np.eye(4)
    clean = PerceptionPipeline(PerceptionConfig(), GroundTruthDetector())
    bleeding = PerceptionPipeline(PerceptionConfig(), GroundTruthDetector(NoiseParams(dilate_px=2)))
    assert bleeding.instances.backprojection.erode_px == clean.instances.backprojection.erode_px + 2 == 3

    def fridge_voxels(pipeline: PerceptionPipeline, eroded_as: PerceptionPipeline) -> np.ndarray:
        (fridge,) = [d for d in pipeline.detector.detect(image) if d.category == "fridge"]
        return mask_voxels(image.depth, intrinsics, pose, fridge.mask, eroded_as.instances.backprojection)

    expected = fridge_voxels(clean, clean)
    assert len(expected) >= 8
    np.testing.assert_array_equal(fridge_voxels(bleeding, bleeding), expected)
    assert len(np.setdiff1d(fridge_voxels(bleeding, clean), expected)) > 0  # without it the rim stays


def _two_rooms_and_corridor() -> tuple[np.ndarray, np.ndarray, GridSpec]:
    """0.05 m grid 10 x 8 m: room 1 (x 0-4, y 3-8), room 2 (x 5-10, y 3-8), corridor y 0-1.5;
    1 m doors from each room into the corridor, 0.2 m walls."""
    spec = GridSpec(resolution=0.05, width=200, height=160, origin_x=0.0, origin_y=0.0)
    x, y = np.meshgrid(np.arange(200) * 0.05 + 0.025, np.arange(160) * 0.05 + 0.025)  # rows = y
    truth = np.zeros(spec.shape, dtype=np.int32)
    truth[(x > 0.2) & (x < 4.4) & (y > 2.0) & (y < 7.8)] = 1
    truth[(x > 4.6) & (x < 9.8) & (y > 2.0) & (y < 7.8)] = 2
    truth[(x > 0.2) & (x < 9.8) & (y > 0.2) & (y < 1.8)] = 3
    free = truth > 0
    free |= (y >= 1.8) & (y <= 2.0) & (((x > 1.5) & (x < 2.4)) | ((x > 7.0) & (x < 7.9)))  # doors
    free[(x > 1.0) & (x < 2.0) & (y > 5.0) & (y < 6.0)] = False  # a table in room 1
    return free, truth, spec


def test_rooms_split_at_doors_and_match_the_truth() -> None:
    free, truth, spec = _two_rooms_and_corridor()
    segmentation = segment_rooms(free, spec)
    assert segmentation.count == 3
    agreement, mapping = room_match_fraction(segmentation, truth, free)
    assert agreement > 0.97 and sorted(mapping.values()) == [1, 2, 3]
    room_of_table = segmentation.room_at(np.array([[1.5, 5.5]]))[0]  # on the table's footprint
    assert mapping[int(room_of_table)] == 1
    with pytest.raises(ValueError, match="grid"):
        segment_rooms(free[:10], spec)


def test_a_walk_in_closet_behind_its_door_is_a_room_of_its_own() -> None:
    """A 1.6 x 1.6 m closet (its free floor; a wardrobe's or a bathroom's size) off a 4 x 5 m
    room through a 0.8 m door: it has a core of its own, not the room's label grown into it."""
    spec = GridSpec(resolution=0.05, width=140, height=120, origin_x=0.0, origin_y=0.0)
    x, y = np.meshgrid(np.arange(140) * 0.05 + 0.025, np.arange(120) * 0.05 + 0.025)
    truth = np.zeros(spec.shape, dtype=np.int32)
    truth[(x > 0.2) & (x < 4.2) & (y > 0.2) & (y < 5.2)] = 1
    truth[(x > 4.4) & (x < 6.0) & (y > 0.2) & (y < 1.8)] = 2
    free = (truth > 0) | ((x >= 4.2) & (x <= 4.4) & (y > 0.6) & (y < 1.4))  # the door
    segmentation = segment_rooms(free, spec)
    assert segmentation.count == 2
    agreement, mapping = room_match_fraction(segmentation, truth, free)
    assert sorted(mapping.values()) == [1, 2] and agreement > 0.97


def test_rooms_are_named_from_their_objects() -> None:
    free, _, spec = _two_rooms_and_corridor()
    segmentation = segment_rooms(free, spec)
    prior = {("kitchen", "fridge"): 0.9, ("kitchen", "oven"): 0.9, ("bedroom", "bed"): 0.95}

    def containment(rooms: list[str], objects: list[str]) -> np.ndarray:
        return np.array([prior.get((r, o), 0.05) for r, o in zip(rooms, objects, strict=True)])

    objects = [("fridge", (1.0, 4.0)), ("oven", (3.0, 4.0)), ("bed", (8.0, 6.0))]
    names = name_rooms(segmentation, objects, ["kitchen", "bedroom", "corridor"], containment)
    label = {int(segmentation.room_at(np.array([xy]))[0]): xy for xy in [(1.0, 4.0), (8.0, 6.0), (5.0, 1.0)]}
    by_point = {xy: names[k] for k, xy in label.items()}
    assert by_point == {(1.0, 4.0): "kitchen", (8.0, 6.0): "bedroom", (5.0, 1.0): "corridor"}


def test_a_corridor_is_named_by_its_mean_width_not_by_a_half_seen_room_beyond_a_door() -> None:
    """A 9.6 x 1.6 m corridor with a toilet seen at its end, and 2 x 0.8 m of the floor of a
    room beyond a door, too little for a core of its own: the room's strip widens the
    corridor's box to 2.6 m (once named a bathroom, in the demo), not its mean width."""
    spec = GridSpec(resolution=0.05, width=200, height=60, origin_x=0.0, origin_y=-1.0)
    x, y = np.meshgrid(np.arange(200) * 0.05 + 0.025, np.arange(60) * 0.05 - 0.975)
    free = (x > 0.2) & (x < 9.8) & (y > 0.2) & (y < 1.8)
    free |= (x > 2.0) & (x < 2.8) & (y >= 0.0) & (y <= 0.2)  # the door
    free |= (x > 1.5) & (x < 3.5) & (y > -0.8) & (y < 0.0)  # what the robot saw of the room
    segmentation = segment_rooms(free, spec)
    assert segmentation.count == 1
    _, y0, _, y1 = segmentation.extent(1)
    assert y1 - y0 > 2.5  # the box is wider than a corridor; its mean width is 1.8 m

    def containment(rooms: list[str], objects: list[str]) -> np.ndarray:
        return np.array([0.95 if r == "bathroom" else 0.05 for r in rooms])

    names = name_rooms(segmentation, [("toilet", (9.5, 1.0))], ["bathroom", "corridor"], containment)
    assert names == {1: "corridor"}
