"""Rigid transforms and a time-indexed transform tree (REP 103/105 frames), numpy only."""

from sg_search.geometry.transforms import Transform, TransformBuffer, TransformError

__all__ = ["Transform", "TransformBuffer", "TransformError"]
