from __future__ import annotations

from pathlib import Path

import pytest

from sg_search.config import package_share
from sg_search.perception.replay import load_replay


def test_demo_replay_is_time_ordered_and_ends_with_the_passport() -> None:
    frames = load_replay(package_share() / "config" / "demo" / "apartment.yaml")
    assert [f.t for f in frames] == sorted(f.t for f in frames)
    assert len({f.index for f in frames}) == len(frames)
    last = frames[-1].instances[0]
    assert last.category == "passport" and last.bbox is not None and last.bbox.contains(last.centroid)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rooms: []", "not a replay file"),
        ("replay: {frames: [{t: 1, instances: [{id: a}]}]}", r"frames\[0\]"),
    ],
)
def test_bad_replay_files_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        load_replay(path)
