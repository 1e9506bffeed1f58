"""sensor_msgs conversions without cv_bridge (no wheel exists): depth images and intrinsics."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sensor_msgs.msg import CameraInfo, Image

from sg_search.mapping.occupancy import CameraIntrinsics


def depth_from_msg(msg: Image, depth_scale: float) -> NDArray[np.float32]:
    """A depth Image as (H, W) metres: 32FC1 as is, 16UC1 times ``depth_scale`` (0 = no return)."""
    dtype: np.dtype[Any]
    if msg.encoding == "32FC1":
        dtype, scale = np.dtype("<f4" if not msg.is_bigendian else ">f4"), 1.0
    elif msg.encoding == "16UC1":
        dtype, scale = np.dtype("<u2" if not msg.is_bigendian else ">u2"), depth_scale
    else:
        raise ValueError(f"unsupported depth encoding {msg.encoding!r} (expected 32FC1 or 16UC1)")
    row = msg.width * dtype.itemsize
    if msg.step < row or len(msg.data) < msg.step * msg.height:
        raise ValueError(
            f"depth image {msg.width}x{msg.height} with step {msg.step} has {len(msg.data)} bytes"
        )
    raw = np.frombuffer(bytes(msg.data), dtype=np.uint8).reshape(msg.height, msg.step)[:, :row]
    depth = raw.copy().view(dtype).reshape(msg.height, msg.width).astype(np.float32) * scale
    return np.asarray(depth, dtype=np.float32)


def depth_to_msg(depth: NDArray[np.float32], frame_id: str) -> Image:
    """(H, W) metres -> a 32FC1 Image (for simulators and tests)."""
    depth = np.ascontiguousarray(depth, dtype="<f4")
    msg = Image(height=depth.shape[0], width=depth.shape[1], encoding="32FC1", step=depth.shape[1] * 4)
    msg.header.frame_id = frame_id
    msg.data = depth.tobytes()
    return msg


def intrinsics_from_msg(msg: CameraInfo) -> CameraIntrinsics:
    """Pinhole intrinsics from CameraInfo.k; ValueError if they are missing."""
    k = list(msg.k)
    if k[0] <= 0 or k[4] <= 0:
        raise ValueError(f"camera_info has no focal length (k = {k})")
    return CameraIntrinsics(fx=k[0], fy=k[4], cx=k[2], cy=k[5])
