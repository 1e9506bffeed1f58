"""What perception reports to the scene graph: one fused instance (``map`` frame, metres)."""

from __future__ import annotations

from dataclasses import dataclass

from sg_search.geometry.box import Box3D, Vec3


@dataclass(frozen=True)
class ObjectInstance:
    """One fused instance as perception reports it (``map`` frame, metres)."""

    instance_id: str
    category: str
    confidence: float
    centroid: Vec3
    bbox: Box3D | None = None
    observation_count: int = 1
