"""Axis-aligned 3D boxes (metres, in the frame of whoever holds them, ``map`` in the graph)."""

from __future__ import annotations

from dataclasses import dataclass

Vec3 = tuple[float, float, float]


def _vec3(values: tuple[float, ...], what: str) -> Vec3:
    """Three floats (ints and numpy scalars become float, so equal values compare and serialise equal)."""
    if len(values) != 3:
        raise ValueError(f"{what} needs 3 numbers, got {values!r}")
    return (float(values[0]), float(values[1]), float(values[2]))


@dataclass(frozen=True)
class Box3D:
    """Axis-aligned box: ``center`` and full ``size`` along x, y, z [m], ``map`` frame."""

    center: Vec3
    size: Vec3

    def __post_init__(self) -> None:
        object.__setattr__(self, "center", _vec3(self.center, "Box3D.center"))
        object.__setattr__(self, "size", _vec3(self.size, "Box3D.size"))
        if any(s < 0.0 for s in self.size):
            raise ValueError(f"Box3D size must be non-negative, got {self.size}")

    @property
    def minimum(self) -> Vec3:
        """Lower corner [m]."""
        c, s = self.center, self.size
        return (c[0] - s[0] / 2.0, c[1] - s[1] / 2.0, c[2] - s[2] / 2.0)

    @property
    def maximum(self) -> Vec3:
        """Upper corner [m]."""
        c, s = self.center, self.size
        return (c[0] + s[0] / 2.0, c[1] + s[1] / 2.0, c[2] + s[2] / 2.0)

    def contains(self, point: Vec3, margin: float = 0.0) -> bool:
        """True if ``point`` lies inside the box grown by ``margin`` metres on every side."""
        lo, hi = self.minimum, self.maximum
        return all(lo[i] - margin <= point[i] <= hi[i] + margin for i in range(3))

    def contains_xy(self, point: Vec3, margin: float = 0.0) -> bool:
        """True if ``point``'s x, y lie inside the box's footprint grown by ``margin`` [m]."""
        lo, hi = self.minimum, self.maximum
        return all(lo[i] - margin <= point[i] <= hi[i] + margin for i in range(2))

    @property
    def empty(self) -> bool:
        """True for the 'unknown extent' box (all sizes zero)."""
        return not any(self.size)
