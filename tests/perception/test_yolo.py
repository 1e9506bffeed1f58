"""The yolo (+ sam) detector end to end on the CPU with locally built random weights.

Needs the optional ``vision`` extra (ultralytics, segment-anything, torchvision); skipped
otherwise. Random weights detect nothing meaningful: these tests check the plumbing
(file handling, shapes, classes, masks to instances), not accuracy.
"""

from __future__ import annotations

import numpy as np
import pytest

from sg_search.perception.detection import DetectorError, RgbdImage
from sg_search.perception.fusion import InstanceMap

ultralytics = pytest.importorskip("ultralytics", reason="the 'vision' extra (ultralytics) is not installed")
segment_anything = pytest.importorskip(
    "segment_anything", reason="the 'vision' extra (segment-anything) is not installed"
)

from sg_search.perception.yolo import SAM_TINY, YoloDetector, class_category  # noqa: E402


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A yolo11n-seg built from its yaml (random weights) and a tiny SAM, saved to files."""
    import torch
    from segment_anything.build_sam import _build_sam

    folder = tmp_path_factory.mktemp("weights")
    model = ultralytics.YOLO("yolo11n-seg.yaml")
    model.save(str(folder / "yolo.pt"))
    sam = _build_sam(checkpoint=None, **SAM_TINY)
    torch.save(sam.state_dict(), folder / "sam_tiny.pth")
    return {"yolo": str(folder / "yolo.pt"), "sam": str(folder / "sam_tiny.pth")}


def _image() -> RgbdImage:
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 255, size=(240, 320, 3), dtype=np.uint8)
    depth = np.full((240, 320), 2.0, dtype=np.float32)
    return RgbdImage(rgb, depth)


def test_missing_weights_are_a_clear_error(tmp_path) -> None:
    with pytest.raises(DetectorError, match="not found"):
        YoloDetector(str(tmp_path / "absent.pt"))
    with pytest.raises(DetectorError, match="yolo_model_path"):
        YoloDetector("")


@pytest.mark.parametrize("use_sam", [False, True])
def test_yolo_masks_become_instances(weights: dict[str, str], use_sam: bool) -> None:
    detector = YoloDetector(
        weights["yolo"],
        confidence=1e-4,
        image_size=320,
        sam_checkpoint=weights["sam"] if use_sam else "",
        sam_model_type="tiny",
    )
    image = _image()
    detections = detector.detect(image)
    assert detections, "random weights at conf 1e-4 always give boxes"
    categories = {class_category(n) for n in detector.model.names.values()}
    for detection in detections:
        assert detection.mask.shape == (240, 320) and detection.mask.dtype == bool
        assert detection.mask.any()
        assert 0.0 <= detection.confidence <= 1.0
        assert detection.category in categories
    vocabulary = [detections[0].category]
    assert all(d.category in vocabulary for d in detector.detect(image, vocabulary))
    instances = InstanceMap()
    pose = np.eye(4)
    result = instances.integrate(
        [d for d in detections if d.mask.sum() > 50], image.depth, (300.0, 300.0, 159.5, 119.5), pose, 1
    )
    assert result.updated and all(
        instances.instances[i].centroid[2] == pytest.approx(2.0, abs=0.05) for i in result.updated
    )
