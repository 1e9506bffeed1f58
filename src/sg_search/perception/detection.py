"""The detector interface: an RGB-D image in, 2D instance masks with categories out.

Every backend (``ground_truth``, ``yolo``, ``yolo`` + ``sam``) implements :class:`Detector`.
Images are in the camera's pixel grid: ``rgb`` uint8 (H, W, 3), ``depth`` float32 metres
(H, W; 0/NaN = no return). Masks are bool (H, W) in the same grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


class DetectorError(RuntimeError):
    """A detector cannot be built or run (missing weights, missing optional library)."""


@dataclass(frozen=True)
class RgbdImage:
    """One registered RGB-D image; ``instance``/``instance_categories`` only from simulators.

    Attributes:
        rgb: (H, W, 3) uint8.
        depth: (H, W) float32 metres along the optical axis.
        instance: (H, W) int32 ground-truth instance ids (0 = none), or None.
        instance_categories: id -> (source id, category) for ``instance``.
    """

    rgb: NDArray[np.uint8]
    depth: NDArray[np.float32]
    instance: NDArray[np.int32] | None = None
    instance_categories: dict[int, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Detection:
    """One detected object in one image.

    Attributes:
        mask: (H, W) bool pixels of the object.
        category: normalised category (lower case, singular, space separated).
        confidence: detector score in [0, 1].
        embedding: optional unit-length appearance/text embedding (open-vocabulary detectors).
        source: the simulator's object id for ground-truth detections (evaluation only; "" else).
    """

    mask: NDArray[np.bool_]
    category: str
    confidence: float
    embedding: NDArray[np.float32] | None = None
    source: str = ""


class Detector(Protocol):
    """``detect`` returns the objects of one image whose category is in ``vocabulary``
    (an empty vocabulary means every category the backend knows)."""

    name: str

    @property
    def bleed_px(self) -> int:
        """How far the backend's masks are known to spill past the object [pixels];
        back-projection erodes each mask by this on top of its own ``erode_px``."""

    def detect(self, image: RgbdImage, vocabulary: Sequence[str] = ()) -> list[Detection]: ...


def in_vocabulary(category: str, vocabulary: Sequence[str]) -> bool:
    """True if ``vocabulary`` is empty or names ``category``."""
    return not vocabulary or category in vocabulary


def check_image(image: RgbdImage) -> None:
    """ValueError naming the problem if the RGB and depth arrays do not form one image."""
    if image.rgb.ndim != 3 or image.rgb.shape[2] != 3:
        raise ValueError(f"rgb must be (H, W, 3), got shape {image.rgb.shape}")
    if image.depth.shape != image.rgb.shape[:2]:
        raise ValueError(f"depth is {image.depth.shape} but rgb is {image.rgb.shape[:2]}: sizes differ")
    if image.instance is not None and image.instance.shape != image.depth.shape:
        raise ValueError(f"instance image is {image.instance.shape} but depth is {image.depth.shape}")
