"""SCOUT's utility and selection rules, with fixed knowledge scores (the paper's example)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from sg_search.reasoning import ReasonerInput, SkillAffordance, available_reasoners
from sg_search.reasoning.knowledge.holder_prior import HolderPrior
from sg_search.reasoning.utility import UtilityParams, UtilityReasoner
from sg_search.scene_graph import Affordance, Layer, NodeState, SceneGraph, SceneNode

# METHODS.md §5: plate - kitchen 0.78, cabinet 0.94 -> 0.75; chair 0.12 -> 0.30;
# living room 0.30, sofa 0.00 -> 0.09.
ROOM_P = {"kitchen": 0.78, "living room": 0.30}
OBJECT_P = {"cabinet": 0.94, "chair": 0.12, "sofa": 0.0, "fridge": 0.5}


def rooms(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
    return np.array([ROOM_P.get(label, 0.0) for label in labels])


def objects(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
    return np.array([OBJECT_P.get(label, 0.0) for label in labels])


def house() -> SceneGraph:
    g = SceneGraph()
    surface = Affordance.SURFACE | Affordance.INSPECTABLE
    nodes = [
        SceneNode("kitchen_0", Layer.ROOM, "room", "kitchen", (0, 0, 0), state=NodeState.EXPLORED),
        SceneNode("living_0", Layer.ROOM, "room", "living room", (10, 0, 0), state=NodeState.EXPLORED),
        SceneNode("hall_0", Layer.ROOM, "room", "", (20, 0, 0), state=NodeState.UNEXPLORED),
        SceneNode(
            "cabinet_0",
            Layer.OBJECT,
            "container",
            "cabinet",
            (1, 0, 0),
            room_id="kitchen_0",
            affordances=Affordance.OPENABLE | Affordance.RECEPTACLE,
            state=NodeState.CLOSED,
        ),
        SceneNode(
            "chair_0", Layer.OBJECT, "object", "chair", (2, 0, 0), room_id="kitchen_0", affordances=surface
        ),
        SceneNode(
            "sofa_0", Layer.OBJECT, "object", "sofa", (11, 0, 0), room_id="living_0", affordances=surface
        ),
        SceneNode("frontier_0", Layer.OBJECT, "frontier", "frontier", (30, 0, 0)),
    ]
    for node in nodes:
        g.upsert_node(node)
    return g


def reasoner(**params: float | bool) -> UtilityReasoner:
    """With the paper's room influence (0.3; the stack's default is 0.1), no frontier floor
    (the stack's default is 0.3) and no holder prior (the stack's β is 2), so that its example
    holds."""
    paper = {"room_influence": 0.3, "frontier_floor": 0.0, "holder_prior": 0.0}
    return UtilityReasoner("scout", rooms, objects, UtilityParams(**{**paper, **params}))  # type: ignore[arg-type]


def test_utilities_reproduce_the_papers_example() -> None:
    r = reasoner()
    g = house()
    u = r.utilities(
        g, "plate", [g.node(i) for i in ("cabinet_0", "chair_0", "sofa_0", "hall_0", "frontier_0")]
    )
    assert u["cabinet_0"][0] == pytest.approx(0.78 * (0.3 + 0.7 * 0.94), abs=1e-9)
    assert round(u["cabinet_0"][0], 2) == 0.75
    assert round(u["chair_0"][0], 2) == 0.30
    assert round(u["sofa_0"][0], 2) == 0.09
    assert u["hall_0"][0] == 0.7  # unexplored room default
    assert u["frontier_0"][0] == 0.6  # no object within 3 m
    assert "kitchen" in u["cabinet_0"][1] and "0.78" in u["cabinet_0"][1]


def test_frontier_takes_the_best_nearby_object_and_noroom_ignores_the_room() -> None:
    g = house()
    near = reasoner(frontier_radius_m=25.0, frontier_share=1.0).utilities(g, "plate", [g.node("frontier_0")])
    assert near["frontier_0"][0] == pytest.approx(0.30 * (0.3 + 0.7 * 0.0))  # only the sofa is within 25 m
    shared = reasoner(frontier_radius_m=25.0).utilities(g, "plate", [g.node("frontier_0")])
    assert shared["frontier_0"][0] == pytest.approx(0.8 * near["frontier_0"][0])  # the default share
    noroom = reasoner(use_room=False).utilities(g, "plate", [g.node("cabinet_0")])
    assert noroom["cabinet_0"][0] == pytest.approx(0.94)


def test_a_frontier_beside_unlikely_furniture_is_still_worth_the_floor() -> None:
    # the sofa (0.09 for a plate) is the only object near the frontier: without a floor the
    # frontier is worth less than the kitchen's chair (0.30), and the robot inspects the chair
    # before it looks beyond the living room
    g = house()
    g.upsert_node(SceneNode("frontier_1", Layer.OBJECT, "frontier", "frontier", (12, 0, 0)))
    ids = ("frontier_1", "chair_0", "cabinet_0")
    bare = reasoner().utilities(g, "plate", [g.node(i) for i in ids])
    assert bare["frontier_1"][0] == pytest.approx(0.8 * 0.09, abs=0.01)
    assert bare["frontier_1"][0] < bare["chair_0"][0]
    floored = reasoner(frontier_floor=0.35).utilities(g, "plate", [g.node(i) for i in ids])
    assert floored["frontier_1"][0] == 0.35 > floored["chair_0"][0]
    assert floored["cabinet_0"][0] > floored["frontier_1"][0]  # a likely container still comes first


def test_margin_picks_the_nearest_of_the_good_and_zero_margin_is_greedy() -> None:
    g = house()
    distances = {"cabinet_0": 9.0, "hall_0": 2.0, "chair_0": 1.0, "sofa_0": 1.0, "frontier_0": 50.0}
    observation = ReasonerInput(g, "plate", distances)
    best = reasoner().decide(observation).best  # 0.75 (9 m) vs hall 0.7 (2 m): within 0.1
    assert best is not None and best.node_id == "hall_0" and best.affordance == SkillAffordance.NAVIGATE
    greedy = reasoner(margin=0.0).decide(observation)
    assert greedy.best is not None and greedy.best.node_id == "cabinet_0"
    assert greedy.best.affordance == SkillAffordance.OPEN
    assert [c.utility for c in greedy.ranked] == sorted((c.utility for c in greedy.ranked), reverse=True)
    assert "cabinet_0" in greedy.explanation


def test_request_words_and_plurals_do_not_reach_the_scorers() -> None:
    seen: list[str] = []

    def spy(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        seen.extend(queries)
        return objects(labels, queries)

    r = UtilityReasoner("scout", rooms, spy, UtilityParams(holder_prior=0.0))
    g = house()
    r.utilities(g, "Find the Plates", [g.node("cabinet_0")])
    assert set(seen) == {"plate"}


def test_rejected_nodes_are_not_offered() -> None:
    g = house()
    decision = reasoner(margin=0.0).decide(ReasonerInput(g, "plate", {}, rejected=frozenset({"cabinet_0"})))
    assert "cabinet_0" not in {c.node_id for c in decision.ranked}


def test_all_agents_of_the_benchmark_are_registered() -> None:
    assert {"random", "nearest", "sbert", "exhaustive", "scout", "scout-noroom", "scout-greedy"} <= set(
        available_reasoners()
    )


def test_the_prior_reorders_containers_the_knowledge_scores_alike() -> None:
    def alike(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        return np.array(
            [0.5 if label in ("cabinet", "chair") else objects([label], queries)[0] for label in labels]
        )

    prior = HolderPrior({("cabinet", "kitchen"): 0.0, ("chair", "kitchen"): 9.0}, smoothing=1.0)
    g = house()
    nodes = [g.node("cabinet_0"), g.node("chair_0")]
    plain = UtilityReasoner("scout", rooms, alike, UtilityParams(holder_prior=0.0)).utilities(
        g, "plate", nodes
    )
    assert plain["cabinet_0"][0] == plain["chair_0"][0]
    # chair: weight (9 + 1) / ((9 + 0 + 2) / 2) = 1.82, squared 3.31: odds 1 -> 3.31, p 0.768
    weighted = UtilityReasoner("scout", rooms, alike, UtilityParams(holder_prior=2.0), prior.weights)
    u = weighted.utilities(g, "plate", nodes)
    p_kitchen = 0.78  # the room scorer's p(plate in kitchen); influence 0.1: p_room * (0.1 + 0.9 p_cooc)
    chair = (10 / 5.5) ** 2
    assert u["chair_0"][0] == pytest.approx(p_kitchen * (0.1 + 0.9 * chair / (chair + 1)))
    cabinet = (1 / 5.5) ** 2
    assert u["cabinet_0"][0] == pytest.approx(p_kitchen * (0.1 + 0.9 * cabinet / (cabinet + 1)))
    with pytest.raises(ValueError, match="holder prior"):
        UtilityReasoner("scout", rooms, alike, UtilityParams(holder_prior=1.0))


def test_the_sbert_baseline_keeps_its_published_frontier_values() -> None:
    # SCOUT's SBERT baseline: a frontier near dissimilar objects is worth their share, below its
    # 0.25 default; scout's floor (0.3, above that default) would turn the baseline upside down
    from sg_search.reasoning.registry import create_reasoner

    sbert = create_reasoner("sbert", {})
    assert isinstance(sbert, UtilityReasoner)
    assert sbert.params.frontier_floor == 0.0 and sbert.params.frontier_default == 0.25


def test_relative_rooms_lift_the_likeliest_rooms_containers_above_the_frontier_floor() -> None:
    """A prawn: the knowledge's best room type is the kitchen, at only 0.26. Absolute, a found
    kitchen's fridge is worth less than the frontier floor and the robot drives past it;
    relative to the best room type, the kitchen counts as the likeliest room it is."""
    prawn_rooms = {"kitchen": 0.26, "living room": 0.05, "garage": 0.13}

    def room_scores(labels: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        return np.array([prawn_rooms.get(label, 0.0) for label in labels])

    g = house()
    fridge = SceneNode(
        "fridge_0", Layer.OBJECT, "container", "fridge", (1, 1, 0), room_id="kitchen_0",
        affordances=Affordance.OPENABLE | Affordance.RECEPTACLE, state=NodeState.CLOSED,
    )  # fmt: skip
    g.upsert_node(fridge)
    types = tuple(prawn_rooms)
    absolute = UtilityReasoner("scout", room_scores, objects, UtilityParams(holder_prior=0.0))
    relative = UtilityReasoner(
        "scout", room_scores, objects, UtilityParams(room_relative=True, holder_prior=0.0), room_types=types
    )
    u_abs = absolute.utilities(g, "prawn", [fridge, g.node("sofa_0")])
    u_rel = relative.utilities(g, "prawn", [fridge, g.node("sofa_0")])
    floor = UtilityParams().frontier_floor
    assert u_abs["fridge_0"][0] == pytest.approx(0.26 * (0.1 + 0.9 * 0.5)) and u_abs["fridge_0"][0] < floor
    assert u_rel["fridge_0"][0] == pytest.approx(0.1 + 0.9 * 0.5) and u_rel["fridge_0"][0] > floor
    assert u_rel["sofa_0"][0] == pytest.approx(0.05 / 0.26 * 0.1)  # other rooms by their ratio
    with pytest.raises(ValueError, match="room types"):
        UtilityReasoner("scout", room_scores, objects, UtilityParams(room_relative=True, holder_prior=0.0))
