"""Parameters of the ``live_view`` node (config/sg_search.yaml, ``live_view``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LiveViewConfig:
    """See config/sg_search.yaml (``live_view``); periods in seconds of wall time."""

    output: str = "run.rrd"
    viewer_url: str = ""
    period_s: float = 0.5
    camera_period_s: float = 1.0
    map_period_s: float = 2.0
    map_frame: str = "map"
    depth_scale: float = 0.001
