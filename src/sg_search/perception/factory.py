"""Build the configured detector backend (the heavy ones import their libraries lazily)."""

from __future__ import annotations

from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import Detector
from sg_search.perception.ground_truth import GroundTruthDetector


def create_detector(config: PerceptionConfig) -> Detector:
    """The detector named by ``config.detector``; DetectorError if its weights or library are missing."""
    if config.detector == "yolo":
        from sg_search.perception.yolo import YoloDetector

        return YoloDetector(
            config.yolo_model_path,
            confidence=config.yolo_confidence,
            image_size=config.yolo_image_size,
            sam_checkpoint=config.sam_checkpoint,
            sam_model_type=config.sam_model_type,
        )
    return GroundTruthDetector(config.noise(), seed=config.seed)
