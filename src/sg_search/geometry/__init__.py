"""Rigid transforms and a time-indexed transform tree (REP 103/105 frames), numpy only."""

from sg_search.geometry.transforms import Transform, TransformBuffer, TransformError, yaw_from_quat

Pose2D = tuple[float, float, float]
"""(x, y, yaw) of a base on the floor: metres and radians in the frame named beside it (``map``)."""

__all__ = ["Pose2D", "Transform", "TransformBuffer", "TransformError", "yaw_from_quat"]
