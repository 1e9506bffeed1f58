"""``ground_truth`` detector: the simulator's instance image as detections, optionally degraded.

SCOUT evaluates with ground-truth segmentation; the noise model here tests how much of the
pipeline survives a real detector's faults: missed objects (``drop_rate``), wrong labels
(``label_swap_rate``, to another category seen in the scene), shrunken masks
(``erode_px``) and masks that bleed onto the background (``dilate_px``). The same
``seed`` gives the same noise for the same sequence of images.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from sg_search.perception.categories import normalise_category
from sg_search.perception.detection import Detection, RgbdImage, in_vocabulary


@dataclass(frozen=True)
class NoiseParams:
    """Degradation of ground-truth detections (all off by default).

    Attributes:
        drop_rate: probability that an object is missed in a frame.
        label_swap_rate: probability that an object gets another category in a frame.
        erode_px: mask erosion [pixels] (under-segmentation at borders).
        dilate_px: mask dilation [pixels] (bleed onto what lies behind).
        confidence: reported confidence of a correct label; swapped labels get 0.6 of it.
        min_pixels: masks smaller than this [pixels] are not reported.
    """

    drop_rate: float = 0.0
    label_swap_rate: float = 0.0
    erode_px: int = 0
    dilate_px: int = 0
    confidence: float = 0.9
    min_pixels: int = 20

    def __post_init__(self) -> None:
        for name in ("drop_rate", "label_swap_rate", "confidence"):
            value = getattr(self, name)
            if not (math.isfinite(value) and 0.0 <= value <= 1.0):
                raise ValueError(f"ground-truth noise {name} must lie in [0, 1], got {value}")
        if self.erode_px < 0 or self.dilate_px < 0 or self.min_pixels < 1:
            raise ValueError("erode_px and dilate_px must be >= 0 and min_pixels >= 1")

    def describe(self) -> str:
        """'10 % drops, 10 % label swaps, 2 px bleed' (what a report says of the noise)."""
        parts = [f"{self.drop_rate:.0%} drops", f"{self.label_swap_rate:.0%} label swaps"]
        parts += [f"{self.dilate_px} px bleed"] if self.dilate_px else []
        parts += [f"{self.erode_px} px erosion"] if self.erode_px else []
        return ", ".join(parts)


class GroundTruthDetector:
    """Detections from ``RgbdImage.instance``; objects without a category or with one in
    ``ignore_categories`` (the simulator's walls and floor, the robot) are skipped."""

    name = "ground_truth"

    def __init__(
        self,
        noise: NoiseParams | None = None,
        seed: int = 0,
        ignore_categories: Sequence[str] = ("structure", "robot"),
    ) -> None:
        self.noise = noise or NoiseParams()
        self.ignore = frozenset(ignore_categories)
        self._rng = np.random.default_rng(seed)
        self._seen_categories: list[str] = []

    @property
    def bleed_px(self) -> int:
        """The noise model's known bleed: its dilation [pixels]."""
        return self.noise.dilate_px

    def detect(self, image: RgbdImage, vocabulary: Sequence[str] = ()) -> list[Detection]:
        """One detection per instance id in the image (see the module docstring)."""
        if image.instance is None:
            raise ValueError("the ground_truth detector needs the simulator's instance image")
        noise, rng = self.noise, self._rng
        ids, counts = np.unique(image.instance, return_counts=True)
        detections = []
        for instance_id, count in zip(ids.tolist(), counts.tolist(), strict=True):
            source, raw_category = image.instance_categories.get(instance_id, ("", ""))
            if (
                instance_id == 0
                or raw_category in self.ignore
                or not raw_category
                or count < noise.min_pixels
            ):
                continue
            category = normalise_category(raw_category)
            if category not in self._seen_categories:
                self._seen_categories.append(category)
            if noise.drop_rate and rng.random() < noise.drop_rate:
                continue
            confidence = noise.confidence
            if noise.label_swap_rate and rng.random() < noise.label_swap_rate:
                others = [c for c in self._seen_categories if c != category]
                if others:
                    category = others[int(rng.integers(len(others)))]
                    confidence *= 0.6
            if not in_vocabulary(category, vocabulary):
                continue
            mask = image.instance == instance_id
            if noise.erode_px:
                mask = ndimage.binary_erosion(mask, iterations=noise.erode_px)
            if noise.dilate_px:
                mask = ndimage.binary_dilation(mask, iterations=noise.dilate_px)
            if int(mask.sum()) >= noise.min_pixels:
                detections.append(Detection(mask, category, confidence, source=source))
        return detections
