"""A 2D log-odds occupancy map built from posed depth images.

Frames: depth in the camera optical frame (z forward, x right, y down), posed by
``T_map_camera``; the map lies in ``map`` with z up and the floor at ``floor_z``.
A depth pixel becomes an obstacle hit when its point's height above the floor lies in
[``obstacle_min_z``, ``obstacle_max_z``] (defaults suit a 0.9 m camera and a robot up to
1.5 m tall: the floor itself and the ceiling are not obstacles); every pixel's ray,
projected on the floor plane and cut at ``max_range``, marks free space up to its end.
A cell marked by contact (:meth:`OccupancyMap.mark_occupied`: a bumper) stays occupied for
``contact_s`` seconds of the frames' stamps whatever the camera sees through it: what the base
ran into and the camera does not show (glass, a leg below the field of view) would otherwise be
cleared by the next few frames, and the base would run into it again. Seconds, not frames: a
camera at 30 Hz forgot a contact of 50 frames in under 2 s, and the frontier planner's test
base, at 5 Hz, in 10 s, while it was still driving round the glass pillar it had bumped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from sg_search.geometry import Transform
from sg_search.mapping.grid import GridSpec, distinct_cells

UNKNOWN, FREE, OCCUPIED = -1, 0, 100  # OccupancyGrid cell values


@dataclass(frozen=True)
class CameraIntrinsics:
    """Pinhole intrinsics [pixels]."""

    fx: float
    fy: float
    cx: float
    cy: float


@dataclass(frozen=True)
class OccupancyParams:
    """Sensor model and height band [m]; log-odds increments are unitless."""

    min_range: float = 0.1
    max_range: float = 5.0
    floor_z: float = 0.0
    obstacle_min_z: float = 0.1
    obstacle_max_z: float = 1.5
    pixel_stride: int = 4
    hit_log_odds: float = 0.85
    miss_log_odds: float = -0.4
    clamp_log_odds: float = 5.0
    occupied_threshold: float = 0.6
    free_threshold: float = -0.3
    contact_s: float = 50.0  # [s, the frames' stamps] a contact stays occupied (module docstring)


class OccupancyMap:
    """Log-odds grid; :meth:`integrate_depth` per frame, :meth:`states` for planning."""

    def __init__(self, spec: GridSpec, params: OccupancyParams | None = None) -> None:
        self.spec = spec
        self.params = params or OccupancyParams()
        self.log_odds = np.zeros(spec.shape, dtype=np.float32)
        self.observed = np.zeros(spec.shape, dtype=bool)
        self.frames = 0
        self.stamp_s = 0.0  # [s] the newest frame's stamp
        self.contacts: dict[int, float] = {}  # flat cell index -> the stamp [s] it expires at

    def copy(self) -> OccupancyMap:
        """An independent copy (e.g. to save while this one goes on integrating)."""
        out = OccupancyMap(self.spec, self.params)
        out.log_odds, out.observed = self.log_odds.copy(), self.observed.copy()
        out.frames, out.stamp_s, out.contacts = self.frames, self.stamp_s, dict(self.contacts)
        return out

    def integrate_depth(
        self,
        depth: NDArray[np.float32],
        intrinsics: CameraIntrinsics,
        t_map_camera: Transform,
        stamp_s: float | None = None,
    ) -> int:
        """Fuse one depth image (H, W) in metres (0, NaN or inf = no return) taken at ``stamp_s``
        [s, any clock the map's frames share; None: the newest frame's again, contacts do not
        age]; returns pixels used. The contacts expired by then are dropped; a stamp older than
        the newest (a simulator restarted, a recording looped) restarts their lifetime from it.

        A frame without any valid pixel changes nothing.
        """
        p = self.params
        depth = np.asarray(depth, dtype=np.float32)
        if depth.ndim != 2:
            raise ValueError(f"depth must be (H, W), got shape {depth.shape}")
        sub = depth[:: p.pixel_stride, :: p.pixel_stride]
        rows, cols = np.mgrid[0 : depth.shape[0] : p.pixel_stride, 0 : depth.shape[1] : p.pixel_stride]
        valid = np.isfinite(sub) & (sub > p.min_range)
        if not valid.any():
            return 0
        z = sub[valid]
        x = (cols[valid] - intrinsics.cx) / intrinsics.fx * z
        y = (rows[valid] - intrinsics.cy) / intrinsics.fy * z
        points = t_map_camera.apply(np.stack([x, y, z], axis=1))
        origin = t_map_camera.translation
        height = points[:, 2] - p.floor_z
        planar = points[:, :2] - origin[:2]
        dist = np.linalg.norm(planar, axis=1)
        in_range = dist <= p.max_range
        hits = points[in_range & (height >= p.obstacle_min_z) & (height <= p.obstacle_max_z)]
        # free space: the floor-projected ray up to its end (cut at max_range)
        scale = np.minimum(1.0, p.max_range / np.maximum(dist, 1e-6))
        ends = origin[:2] + planar * scale[:, None]
        self._mark_free(origin[:2], ends)
        self._mark_hits(hits[:, :2])
        self.frames += 1
        if stamp_s is not None:
            self.stamp_s, latest = stamp_s, stamp_s + p.contact_s
            self.contacts = {c: min(u, latest) for c, u in self.contacts.items() if u > stamp_s}
        return int(valid.sum())

    def _mark_free(self, origin: NDArray[np.float64], ends: NDArray[np.float64]) -> None:
        """Every cell that a ray from ``origin`` to one of ``ends`` (N, 2) [m] passes, sampled each
        half cell, one miss more (once per frame however many rays pass it)."""
        spec, res = self.spec, self.spec.resolution
        # many rays end in the same cell: cast one ray per distinct end cell
        ends = spec.to_metres(distinct_cells(spec.to_cells(ends)))
        length = np.linalg.norm(ends - origin, axis=1)
        steps = int(np.ceil(length.max() / (res * 0.5))) if len(length) else 0
        if steps == 0:
            return
        t = np.linspace(0.0, 1.0, steps, endpoint=False)
        delta = ends - origin
        # (rays, steps) sample cells, as spec.to_cells computes them, without the (N, 2) copies
        cols = np.floor((origin[0] + delta[:, 0, None] * t - spec.origin_x) / res).astype(np.int64)
        rows = np.floor((origin[1] + delta[:, 1, None] * t - spec.origin_y) / res).astype(np.int64)
        on_grid = (rows >= 0) & (rows < spec.height) & (cols >= 0) & (cols < spec.width)
        swept = np.zeros(spec.width * spec.height, dtype=bool)
        swept[rows[on_grid] * spec.width + cols[on_grid]] = True
        flat = np.flatnonzero(swept)  # the grid scanned once, not once per update below
        view = self.log_odds.reshape(-1)
        view[flat] = np.maximum(view[flat] + self.params.miss_log_odds, -self.params.clamp_log_odds)
        self.observed.reshape(-1)[flat] = True

    def _mark_hits(self, xy: NDArray[np.float64]) -> None:
        if len(xy) == 0:
            return
        spec = self.spec
        cells = spec.to_cells(xy)
        cells = cells[spec.inside(cells)]
        flat = np.unique(cells[:, 0] * spec.width + cells[:, 1])
        view = self.log_odds.reshape(-1)
        # a hit outweighs the misses of the same frame (rays end in the obstacle cell)
        view[flat] = np.minimum(
            view[flat] - self.params.miss_log_odds + self.params.hit_log_odds, self.params.clamp_log_odds
        )
        self.observed.reshape(-1)[flat] = True

    def mark_occupied(self, xy: NDArray[np.float64]) -> None:
        """Set the cells under (N, 2) points [m] to certainly occupied (a bumper or contact
        sensor: obstacles the camera cannot see, e.g. below its field of view), for
        ``contact_s`` from the newest frame's stamp."""
        cells = self.spec.to_cells(np.asarray(xy, dtype=float).reshape(-1, 2))
        cells = cells[self.spec.inside(cells)]
        self.log_odds[cells[:, 0], cells[:, 1]] = self.params.clamp_log_odds
        self.observed[cells[:, 0], cells[:, 1]] = True
        until = self.stamp_s + self.params.contact_s
        self.contacts.update({int(c): until for c in cells[:, 0] * self.spec.width + cells[:, 1]})

    def states(self) -> NDArray[np.int8]:
        """(rows, cols) of UNKNOWN (-1), FREE (0), OCCUPIED (100), as in an OccupancyGrid."""
        out = np.full(self.spec.shape, UNKNOWN, dtype=np.int8)
        out[self.observed & (self.log_odds <= self.params.free_threshold)] = FREE
        out[self.observed & (self.log_odds >= self.params.occupied_threshold)] = OCCUPIED
        out.reshape(-1)[list(self.contacts)] = OCCUPIED
        return out

    def save(self, path: Path) -> None:
        """The map (log-odds, observed cells, contacts, grid) to ``path`` (.npz), whole or not at all: a
        temporary file renamed into place, so a kill mid-save keeps the previous map."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp.npz")
        try:
            np.savez_compressed(
                tmp, log_odds=self.log_odds, observed=self.observed, frames=self.frames,
                stamp_s=self.stamp_s,
                contacts=np.array(sorted(self.contacts.items()), dtype=np.float64).reshape(-1, 2),
                grid=np.array([self.spec.resolution, self.spec.width, self.spec.height,
                               self.spec.origin_x, self.spec.origin_y]),
            )  # fmt: skip
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)

    def load(self, path: Path) -> None:
        """Replace this map by the one saved at ``path``; ValueError (map unchanged) when the file
        is not a saved map or was made for another grid. A map saved before contacts were timed
        in seconds (no ``stamp_s``) loads without its contacts: their frame counts are no time."""
        try:
            with np.load(path) as saved:
                grid = tuple(float(v) for v in saved["grid"])
                log_odds, observed, frames = saved["log_odds"], saved["observed"], int(saved["frames"])
                timed = "stamp_s" in saved
                stamp_s = float(saved["stamp_s"]) if timed else 0.0
                contacts = saved["contacts"] if timed else np.zeros((0, 2))
        except (OSError, KeyError, ValueError) as exc:
            raise ValueError(f"{path} is not a saved occupancy map: {exc}") from exc
        s = self.spec
        if grid != (s.resolution, s.width, s.height, s.origin_x, s.origin_y) or log_odds.shape != s.shape:
            raise ValueError(f"{path} holds a map of grid {grid}, not {s}")
        self.log_odds = log_odds.astype(np.float32)
        self.observed = observed.astype(bool)
        self.frames, self.stamp_s = frames, stamp_s
        self.contacts = {int(cell): float(until) for cell, until in contacts}
