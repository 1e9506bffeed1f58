"""Fixtures for mapping tests."""

from __future__ import annotations

import pytest
from box_room import camera_pose, render_box_room


@pytest.fixture
def box_room_view():  # type: ignore[no-untyped-def]
    pose = camera_pose(1.0, 2.0, 0.0)
    return render_box_room(pose), pose
