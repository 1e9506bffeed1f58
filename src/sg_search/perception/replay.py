"""Recorded perception: fused object instances per frame, read from a YAML file.

Stands in for the perception node where no sensor stream exists (the demo, tests, and
replaying a logged run). Format (``map`` frame, metres, seconds since start)::

    replay:
      frames:
        - t: 0.5
          instances:
            - {id: obj_1, category: mug, confidence: 0.9, center: [x, y, z], size: [dx, dy, dz]}
          removed: [obj_0]          # optional
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from sg_search.config import read_yaml
from sg_search.geometry.box import Box3D
from sg_search.perception.observation import ObjectInstance


@dataclass(frozen=True)
class ReplayFrame:
    """Instances perception reported for one frame, ``t`` seconds after the start."""

    t: float
    index: int
    instances: tuple[ObjectInstance, ...]
    removed: tuple[str, ...] = ()


def load_replay(path: Path | str) -> list[ReplayFrame]:
    """Frames of a replay file, sorted by time; ValueError naming the file and frame if bad."""
    path = Path(path)
    try:
        document = read_yaml(path.read_text())
        raw_frames = document["replay"]["frames"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a replay file (needs replay.frames): {exc}") from None
    frames = []
    for index, raw in enumerate(raw_frames):
        where = f"{path}: replay.frames[{index}]"
        try:
            instances = tuple(
                ObjectInstance(
                    instance_id=str(item["id"]),
                    category=str(item["category"]),
                    confidence=float(item.get("confidence", 1.0)),
                    centroid=tuple(float(v) for v in item["center"]),  # type: ignore[arg-type]
                    bbox=Box3D(
                        tuple(float(v) for v in item["center"]),  # type: ignore[arg-type]
                        tuple(float(v) for v in item["size"]),  # type: ignore[arg-type]
                    )
                    if "size" in item
                    else None,
                    observation_count=int(item.get("observations", 1)),
                )
                for item in raw.get("instances") or []
            )
            frames.append(ReplayFrame(float(raw["t"]), index + 1, instances, tuple(raw.get("removed") or ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc!r}") from None
    return sorted(frames, key=lambda f: f.t)
