"""Rigid transforms and a time-indexed transform tree (REP 103/105 frames), boxes, poses.

The transform names load :mod:`sg_search.geometry.transforms` (numpy) on first use, so that
:mod:`sg_search.geometry.box` stays importable without numpy (the graph sandbox's child
process must not have imported ``ctypes``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sg_search.geometry.transforms import Transform, TransformBuffer, TransformError, yaw_from_quat

Pose2D = tuple[float, float, float]
"""(x, y, yaw) of a base on the floor: metres and radians in the frame named beside it (``map``)."""

__all__ = ["Pose2D", "Transform", "TransformBuffer", "TransformError", "yaw_from_quat"]


def __getattr__(name: str) -> Any:
    if name in ("Transform", "TransformBuffer", "TransformError", "yaw_from_quat"):
        from sg_search.geometry import transforms

        return getattr(transforms, name)
    raise AttributeError(f"module 'sg_search.geometry' has no attribute {name!r}")
