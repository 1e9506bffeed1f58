from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sg_search.sim.bddl_scenes import load_house, split_of
from sg_search.sim.episodes import activity_half, episode_from_json, make_episodes, placements_for
from sg_search.sim.layout import layout_house
from sg_search.sim.placements import all_placements, synset_words


def test_placements_come_in_both_tiers_with_rooms() -> None:
    placements = all_placements()
    tiers = {p.tier for p in placements}
    assert tiers == {"typical", "misplaced"}
    assert all(p.room_type for p in placements)
    fridge = [
        p for p in placements if p.container_synset == "electric_refrigerator.n.01" and p.tier == "typical"
    ]
    assert fridge and all(p.relation in ("inside", "ontop") for p in fridge)
    assert synset_words("bottle__of__shampoo.n.01") == "bottle of shampoo"


def test_episodes_are_deterministic_placed_and_split_without_leaks() -> None:
    first, skipped = make_episodes("test", 30, "typical", seed=1)
    again, _ = make_episodes("test", 30, "typical", seed=1)
    assert first == again and len(first) == 30 and skipped >= 0
    for episode in first:
        assert split_of(episode.scene) == "test"
        assert activity_half(episode.activity) == "B"
        layout = layout_house(load_house(episode.scene), episode.layout_seed)
        room = layout.room(episode.room_id)
        assert room.room_type == episode.room
        assert episode.start_room_id != episode.room_id or len(layout.rooms) == 1
        if episode.relation != "inroom":
            furniture = next(f for f in layout.furniture if f.furniture_id == episode.container_id)
            assert furniture.category == episode.container and furniture.room_id == episode.room_id
    train, _ = make_episodes("train", 20, "misplaced", seed=1)
    assert {activity_half(e.activity) for e in train} == {"A"}
    assert not {e.activity for e in train} & {p.activity for p in placements_for("test", "misplaced")}


def test_bad_tier_is_refused() -> None:
    with pytest.raises(ValueError, match="tier"):
        placements_for("test", "weird")


def test_cli_prints_json_lines_and_the_skip_count(tmp_path: Path) -> None:
    cli = str(Path(sys.prefix) / "bin" / "sg-search")
    result = subprocess.run(
        [cli, "sim", "episodes", "--split", "val", "--n", "3"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3 and all(r["split"] == "val" for r in rows)
    assert "could not be placed" in result.stderr
    solvable = subprocess.run(  # the closed-loop benchmark's: val's third draw is out of reach
        [cli, "sim", "episodes", "--split", "val", "--n", "3", "--solvable"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert solvable.returncode == 0, solvable.stderr
    kept = [json.loads(line) for line in solvable.stdout.splitlines()]
    assert kept[:2] == rows[:2] and kept[2] != rows[2] and "or were not solvable" in solvable.stderr


def test_an_episode_goes_through_one_json_line_and_a_bad_line_is_named() -> None:
    episode = make_episodes("val", 1, seed=0)[0][0]
    assert episode_from_json(json.dumps(episode.to_json())) == episode
    fields = episode.to_json()
    with pytest.raises(ValueError, match="not JSON"):
        episode_from_json("{scene: Rs_int}")
    with pytest.raises(ValueError, match="missing \\['start_room_id'\\], unknown \\['start'\\]"):
        renamed = {**{k: v for k, v in fields.items() if k != "start_room_id"}, "start": "x"}
        episode_from_json(json.dumps(renamed))
    with pytest.raises(ValueError, match="layout_seed"):
        episode_from_json(json.dumps({**fields, "layout_seed": "0"}))
    with pytest.raises(ValueError, match="one JSON object, not list"):
        episode_from_json("[1]")
