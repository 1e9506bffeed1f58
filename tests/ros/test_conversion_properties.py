"""Message conversions on any field values a message can carry (hypothesis): a node or edge
message becomes a core value that converts back to the same message, or a ValueError that names
the node or edge and the field."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sg_search_interfaces.msg import Box3D as Box3DMsg
from sg_search_interfaces.msg import SceneEdge as SceneEdgeMsg
from sg_search_interfaces.msg import SceneGraphUpdate
from sg_search_interfaces.msg import SceneNode as SceneNodeMsg

from sg_search.ros.conversions import (
    edge_from_msg,
    edge_to_msg,
    fronts_from_msg,
    fronts_to_msg,
    node_from_msg,
    node_to_msg,
    update_from_msg,
)

pytestmark = pytest.mark.ros

FLOATS = st.floats(allow_nan=True, allow_infinity=True)
UINT8 = st.integers(0, 255)
TEXT = st.text(max_size=16)


@st.composite
def _node_msg(draw: st.DrawFn) -> SceneNodeMsg:
    msg = SceneNodeMsg(
        id=draw(TEXT), layer=draw(UINT8), kind=draw(st.sampled_from(["object", "container", "room", ""])),
        category=draw(TEXT), confidence=draw(FLOATS), parent_id=draw(TEXT), room_id=draw(TEXT),
        affordances=draw(UINT8), state=draw(UINT8), observation_count=draw(st.integers(0, 2**31 - 1)),
        frame_ids=draw(st.lists(st.integers(0, 2**63 - 1), max_size=3)),
    )  # fmt: skip
    msg.position.x, msg.position.y, msg.position.z = draw(FLOATS), draw(FLOATS), draw(FLOATS)
    msg.bbox = Box3DMsg()
    msg.bbox.size.x = draw(st.floats(0.0, 10.0))
    return msg


@st.composite
def _edge_msg(draw: st.DrawFn) -> SceneEdgeMsg:
    return SceneEdgeMsg(
        source=draw(TEXT), target=draw(TEXT), kind=draw(UINT8), relation=draw(TEXT), origin=draw(UINT8),
        confidence=draw(FLOATS), frame_ids=draw(st.lists(st.integers(0, 2**63 - 1), max_size=3)),
    )  # fmt: skip


@given(_node_msg())
def test_a_node_message_converts_both_ways_or_is_refused_naming_node_and_field(msg: SceneNodeMsg) -> None:
    try:
        node = node_from_msg(msg)
    except ValueError as exc:
        text = str(exc)
        assert repr(msg.id) in text or "id must not be empty" in text, text
        return
    assert node.id == msg.id and not any(math.isnan(v) for v in node.position)
    assert 0.0 <= node.confidence <= 1.0
    assert node_from_msg(node_to_msg(node)) == node


@given(_edge_msg())
def test_an_edge_message_converts_both_ways_or_is_refused_naming_edge_and_field(msg: SceneEdgeMsg) -> None:
    try:
        edge = edge_from_msg(msg)
    except ValueError as exc:
        text = str(exc)
        assert text.startswith(f"SceneEdge {(msg.source, msg.target, msg.relation)}"), text
        return
    assert 0.0 <= edge.confidence <= 1.0
    assert edge_from_msg(edge_to_msg(edge)) == edge


@given(st.lists(_node_msg(), max_size=3), st.lists(_edge_msg(), max_size=3))
def test_an_update_with_one_bad_entry_is_refused_whole(
    nodes: list[SceneNodeMsg], edges: list[SceneEdgeMsg]
) -> None:
    msg = SceneGraphUpdate(sequence=2, base_sequence=1, nodes=nodes, edges=edges)
    good = 0
    for convert, items in ((node_from_msg, nodes), (edge_from_msg, edges)):
        for item in items:
            try:
                convert(item)  # type: ignore[operator]
                good += 1
            except ValueError:
                pass
    if good == len(nodes) + len(edges):
        update = update_from_msg(msg)
        assert len(update.nodes) == len(nodes) and len(update.edges) == len(edges)
    else:
        with pytest.raises(ValueError):
            update_from_msg(msg)


@given(st.lists(st.floats(-1.0, 1.0, width=32), max_size=9))
def test_container_sides_come_back_in_pairs_or_the_field_is_named(flat: list[float]) -> None:
    """A float32[] of sides (refused_fronts) reads as (x, y) pairs that write back to it; an odd
    length is a ValueError naming the field."""
    if len(flat) % 2:
        with pytest.raises(ValueError, match="refused_fronts has an odd length"):
            fronts_from_msg(flat, "refused_fronts")
        return
    fronts = fronts_from_msg(flat, "refused_fronts")
    assert len(fronts) == len(flat) // 2 and fronts_to_msg(fronts) == flat
