"""Parameters of the perception node (``perception`` in config/sg_search.yaml)."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from sg_search.perception.backproject import BackprojectionParams
from sg_search.perception.fusion import FusionParams
from sg_search.perception.ground_truth import NoiseParams

DETECTORS = ("ground_truth", "yolo")


@dataclass(frozen=True)
class PerceptionConfig:
    """See config/sg_search.yaml for the meaning, units and reasons of each parameter."""

    detector: str = "ground_truth"
    vocabulary: tuple[str, ...] = ()
    map_frame: str = "map"
    depth_scale: float = 0.001
    sync_slop_s: float = 0.02
    tf_timeout_s: float = 0.2
    stats_period_s: float = 5.0
    seed: int = 0
    # ground_truth noise
    gt_drop_rate: float = 0.0
    gt_label_swap_rate: float = 0.0
    gt_erode_px: int = 0
    gt_dilate_px: int = 0
    # yolo (+ sam)
    yolo_model_path: str = ""
    yolo_confidence: float = 0.25
    yolo_image_size: int = 640
    sam_checkpoint: str = ""
    sam_model_type: str = "vit_b"
    # back-projection
    min_depth: float = 0.2
    max_depth: float = 5.0
    erode_px: int = 1
    voxel: float = 0.03
    outlier_neighbours: int = 0
    outlier_std_ratio: float = 2.0
    cluster_radius: float = 0.08
    cluster_min_fraction: float = 1.0
    min_voxels: int = 8
    floor_z: float = 0.0
    floor_clearance: float = 0.02
    # fusion
    min_overlap_same: float = 0.25
    min_overlap_any: float = 0.5
    embedding_min_cosine: float = 0.8
    merge_every: int = 10
    merge_overlap: float = 0.3
    merge_contact: int = 20
    max_frame_ids: int = 64
    max_voxels: int = 20000
    min_observations: int = 2

    def __post_init__(self) -> None:
        if self.detector not in DETECTORS:
            raise ValueError(
                f"perception detector must be one of {', '.join(DETECTORS)}, got {self.detector!r}"
            )
        for name in (
            "depth_scale",
            "sync_slop_s",
            "tf_timeout_s",
            "stats_period_s",
            "voxel",
            "cluster_radius",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"perception parameter {name} must be a positive number, got {value}")
        if not 0 <= self.min_depth < self.max_depth:
            raise ValueError(
                f"perception needs 0 <= min_depth < max_depth, got {self.min_depth}, {self.max_depth}"
            )
        self.noise()
        self.fusion()

    def noise(self) -> NoiseParams:
        """Noise of the ground_truth detector."""
        return NoiseParams(self.gt_drop_rate, self.gt_label_swap_rate, self.gt_erode_px, self.gt_dilate_px)

    def backprojection(self) -> BackprojectionParams:
        """Mask-to-points parameters."""
        return BackprojectionParams(**{f.name: getattr(self, f.name) for f in fields(BackprojectionParams)})

    def fusion(self) -> FusionParams:
        """Matching and merging parameters."""
        return FusionParams(**{f.name: getattr(self, f.name) for f in fields(FusionParams)})
