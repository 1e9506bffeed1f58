"""The one perception pipeline: an RGB-D frame -> detections -> fused 3D instances -> what
to report to the scene graph.

The perception node feeds it frames decoded from topics; the in-process simulator world
feeds it rendered frames. Both get the same checks, the same detector and fusion, and the
same report: the confirmed instances the frame created or changed, and the ids merged away.
Depth in metres, poses ``T_map_camera`` (4, 4) from the camera optical frame to ``map``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from sg_search.perception.categories import normalise_category
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import Detector, DetectorError, RgbdImage, check_image
from sg_search.perception.factory import create_detector
from sg_search.perception.fusion import Instance, InstanceMap, ReportedInstances


class FrameSkipped(ValueError):
    """A frame perception cannot use; ``reason`` is a short key for the counters."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class PerceptionUpdate:
    """What one frame changed: confirmed instances to report and reported ids now gone."""

    frame_index: int
    confirmed: list[Instance] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.confirmed or self.removed)


class PerceptionPipeline:
    """Detector, instance fusion and reporting for one camera (module docstring)."""

    def __init__(self, config: PerceptionConfig, detector: Detector | None = None) -> None:
        self.config = config
        self.detector = detector or create_detector(config)
        backprojection = config.backprojection()
        erode = backprojection.erode_px + self.detector.bleed_px
        self.instances = InstanceMap(config.fusion(), replace(backprojection, erode_px=erode))
        self.reported = ReportedInstances(self.instances)
        self.vocabulary: tuple[str, ...] = ()
        self.set_vocabulary(config.vocabulary)
        self.stats: Counter[str] = Counter()

    def set_vocabulary(self, names: tuple[str, ...] | list[str]) -> None:
        """Detect only these categories from now on (empty: every category); ValueError names
        a name that is not a category."""
        self.vocabulary = tuple(normalise_category(str(n)) for n in names)

    def process(
        self,
        image: RgbdImage,
        intrinsics: tuple[float, float, float, float],
        t_map_camera: NDArray[np.float64],
    ) -> PerceptionUpdate:
        """Check, detect and fuse one frame; ``intrinsics`` (fx, fy, cx, cy) [px]. FrameSkipped
        says why a frame cannot be used; the instances already fused are kept."""
        try:
            check_image(image)
        except ValueError as exc:
            raise FrameSkipped("size", str(exc)) from None
        valid = np.isfinite(image.depth) & (image.depth > 0)
        if not valid.any():
            raise FrameSkipped("no_depth", "no valid depth pixel (all zero, NaN or inf)")
        if not image.rgb.any():
            raise FrameSkipped("black", "the colour image is all black")
        try:
            detections = self.detector.detect(image, self.vocabulary)
        except (ValueError, DetectorError) as exc:
            raise FrameSkipped("detector", str(exc)) from None
        depth = np.where(valid, image.depth, 0.0).astype(np.float32)
        self.stats["frames"] += 1
        self.stats["detections"] += len(detections)
        index = self.stats["frames"]
        result = self.instances.integrate(detections, depth, intrinsics, t_map_camera, index)
        confirmed, removed = self.reported.after(result)
        return PerceptionUpdate(index, confirmed, removed)
