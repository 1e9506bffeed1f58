"""Watching a search: a Rerun recording (``run.rrd``) written live, and the viewer that shows it."""

from sg_search.view.rerun_log import CameraFrame, SearchLog

__all__ = ["CameraFrame", "SearchLog"]
