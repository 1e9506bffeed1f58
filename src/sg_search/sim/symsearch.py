"""SymSearch (SCOUT's symbolic benchmark) on a laid-out bddl house: the agent sees a partial
scene graph and acts on nodes; no rendering.

- Start: the start room is explored (its furniture visible); rooms behind its doors are
  known as unexplored rooms with hidden attributes (no category).
- Navigate to a room: it becomes explored (category and furniture revealed) and the rooms
  behind its doors appear. Open a container: its content is revealed.
- The target is visible once its room is explored, unless it is inside an openable
  container that is still closed.
- Travel cost: geodesic distance on a 0.1 m occupancy raster of the layout (walls with
  door gaps, furniture as obstacles, 0.2 m robot radius), to a room's centre or to the
  free cell nearest a container.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from sg_search.mapping.grid import GridSpec
from sg_search.mapping.occupancy import FREE, OCCUPIED, UNKNOWN
from sg_search.planning.geodesic import DistanceField, PlannerParams, traversable
from sg_search.reasoning.base import Candidate, SkillAffordance
from sg_search.scene_graph import Affordance, Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.prior import add_prior
from sg_search.search.reports import ExecutionReport
from sg_search.sim.episodes import Episode
from sg_search.sim.layout import HouseLayout

RESOLUTION = 0.1
PLANNER = PlannerParams(robot_radius=0.2, snap_radius=1.2)
TARGET_ID = "target"
ENTRY_DEPTH = 0.5  # [m] into a room from its door counts as having entered it


def rasterize(layout: HouseLayout) -> tuple[np.ndarray, GridSpec]:
    """Traversable cells of the layout (walls between rooms, door gaps, furniture blocked)."""
    spec = layout.grid(RESOLUTION, margin=0.5)
    states = np.full(spec.shape, UNKNOWN, dtype=np.int8)

    def cells(ax: float, ay: float, bx: float, by: float) -> tuple[slice, slice]:
        """Cells whose centre lies in [ax, bx] x [ay, by]. Centres sit half a cell off the
        layout's 0.1 m grid, so rounding never moves a one-cell wall in or out of a room."""

        def span(lo: float, hi: float, origin: float) -> slice:
            first = int(np.ceil((lo - origin) / RESOLUTION - 0.5))
            last = int(np.floor((hi - origin) / RESOLUTION - 0.5))
            return slice(max(first, 0), last + 1)

        return span(ay, by, spec.origin_y), span(ax, bx, spec.origin_x)

    for room in layout.rooms:
        states[cells(room.x0, room.y0, room.x1, room.y1)] = OCCUPIED
    for room in layout.rooms:  # interiors free, one cell of wall left around each room
        states[
            cells(room.x0 + RESOLUTION, room.y0 + RESOLUTION, room.x1 - RESOLUTION, room.y1 - RESOLUTION)
        ] = FREE
    for door in layout.doors:
        half = door.width / 2
        states[cells(door.x - half, door.y - half, door.x + half, door.y + half)] = FREE
    for item in layout.furniture:
        if item.center[2] - item.size[2] / 2 < 1.0:  # wall units hang above the robot's base
            states[
                cells(
                    item.center[0] - item.size[0] / 2,
                    item.center[1] - item.size[1] / 2,
                    item.center[0] + item.size[0] / 2,
                    item.center[1] + item.size[1] / 2,
                )
            ] = OCCUPIED
    return traversable(states, spec, PLANNER), spec


_RASTERS: dict[tuple[str, int], tuple[np.ndarray, GridSpec]] = {}


def _raster(layout: HouseLayout) -> tuple[np.ndarray, GridSpec]:
    """:func:`rasterize`, once per (scene, layout seed): every agent of an episode shares it."""
    key = (layout.scene, layout.seed)
    if key not in _RASTERS:
        _RASTERS[key] = rasterize(layout)
    return _RASTERS[key]


class SymSearchEnv:
    """One episode: the observed graph, the agent's position, and the cost so far."""

    def __init__(self, layout: HouseLayout, episode: Episode) -> None:
        self.layout, self.episode = layout, episode
        self.truth = add_prior(layout.to_prior(), SceneGraph())
        self.free, self.spec = _raster(layout)
        self._field_cache: tuple[tuple[float, float], DistanceField] | None = None
        start = self._point_of(episode.start_room_id)
        self.position = start
        self.path_length = 0.0
        self.graph = SceneGraph()
        for node in (self.truth.node("root"), self.truth.node("building_0")):
            self.graph.upsert_node(node)
        self._explore(episode.start_room_id)
        target_point = self._point_of(episode.container_id or episode.room_id)
        self.shortest = self._field().distance_to(target_point)

    # ------------------------------------------------------------------ observation
    def _point_of(self, node_id: str) -> tuple[float, float]:
        """Where the agent goes for a node: a room is entered through its first door (its centre
        may be furnished), anything else is approached at its own position."""
        node = self.truth.node(node_id)
        doors = [d for d in self.layout.doors if node_id in (d.room_a, d.room_b)]
        if node.layer != Layer.ROOM or not doors:
            return (node.position[0], node.position[1])
        door, (cx, cy) = doors[0], self.layout.room(node_id).center
        step = ENTRY_DEPTH / max(float(np.hypot(cx - door.x, cy - door.y)), 1e-6)
        return (door.x + (cx - door.x) * step, door.y + (cy - door.y) * step)

    def _explore(self, room_id: str) -> None:
        with self.graph.transaction():
            self.graph.upsert_node(self.truth.node(room_id))  # category revealed, explored
            room = self.graph.node(room_id)
            self.graph.upsert_node(replace(room, state=NodeState.EXPLORED))
            for child in self.truth.children(room_id):
                self.graph.upsert_node(child)
            for edge in self.truth.edges_of(room_id):
                other = edge.target if edge.source == room_id else edge.source
                if edge.relation == "door" and other not in self.graph:
                    hidden = self.truth.node(other)
                    self.graph.upsert_node(
                        SceneNode(
                            other,
                            Layer.ROOM,
                            "room",
                            "",
                            hidden.position,
                            hidden.bbox,
                            parent_id="building_0",
                            affordances=Affordance.NAVIGABLE,
                            state=NodeState.UNEXPLORED,
                        )
                    )
            self._reveal_target()

    def _reveal_target(self) -> None:
        e = self.episode
        room = self.graph.get(e.room_id)
        if room is None or room.state != NodeState.EXPLORED or TARGET_ID in self.graph:
            return
        holder = self.graph.get(e.container_id) if e.container_id else None
        closed = (
            holder is not None and holder.affordances & Affordance.OPENABLE and holder.state != NodeState.OPEN
        )
        if closed and e.relation == "inside":
            return
        parent = holder.id if holder is not None else e.room_id
        point = self.truth.node(parent).position
        self.graph.upsert_node(
            SceneNode(
                TARGET_ID,
                Layer.OBJECT,
                "object",
                e.query,
                point,
                parent_id=parent,
                room_id=e.room_id,
                affordances=Affordance.INSPECTABLE,
                observation_count=1,
            )
        )

    @property
    def found(self) -> bool:
        """True once the target is visible."""
        return TARGET_ID in self.graph

    # ------------------------------------------------------------------ acting
    def _field(self) -> DistanceField:
        """Distance field from the agent; one per position (the reasoner and the step share it)."""
        if self._field_cache is None or self._field_cache[0] != self.position:
            self._field_cache = (self.position, DistanceField(self.free, self.spec, self.position, PLANNER))
        return self._field_cache[1]

    def distances(self) -> dict[str, float]:
        """Geodesic distance [m] from the agent to every node of the observed graph."""
        field = self._field()
        return {
            n.id: field.distance_to((n.position[0], n.position[1]))
            for n in self.graph.nodes()
            if n.layer in (Layer.ROOM, Layer.OBJECT)
        }

    def execute(self, candidate: Candidate) -> ExecutionReport:
        """Go to the node and do its affordance; the path length is the geodesic distance."""
        point = self._point_of(candidate.node_id)
        travel = self._field().distance_to(point)
        if not np.isfinite(travel):
            return ExecutionReport(False, 0.0, f"{candidate.node_id} is unreachable")
        self.position = point
        self.path_length += travel
        node = self.graph.node(candidate.node_id)
        if candidate.affordance == SkillAffordance.NAVIGATE and node.layer == Layer.ROOM:
            self._explore(node.id)
        elif candidate.affordance == SkillAffordance.OPEN:
            self.graph.upsert_node(replace(node, state=NodeState.OPEN))
            self._reveal_target()
        return ExecutionReport(True, travel)
