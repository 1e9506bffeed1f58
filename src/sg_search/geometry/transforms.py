"""Rigid transforms and a small transform buffer for where tf2_ros is absent (pip-only ROS).

Conventions: a :class:`Transform` ``T_parent_child`` maps points expressed in ``child``
into ``parent`` (as a ROS TransformStamped with header.frame_id = parent and
child_frame_id = child). Quaternions are (x, y, z, w), unit norm. Metres, seconds.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


class TransformError(LookupError):
    """A lookup cannot be answered; the message names the frames and times."""


def quat_multiply(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton product a*b of (x, y, z, w) quaternions."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ]
    )


def quat_to_matrix(q: FloatArray) -> FloatArray:
    """3x3 rotation matrix of a unit (x, y, z, w) quaternion."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_from_matrix(m: FloatArray) -> FloatArray:
    """Unit (x, y, z, w) quaternion of a 3x3 rotation matrix (Shepperd's method)."""
    m = np.asarray(m, dtype=float)
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * np.sqrt(trace + 1.0)
        q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, 0.25 * s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s, (m[2, 1] - m[1, 2]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s, (m[0, 2] - m[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s, (m[1, 0] - m[0, 1]) / s]
    out = np.array(q)
    return np.asarray(out / np.linalg.norm(out), dtype=np.float64)


def quat_from_yaw(yaw: float) -> FloatArray:
    """Rotation about +z by ``yaw`` radians."""
    return np.array([0.0, 0.0, np.sin(yaw / 2.0), np.cos(yaw / 2.0)])


def yaw_from_quat(q: FloatArray | tuple[float, float, float, float]) -> float:
    """Rotation about +z [rad] of the quaternion (x, y, z, w) (the heading of a base on a floor)."""
    x, y, z, w = (float(v) for v in q)
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def quat_slerp(a: FloatArray, b: FloatArray, t: float) -> FloatArray:
    """Spherical interpolation from a (t=0) to b (t=1), shortest path."""
    dot = float(np.dot(a, b))
    if dot < 0.0:
        b, dot = -b, -dot
    if dot > 0.9995:
        q = a + t * (b - a)
        return np.asarray(q / np.linalg.norm(q), dtype=np.float64)
    theta = float(np.arccos(dot))
    q = (np.sin((1 - t) * theta) * a + np.sin(t * theta) * b) / np.sin(theta)
    return np.asarray(q, dtype=np.float64)


@dataclass(frozen=True)
class Transform:
    """Translation [m] and unit quaternion (x, y, z, w); maps child points into the parent."""

    translation: FloatArray = field(default_factory=lambda: np.zeros(3))
    rotation: FloatArray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    def __post_init__(self) -> None:
        t = np.asarray(self.translation, dtype=float).reshape(3)
        q = np.asarray(self.rotation, dtype=float).reshape(4)
        norm = float(np.linalg.norm(q))
        if not np.all(np.isfinite(t)) or not np.isfinite(norm) or abs(norm - 1.0) > 1e-3:
            raise ValueError(f"invalid transform: translation {t}, quaternion {q} (norm {norm:.4f})")
        object.__setattr__(self, "translation", t)
        object.__setattr__(self, "rotation", q / norm)

    def __mul__(self, other: Transform) -> Transform:
        """Composition: (T_a_b * T_b_c) = T_a_c."""
        rotated = quat_to_matrix(self.rotation) @ other.translation
        return Transform(self.translation + rotated, quat_multiply(self.rotation, other.rotation))

    def inverse(self) -> Transform:
        """T_b_a from T_a_b."""
        conj = self.rotation * np.array([-1.0, -1.0, -1.0, 1.0])
        return Transform(-(quat_to_matrix(conj) @ self.translation), conj)

    def apply(self, points: FloatArray) -> FloatArray:
        """Map points of shape (N, 3) (or (3,)) from the child frame into the parent frame."""
        pts = np.asarray(points, dtype=float)
        return pts @ quat_to_matrix(self.rotation).T + self.translation

    def as_matrix(self) -> FloatArray:
        """4x4 homogeneous matrix."""
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(self.rotation)
        m[:3, 3] = self.translation
        return m

    def interpolate(self, other: Transform, t: float) -> Transform:
        """Linear translation and slerp rotation between self (t=0) and other (t=1)."""
        return Transform(
            self.translation + t * (other.translation - self.translation),
            quat_slerp(self.rotation, other.rotation, t),
        )


@dataclass
class _Edge:
    parent: str
    stamps: list[float] = field(default_factory=list)
    transforms: list[Transform] = field(default_factory=list)
    static: bool = False


class TransformBuffer:
    """Transform tree over time: each child frame has one parent; dynamic edges keep a window.

    Args:
        cache_time_s: how long dynamic transforms are kept [s].
        extrapolation_s: a lookup may be this far past the newest (or before the oldest)
            sample of an edge and get that sample [s].
    """

    def __init__(self, cache_time_s: float = 10.0, extrapolation_s: float = 0.1) -> None:
        self.cache_time_s = cache_time_s
        self.extrapolation_s = extrapolation_s
        self._edges: dict[str, _Edge] = {}

    def set_transform(
        self, parent: str, child: str, stamp_s: float, transform: Transform, static: bool = False
    ) -> bool:
        """Add ``T_parent_child`` at ``stamp_s``. A frame that would re-parent or loop is refused.
        A dynamic sample older than the edge's window (``cache_time_s`` before its newest) says
        the clock went back (a simulator restarted its /clock): the edge's history, of another
        time, is dropped and True returned (tf2 clears its buffer on such a jump too)."""
        if not parent or not child or parent == child:
            raise TransformError(f"bad frame pair {parent!r} -> {child!r}")
        edge = self._edges.get(child)
        if edge is not None and edge.parent != parent:
            raise TransformError(f"frame {child!r} already has parent {edge.parent!r}, not {parent!r}")
        if edge is None:
            if child in self._ancestors(parent):
                raise TransformError(f"{parent!r} -> {child!r} would close a loop in the tree")
            edge = self._edges[child] = _Edge(parent, static=static)
        if edge.static or static:
            edge.static, edge.stamps, edge.transforms = True, [0.0], [transform]
            return False
        went_back = bool(edge.stamps) and stamp_s < edge.stamps[-1] - self.cache_time_s
        if went_back:
            edge.stamps, edge.transforms = [], []
        index = bisect.bisect_right(edge.stamps, stamp_s)
        edge.stamps.insert(index, stamp_s)
        edge.transforms.insert(index, transform)
        horizon = edge.stamps[-1] - self.cache_time_s
        drop = bisect.bisect_left(edge.stamps, horizon)
        if drop:
            del edge.stamps[:drop], edge.transforms[:drop]
        return went_back

    def frames(self) -> set[str]:
        """Every frame the buffer knows."""
        return set(self._edges) | {e.parent for e in self._edges.values()}

    def _ancestors(self, frame: str) -> list[str]:
        chain = [frame]
        while chain[-1] in self._edges:
            chain.append(self._edges[chain[-1]].parent)
        return chain

    def _edge_at(self, child: str, stamp_s: float | None) -> Transform:
        edge = self._edges[child]
        if edge.static:
            return edge.transforms[0]
        if stamp_s is None:
            return edge.transforms[-1]
        first, last = edge.stamps[0], edge.stamps[-1]
        if stamp_s <= first:
            if first - stamp_s > self.extrapolation_s:
                raise TransformError(
                    f"{edge.parent}->{child}: {stamp_s:.3f} s is before the oldest {first:.3f} s"
                )
            return edge.transforms[0]
        if stamp_s >= last:
            if stamp_s - last > self.extrapolation_s:
                raise TransformError(
                    f"{edge.parent}->{child}: {stamp_s:.3f} s is after the newest {last:.3f} s"
                )
            return edge.transforms[-1]
        i = bisect.bisect_right(edge.stamps, stamp_s)
        t0, t1 = edge.stamps[i - 1], edge.stamps[i]
        return edge.transforms[i - 1].interpolate(edge.transforms[i], (stamp_s - t0) / (t1 - t0))

    def lookup(self, target: str, source: str, stamp_s: float | None = None) -> Transform:
        """``T_target_source`` at ``stamp_s`` (None: latest of every edge)."""
        if target == source:
            return Transform()
        up_source, up_target = self._ancestors(source), self._ancestors(target)
        common = next((f for f in up_source if f in up_target), None)
        if common is None:
            raise TransformError(
                f"frames {target!r} and {source!r} are not connected (known: {sorted(self.frames())})"
            )
        t_common_source = Transform()
        for child in up_source[: up_source.index(common)]:
            t_common_source = self._edge_at(child, stamp_s) * t_common_source
        t_common_target = Transform()
        for child in up_target[: up_target.index(common)]:
            t_common_target = self._edge_at(child, stamp_s) * t_common_target
        return t_common_target.inverse() * t_common_source
