from __future__ import annotations

import json
from pathlib import Path

import pytest

from sg_search.scene_graph import SceneGraph
from sg_search.scene_graph.invariants import check_invariants
from sg_search.scene_graph.observations import IntegrationParams, ObjectInstance, integrate_instances
from sg_search.scene_graph.serialization import SnapshotError, dumps, load_snapshot, save_snapshot


def _populated(two_rooms: SceneGraph) -> SceneGraph:
    integrate_instances(
        two_rooms,
        7,
        [
            ObjectInstance("p", "passport", 0.8123456789, (7.5, 0.5, 0.2)),
            ObjectInstance("m", "mug", 0.5, (1, 1, 1)),
        ],
        params=IntegrationParams(openable_categories=("nightstand",)),
    )
    return two_rooms


def test_snapshot_round_trip_is_byte_identical(two_rooms: SceneGraph, tmp_path: Path) -> None:
    graph = _populated(two_rooms)
    path = tmp_path / "graph.json"
    save_snapshot(graph, path)
    restored = load_snapshot(path)
    check_invariants(restored)
    assert restored.sequence == graph.sequence
    assert restored.node("p") == graph.node("p")
    save_snapshot(restored, tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert not list(tmp_path.glob(".graph.json.*")), "temporary file left behind"


def test_bad_snapshots_are_refused_and_target_keeps_its_graph(two_rooms: SceneGraph, tmp_path: Path) -> None:
    graph = _populated(two_rooms)
    before = dumps(graph)
    data = json.loads(before)
    cases = {
        "garbage.json": "{not json",
        "version.json": json.dumps({**data, "version": 99}),
        "format.json": json.dumps({**data, "format": "other"}),
        "orphan.json": json.dumps({**data, "nodes": [n for n in data["nodes"] if n["id"] != "bedroom_0"]}),
    }
    messages = {
        "garbage.json": "cannot read",
        "version.json": "version 99",
        "format.json": "not a scene graph",
        "orphan.json": "inconsistent",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(SnapshotError, match=messages[name]):
            load_snapshot(tmp_path / name, graph)
        assert dumps(graph) == before
