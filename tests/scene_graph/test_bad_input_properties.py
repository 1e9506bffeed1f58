"""Bad input at the graph's doors, property-based (hypothesis): any sequence of operations keeps
the invariants and survives the snapshot and the update stream; any prior document or episode
line is loaded or refused with a ValueError that names the entry, and a refusal changes nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sg_search.scene_graph import EdgeKind, Layer, SceneEdge, SceneGraph, SceneNode
from sg_search.scene_graph.invariants import check_invariants
from sg_search.scene_graph.prior import add_prior
from sg_search.scene_graph.serialization import dumps, graph_from_dict
from sg_search.sim.episodes import episodes_from_file

IDS = st.text(min_size=1, max_size=12)  # any unicode, control characters included
NUMBERS = st.floats(allow_nan=True, allow_infinity=True)


@st.composite
def _operation(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(["node", "node", "node", "edge", "remove_node", "remove_edge"]))
    if kind == "node":
        node = dict(
            id=draw(IDS), layer=draw(st.sampled_from(list(Layer))),
            kind=draw(st.sampled_from(["object", "container", "room", "region", "bogus", ""])),
            category=draw(st.text(max_size=20)), position=(draw(NUMBERS), draw(NUMBERS), draw(NUMBERS)),
            confidence=draw(NUMBERS), parent_id=draw(st.one_of(st.just(""), IDS)),
            frame_ids=tuple(draw(st.lists(st.integers(0, 2**40), max_size=3))),
        )  # fmt: skip
        return kind, node
    if kind == "edge":
        return kind, (draw(IDS), draw(IDS), draw(st.text(max_size=8)), draw(NUMBERS))
    return kind, draw(IDS) if kind == "remove_node" else draw(st.integers(0, 1000))


def _apply(graph: SceneGraph, kind: str, value: Any) -> None:
    """One operation; ValueError/KeyError are refusals that must name what they refuse."""
    try:
        if kind == "node":
            graph.upsert_node(SceneNode(**value))
        elif kind == "edge":
            source, target, relation, confidence = value
            graph.upsert_edge(SceneEdge(source, target, EdgeKind.SPATIAL, relation, confidence=confidence))
        elif kind == "remove_node":
            graph.remove_node(value)
        else:
            edges = graph.edges()
            if edges:
                graph.remove_edge(edges[value % len(edges)].key)  # a drawn index: reproducible
    except (ValueError, KeyError) as exc:
        text = str(exc.args[0])
        named = value["id"] if kind == "node" else value[0] if kind == "edge" else value
        assert repr(named) in text or "edge" in text or "SceneEdge" in text, text


@settings(max_examples=150)
@given(st.lists(_operation(), max_size=25))
def test_any_operations_keep_the_invariants_and_round_trip(operations: list[tuple[str, Any]]) -> None:
    graph, mirror = SceneGraph(), SceneGraph()
    for kind, value in operations:
        before = graph.sequence
        _apply(graph, kind, value)
        check_invariants(graph)
        if graph.sequence != before:
            mirror.apply(graph.updates_since(mirror.sequence))  # the incremental stream a mirror follows
    assert mirror.snapshot() == graph.snapshot()
    restored = graph_from_dict(json.loads(dumps(graph)))  # the snapshot file's round trip
    check_invariants(restored)
    assert restored.snapshot() == graph.snapshot()
    assert all(not any(math.isnan(v) for v in n.position) for n in graph.nodes())


_JSON = st.recursive(
    st.none() | st.booleans() | NUMBERS | st.text(max_size=10),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def _prior_document(draw: st.DrawFn) -> Any:
    """Mostly well-formed prior documents with one field broken, and some arbitrary ones."""
    if draw(st.booleans()):
        return draw(_JSON)
    room = {"id": "kitchen_0", "category": "kitchen", "center": [2.0, 2.0, 1.2], "size": [4.0, 3.0, 2.4]}
    fridge = {"id": "fridge_0", "category": "fridge", "room": "kitchen_0", "center": [1.0, 1.0, 0.9],
              "size": [0.8, 0.7, 1.8], "affordances": ["openable"], "state": "closed"}  # fmt: skip
    document: dict[str, Any] = {"rooms": [room], "furniture": [fridge], "doors": []}
    section = draw(st.sampled_from(["rooms", "furniture", "doors"]))
    if section == "doors":
        document["doors"] = [draw(_JSON)]
    else:
        entry = dict(document[section][0])
        entry[draw(st.sampled_from(sorted(entry)))] = draw(_JSON)
        document[section] = [entry]
    return document


@settings(max_examples=200)
@given(_prior_document())
def test_a_prior_is_loaded_or_refused_naming_the_entry_and_the_graph_is_untouched(
    document: Any,
) -> None:
    graph = SceneGraph()
    graph.upsert_node(SceneNode("root", Layer.ROOT, "root"))
    before = graph.snapshot()
    try:
        add_prior(document, graph, source="prior.yaml")
    except ValueError as exc:
        assert "prior.yaml" in str(exc), str(exc)
        assert graph.snapshot() == before  # a refused prior adds nothing
        return
    check_invariants(graph)


@settings(max_examples=60)
@given(st.lists(st.one_of(_JSON.map(json.dumps), st.text(max_size=40)), min_size=1, max_size=4))
def test_every_episode_line_is_placed_or_named_as_a_problem(tmp_path_factory: Any, lines: list[str]) -> None:
    path = Path(tmp_path_factory.mktemp("episodes")) / "episodes.jsonl"
    path.write_text("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines) + "\n")
    episodes, problems = episodes_from_file(path)
    content = [n for n, line in enumerate(path.read_text().splitlines(), start=1) if line.strip()]
    assert len(episodes) + len(problems) == len(content)
    assert all(p.startswith(f"{path}:") for p in problems)
