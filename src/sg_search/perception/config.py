"""Parameters of the perception node (``perception`` in config/sg_search.yaml)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from sg_search.config import require_positive
from sg_search.geometry import frames
from sg_search.perception.backproject import BackprojectionParams
from sg_search.perception.fusion import FusionParams
from sg_search.perception.ground_truth import NoiseParams

DETECTORS = ("ground_truth", "yolo")


@dataclass(frozen=True)
class PerceptionConfig:
    """See config/sg_search.yaml for the meaning, units and reasons of each parameter."""

    detector: str = "ground_truth"
    vocabulary: tuple[str, ...] = ()
    map_frame: str = frames.MAP
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
    # back-projection and fusion: the defaults live in BackprojectionParams and FusionParams
    min_depth: float = BackprojectionParams.min_depth
    max_depth: float = BackprojectionParams.max_depth
    erode_px: int = BackprojectionParams.erode_px
    voxel: float = BackprojectionParams.voxel
    outlier_neighbours: int = BackprojectionParams.outlier_neighbours
    outlier_std_ratio: float = BackprojectionParams.outlier_std_ratio
    cluster_radius: float = BackprojectionParams.cluster_radius
    cluster_min_fraction: float = BackprojectionParams.cluster_min_fraction
    min_voxels: int = BackprojectionParams.min_voxels
    floor_z: float = BackprojectionParams.floor_z
    floor_clearance: float = BackprojectionParams.floor_clearance
    min_overlap_same: float = FusionParams.min_overlap_same
    min_overlap_any: float = FusionParams.min_overlap_any
    embedding_min_cosine: float = FusionParams.embedding_min_cosine
    merge_every: int = FusionParams.merge_every
    merge_overlap: float = FusionParams.merge_overlap
    merge_contact: int = FusionParams.merge_contact
    max_frame_ids: int = FusionParams.max_frame_ids
    max_voxels: int = FusionParams.max_voxels
    min_observations: int = FusionParams.min_observations

    def __post_init__(self) -> None:
        if self.detector not in DETECTORS:
            raise ValueError(
                f"perception detector must be one of {', '.join(DETECTORS)}, got {self.detector!r}"
            )
        require_positive(
            self,
            ("depth_scale", "sync_slop_s", "tf_timeout_s", "stats_period_s", "voxel", "cluster_radius"),
            "perception",
        )
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
