"""``yolo`` detector: ultralytics YOLO (closed-set or YOLO-World/YOLOE) with optional SAM masks.

Optional: needs the ``vision`` extra (``pip install .[vision]``: ultralytics and
segment-anything with torch 2.14.1 + torchvision 0.29.1, see the README). Weights are read
from the paths given, never downloaded: a missing file is a :class:`DetectorError` that says
so. Without SAM, a segmentation model's own masks are used, or the box itself for a pure
detector. Open-vocabulary models get the vocabulary through ``set_classes``, which needs
their text encoder (CLIP) installed with its weights (if that fails: a warning, and the
model's own classes filtered by the vocabulary); closed-set models keep their classes and
the vocabulary filters them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sg_search.perception.categories import normalise_category
from sg_search.perception.detection import Detection, DetectorError, RgbdImage, in_vocabulary

LOG = logging.getLogger(__name__)
# segment-anything's own encoder sizes plus a 6.5M-parameter one for tests and smoke runs
SAM_TINY = {
    "encoder_embed_dim": 192,
    "encoder_depth": 2,
    "encoder_num_heads": 3,
    "encoder_global_attn_indexes": [1],
}


def _require_file(path: str, what: str) -> Path:
    if not path:
        raise DetectorError(f"the yolo detector needs {what} (a local file; nothing is downloaded)")
    resolved = Path(path).expanduser()
    if not resolved.is_file():
        raise DetectorError(f"{what} not found: {resolved} (weights are never downloaded at run time)")
    return resolved


class SamRefiner:
    """Box prompts -> masks with segment-anything (``model_type`` vit_b/vit_l/vit_h or tiny)."""

    def __init__(self, checkpoint: str, model_type: str = "vit_b") -> None:
        path = _require_file(checkpoint, "sam_checkpoint")
        try:
            from segment_anything import SamPredictor, sam_model_registry
            from segment_anything.build_sam import _build_sam
        except ImportError as exc:
            raise DetectorError(f"SAM needs the 'vision' extra (segment-anything): {exc}") from exc
        if model_type == "tiny":
            model = _build_sam(checkpoint=str(path), **SAM_TINY)
        elif model_type in sam_model_registry:
            model = sam_model_registry[model_type](checkpoint=str(path))
        else:
            raise DetectorError(f"unknown sam_model_type {model_type!r} (vit_b, vit_l, vit_h or tiny)")
        self.predictor = SamPredictor(model.eval())

    def masks(self, rgb: NDArray[np.uint8], boxes: NDArray[np.float32]) -> list[NDArray[np.bool_]]:
        """One (H, W) mask per xyxy box [pixels]."""
        self.predictor.set_image(rgb)
        out = []
        for box in boxes:
            masks, _, _ = self.predictor.predict(
                box=np.asarray(box, dtype=np.float32), multimask_output=False
            )
            out.append(np.asarray(masks[0], dtype=bool))
        return out


class YoloDetector:
    """See the module docstring."""

    name = "yolo"
    bleed_px = 0  # not measured for these models: set the pipeline's erode_px for a segmenter that bleeds

    def __init__(
        self,
        model_path: str,
        confidence: float = 0.25,
        image_size: int = 640,
        sam_checkpoint: str = "",
        sam_model_type: str = "vit_b",
    ) -> None:
        path = _require_file(model_path, "yolo_model_path")
        os.environ.setdefault("YOLO_OFFLINE", "1")
        try:
            from ultralytics import YOLO
        except ImportError as exc:
            raise DetectorError(f"the yolo detector needs the 'vision' extra (ultralytics): {exc}") from exc
        self.model: Any = YOLO(str(path))
        self.confidence = confidence
        self.image_size = image_size
        self.sam = SamRefiner(sam_checkpoint, sam_model_type) if sam_checkpoint else None
        self._classes: tuple[str, ...] = ()

    def _set_vocabulary(self, vocabulary: Sequence[str]) -> None:
        if not hasattr(self.model, "set_classes") or tuple(vocabulary) == self._classes or not vocabulary:
            return
        self._classes = tuple(vocabulary)
        try:
            self.model.set_classes(list(vocabulary))
        except Exception as exc:  # ultralytics raises anything when CLIP is missing
            LOG.warning(
                "cannot set the open vocabulary (%s): the model's text encoder and its weights must be "
                "installed; keeping the model's classes, filtered by the vocabulary",
                exc,
            )

    def detect(self, image: RgbdImage, vocabulary: Sequence[str] = ()) -> list[Detection]:
        """Boxes (and masks) above ``confidence`` whose class is in ``vocabulary``."""
        self._set_vocabulary(vocabulary)
        height, width = image.rgb.shape[:2]
        result = self.model.predict(
            np.ascontiguousarray(image.rgb[..., ::-1]),
            conf=self.confidence,
            imgsz=self.image_size,
            retina_masks=True,
            verbose=False,
        )[0]
        if result.boxes is None or not len(result.boxes):
            return []
        boxes = result.boxes.xyxy.cpu().numpy()
        scores = result.boxes.conf.cpu().numpy()
        classes = result.boxes.cls.cpu().numpy().astype(int)
        categories = [class_category(result.names[c]) for c in classes]
        keep = [k for k in range(len(boxes)) if in_vocabulary(categories[k], vocabulary)]
        if not keep:
            return []
        if self.sam is not None:
            masks = self.sam.masks(image.rgb, boxes[keep])
        elif result.masks is not None:
            masks = [_resize_mask(result.masks.data[k].cpu().numpy() > 0.5, height, width) for k in keep]
        else:
            masks = [_box_mask(boxes[k], height, width) for k in keep]
        return [Detection(mask, categories[k], float(scores[k])) for k, mask in zip(keep, masks, strict=True)]


def class_category(name: object) -> str:
    """A model's class name as a category ("class 7" for a name without a word)."""
    try:
        return normalise_category(str(name))
    except ValueError:
        return f"class {name}"


def _resize_mask(mask: NDArray[np.bool_], height: int, width: int) -> NDArray[np.bool_]:
    """Nearest-neighbour resize of a mask to (height, width)."""
    if mask.shape == (height, width):
        return mask
    rows = np.arange(height) * mask.shape[0] // height
    cols = np.arange(width) * mask.shape[1] // width
    resized: NDArray[np.bool_] = mask[rows[:, None], cols[None, :]]
    return resized


def _box_mask(box: NDArray[np.float32], height: int, width: int) -> NDArray[np.bool_]:
    """The pixels inside an xyxy box."""
    x0, y0, x1, y1 = (round(float(v)) for v in box)
    mask = np.zeros((height, width), dtype=bool)
    mask[max(y0, 0) : max(y1, 0), max(x0, 0) : max(x1, 0)] = True
    return mask
