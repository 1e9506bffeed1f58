"""Find nodes by category text, kind and room (what the query service answers)."""

from __future__ import annotations

from sg_search.perception.categories import normalise_category, query_category
from sg_search.scene_graph.graph import SceneGraph
from sg_search.scene_graph.model import SceneNode


def find_nodes(
    graph: SceneGraph,
    text: str = "",
    kind: str = "",
    room_id: str = "",
    max_results: int = 0,
) -> list[SceneNode]:
    """Nodes matching all given filters; exact category matches first, then by confidence.

    ``text`` is a category or a request ("find the passports"); a node matches when its
    category equals the normalised text or contains it as whole words ("coffee table"
    matches "table"). Empty filters do not filter. ``max_results`` 0 means no limit.
    """
    wanted = query_category(text) if text.strip() else ""
    scored: list[tuple[int, float, SceneNode]] = []
    for node in graph.nodes():
        if kind and node.kind != kind:
            continue
        if room_id and node.room_id != room_id:
            continue
        rank = 0
        if wanted:
            if not node.category:
                continue
            category = normalise_category(node.category)
            if category == wanted:
                rank = 0
            elif f" {wanted} " in f" {category} ":
                rank = 1
            else:
                continue
        scored.append((rank, -node.confidence, node))
    scored.sort(key=lambda item: (item[0], item[1]))
    nodes = [node for _, _, node in scored]
    return nodes[:max_results] if max_results > 0 else nodes
