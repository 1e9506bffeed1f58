"""Procedural, seeded floor plans for bddl houses (``map`` frame, metres, z up).

bddl gives rooms and furniture but no geometry or adjacency, so both are generated and
marked synthetic:
- room rectangles sized by type and furniture count (aspect ratio drawn from the seed);
- with a corridor: the first corridor is a hub strip and the other rooms line both sides
  of it, each with a door to it; without one: rooms packed in rows and joined by a
  spanning tree of doors between rooms that share at least ``door_width`` of wall;
- furniture with its back to the walls, in order of size, leaving gaps at doors; wall
  units (top cabinets, microwaves) hang above the floor units; what the walls cannot take
  goes into the room's interior with aisles around it. Items that still do not fit are
  counted in ``unplaced``, never dropped silently.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.config import from_params, load_node_params
from sg_search.mapping.grid import GridSpec
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.sim.bddl_scenes import (
    HouseInventory,
    RoomInventory,
    furniture_specs,
    layout_constants,
    load_house,
)

WALL_GAP = 0.1  # [m] between neighbouring items along a wall
DOOR_CLEARANCE = 0.5  # [m] kept free on each side of a door's centre, beyond half its width
ROOM_HEIGHT = 2.5  # [m]
AISLE = 0.6  # [m] kept free around items placed away from the walls
MAX_DEPTH_SHARE = 0.6  # an item along a wall may reach this share of the way across the room
SMALL_AISLE = 0.25  # [m] around small items (chairs stand close to tables and each other)
SMALL_ITEM = 0.6  # [m] items no larger than this count as small
MAP_MARGIN_M = 1.0  # [m] the robot's map reaches this far beyond a house's rooms


@dataclass(frozen=True)
class RoomRect:
    """A room's floor rectangle [m]."""

    room_id: str
    room_type: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def center(self) -> tuple[float, float]:
        """Centre of the floor [m]."""
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    def contains(self, x: float, y: float) -> bool:
        """True if the point (x, y) [m] lies on the floor rectangle (its edges included)."""
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


@dataclass(frozen=True)
class Door:
    """A doorway between two rooms: centre on the shared wall [m], width [m]."""

    room_a: str
    room_b: str
    x: float
    y: float
    width: float


@dataclass(frozen=True)
class PlacedFurniture:
    """A furniture item: box centre and size (x, y, z extents) [m], facing into its room."""

    furniture_id: str
    category: str
    room_id: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]
    openable: bool
    receptacle: bool
    surface: bool
    opening: str = "hinge"  # "hinge" or "drawer" (see FurnitureSpec)


@dataclass
class HouseLayout:
    """A laid-out house; ``metadata['synthetic_adjacency']`` is always True."""

    scene: str
    seed: int
    rooms: list[RoomRect] = field(default_factory=list)
    doors: list[Door] = field(default_factory=list)
    furniture: list[PlacedFurniture] = field(default_factory=list)
    unplaced: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def bounds(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) [m] around every room, grown by ``margin``."""
        return (
            min(r.x0 for r in self.rooms) - margin,
            min(r.y0 for r in self.rooms) - margin,
            max(r.x1 for r in self.rooms) + margin,
            max(r.y1 for r in self.rooms) + margin,
        )

    def map_grid(self, resolution: float) -> GridSpec:
        """The robot's map of this house: ``resolution`` [m] cells reaching :data:`MAP_MARGIN_M`
        beyond its rooms (the in-process robot's map, and the frontier planner node's grid when
        the simulator hosts the house: :func:`planner_grid_params`)."""
        return self.grid(resolution, MAP_MARGIN_M)

    def grid(self, resolution: float, margin: float) -> GridSpec:
        """A grid of ``resolution`` [m] cells covering :meth:`bounds` (``margin``)."""
        x0, y0, x1, y1 = self.bounds(margin)
        return GridSpec(
            resolution, int(np.ceil((x1 - x0) / resolution)), int(np.ceil((y1 - y0) / resolution)), x0, y0
        )

    def room(self, room_id: str) -> RoomRect:
        """The room with this id (KeyError naming it otherwise)."""
        for room in self.rooms:
            if room.room_id == room_id:
                return room
        raise KeyError(f"layout of {self.scene} has no room {room_id!r}")

    def to_prior(self) -> dict[str, Any]:
        """The scene-graph prior format (see sg_search.scene_graph.prior)."""
        return {
            "frame_id": "map",
            "rooms": [
                {
                    "id": r.room_id,
                    "category": r.room_type.replace("_", " "),
                    "center": [*r.center, ROOM_HEIGHT / 2],
                    "size": [r.x1 - r.x0, r.y1 - r.y0, ROOM_HEIGHT],
                }
                for r in self.rooms
            ],
            "doors": [[d.room_a, d.room_b] for d in self.doors],
            "furniture": [
                {
                    "id": f.furniture_id,
                    "category": f.category.replace("_", " "),
                    "room": f.room_id,
                    "center": list(f.center),
                    "size": list(f.size),
                    "affordances": [
                        a
                        for a, on in (
                            ("openable", f.openable),
                            ("receptacle", f.receptacle),
                            ("surface", f.surface),
                        )
                        if on
                    ],
                    "state": "closed" if f.openable else "unknown",
                }
                for f in self.furniture
            ],
        }


def _room_size(room: RoomInventory, rng: random.Random, constants: dict[str, Any]) -> tuple[float, float]:
    areas = constants["room_area"]
    area = float(areas.get(room.room_type, areas["default"])) + constants["area_per_item"] * sum(
        room.furniture.values()
    )
    area = max(area, 3.0)
    aspect = rng.uniform(1.0, 1.5)
    width = round(math.sqrt(area * aspect), 1)
    return width, round(max(area / width, 1.6), 1)


def layout_house(house: HouseInventory, seed: int = 0) -> HouseLayout:
    """A deterministic floor plan of ``house`` for ``seed``."""
    rng = random.Random(f"{house.name}:{seed}")
    constants = layout_constants()
    layout = HouseLayout(house.name, seed, metadata={"synthetic_adjacency": True, "source": "bddl 3.6.0"})
    corridors = [r for r in house.rooms if r.room_type == "corridor"]
    if corridors:
        _corridor_plan(house, corridors[0], rng, constants, layout)
    else:
        _packed_plan(house, rng, constants, layout)
    for room in house.rooms:
        _furnish(layout, room, rng)
    return layout


def _corridor_plan(
    house: HouseInventory,
    hub: RoomInventory,
    rng: random.Random,
    constants: dict[str, Any],
    layout: HouseLayout,
) -> None:
    width, door = constants["corridor_width"], constants["door_width"]
    others = [r for r in house.rooms if r.room_id != hub.room_id]
    sizes = {r.room_id: _room_size(r, rng, constants) for r in others}
    sides: dict[int, float] = {1: 0.0, -1: 0.0}  # x cursor above (+1) and below (-1) the corridor
    placed = []
    for room in others:
        side = 1 if sides[1] <= sides[-1] else -1
        w, h = sizes[room.room_id]
        x0 = sides[side]
        y0, y1 = (width, width + h) if side == 1 else (-h, 0.0)
        placed.append(RoomRect(room.room_id, room.room_type, x0, y0, x0 + w, y1))
        sides[side] += w
    length = max(max(sides.values()), 3.0)
    layout.rooms.append(RoomRect(hub.room_id, hub.room_type, 0.0, 0.0, length, width))
    layout.rooms.extend(placed)
    for rect in placed:
        y = width if rect.y0 >= width else 0.0
        layout.doors.append(Door(hub.room_id, rect.room_id, (rect.x0 + rect.x1) / 2, y, door))


def _packed_plan(
    house: HouseInventory, rng: random.Random, constants: dict[str, Any], layout: HouseLayout
) -> None:
    sizes = [(r, *_room_size(r, rng, constants)) for r in house.rooms]
    row_limit = math.sqrt(sum(w * h for _, w, h in sizes)) * 1.3
    x = y = row_height = 0.0
    for room, w, h in sizes:
        if x > 0 and x + w > row_limit:
            x, y, row_height = 0.0, y + row_height, 0.0
        layout.rooms.append(RoomRect(room.room_id, room.room_type, x, y, x + w, y + h))
        x += w
        row_height = max(row_height, h)
    _spanning_doors(layout, constants["door_width"])


def _shared_wall(a: RoomRect, b: RoomRect) -> tuple[float, float, float] | None:
    """(x, y, length) of the middle of the wall segment two rooms share, or None."""
    eps = 1e-6
    if abs(a.x1 - b.x0) < eps or abs(b.x1 - a.x0) < eps:
        lo, hi = max(a.y0, b.y0), min(a.y1, b.y1)
        x = a.x1 if abs(a.x1 - b.x0) < eps else a.x0
        return (x, (lo + hi) / 2, hi - lo) if hi > lo else None
    if abs(a.y1 - b.y0) < eps or abs(b.y1 - a.y0) < eps:
        lo, hi = max(a.x0, b.x0), min(a.x1, b.x1)
        y = a.y1 if abs(a.y1 - b.y0) < eps else a.y0
        return ((lo + hi) / 2, y, hi - lo) if hi > lo else None
    return None


def _spanning_doors(layout: HouseLayout, door: float) -> None:
    """BFS tree of doors over rooms that share enough wall, from the largest room."""
    rooms = layout.rooms
    if not rooms:
        return
    start = max(rooms, key=lambda r: (r.x1 - r.x0) * (r.y1 - r.y0))
    seen, queue = {start.room_id}, deque([start])
    while queue:
        current = queue.popleft()
        for other in rooms:
            if other.room_id in seen:
                continue
            wall = _shared_wall(current, other)
            if wall is not None and wall[2] >= door + 2 * DOOR_CLEARANCE * 0.5:
                layout.doors.append(Door(current.room_id, other.room_id, wall[0], wall[1], door))
                seen.add(other.room_id)
                queue.append(other)
    layout.metadata["disconnected_rooms"] = sorted(r.room_id for r in rooms if r.room_id not in seen)


def _furnish(layout: HouseLayout, room: RoomInventory, rng: random.Random) -> None:
    specs = furniture_specs()
    rect = layout.room(room.room_id)
    items = [(c, i) for c, n in room.furniture.items() for i in range(n)]
    rng.shuffle(items)
    items.sort(key=lambda item: -specs[item[0]].size[0])
    doors = [d for d in layout.doors if room.room_id in (d.room_a, d.room_b)]
    walls = [  # (start xy, direction, length, inward normal)
        ((rect.x0, rect.y0), (1, 0), rect.x1 - rect.x0, (0, 1)),
        ((rect.x1, rect.y0), (0, 1), rect.y1 - rect.y0, (-1, 0)),
        ((rect.x1, rect.y1), (-1, 0), rect.x1 - rect.x0, (0, -1)),
        ((rect.x0, rect.y1), (0, -1), rect.y1 - rect.y0, (1, 0)),
    ]
    cursors = {"floor": [0.0] * 4, "wall": [0.0] * 4}
    door_zones = _door_zones(doors)  # also doors on the perpendicular walls near a corner
    boxes: dict[str, list[tuple[float, float, float, float]]] = {"floor": [], "wall": []}
    spans: dict[str, list[tuple[float, float]]] = {"floor": [], "wall": []}  # [m] bottom, top per box
    counter: dict[str, int] = {}
    for category, _ in items:
        spec = specs[category]
        layer = "wall" if spec.wall_mounted else "floor"
        w, d, h = spec.size
        # a wall unit and a floor unit share a stretch of wall only where one is above the other
        beside = "floor" if layer == "wall" else "wall"
        bottom, top = spec.elevation, spec.elevation + h
        clashing = [
            b for b, (z0, z1) in zip(boxes[beside], spans[beside], strict=True) if z0 < top and bottom < z1
        ]
        spot = None
        for k, (origin, direction, length, normal) in enumerate(walls):
            if d > MAX_DEPTH_SHARE * (rect.x1 - rect.x0 if normal[0] else rect.y1 - rect.y0):
                continue
            start = cursors[layer][k] + WALL_GAP
            while start + w + WALL_GAP <= length:
                moved = _skip_doors(start, w, origin, direction, doors)
                if moved != start:
                    start = moved
                    continue
                mid = start + w / 2
                cx = origin[0] + direction[0] * mid + normal[0] * d / 2
                cy = origin[1] + direction[1] * mid + normal[1] * d / 2
                size_x, size_y = (w, d) if direction[0] else (d, w)
                box = (cx - size_x / 2, cy - size_y / 2, cx + size_x / 2, cy + size_y / 2)
                blocking = boxes[layer] + clashing + (door_zones if layer == "floor" else [])
                if not any(_boxes_overlap(box, other) for other in blocking):
                    spot = (k, start, cx, cy, size_x, size_y, box)
                    break
                start += WALL_GAP  # blocked by an item in the corner: slide along
            if spot is not None:
                break
        if spot is None and layer == "floor":
            spot = _interior_spot(rect, w, d, boxes[layer] + door_zones)
        if spot is None:
            layout.unplaced[category] = layout.unplaced.get(category, 0) + 1
            continue
        k, start, cx, cy, size_x, size_y, box = spot
        counter[category] = counter.get(category, 0) + 1
        layout.furniture.append(
            PlacedFurniture(
                f"{room.room_id}/{category}_{counter[category] - 1}",
                category,
                room.room_id,
                (round(cx, 3), round(cy, 3), round(spec.elevation + h / 2, 3)),
                (size_x, size_y, h),
                spec.openable,
                spec.receptacle,
                spec.surface,
                spec.opening,
            )
        )
        boxes[layer].append(box)
        spans[layer].append((bottom, top))
        if k >= 0:
            cursors[layer][k] = start + w


def _door_zones(doors: list[Door]) -> list[tuple[float, float, float, float]]:
    """Squares kept free in front of and behind every door (as boxes, for overlap tests)."""
    return [
        (
            d.x - d.width / 2 - DOOR_CLEARANCE,
            d.y - d.width / 2 - DOOR_CLEARANCE,
            d.x + d.width / 2 + DOOR_CLEARANCE,
            d.y + d.width / 2 + DOOR_CLEARANCE,
        )
        for d in doors
    ]


def _interior_spot(
    rect: RoomRect, w: float, d: float, boxes: list[tuple[float, float, float, float]]
) -> tuple[int, float, float, float, float, float, tuple[float, float, float, float]] | None:
    """First free spot on a 0.1 m raster inside the room keeping ``AISLE`` to walls and other items
    (tables and chairs of restaurants and offices that the walls cannot take)."""
    cell = 0.1
    aisle = AISLE if max(w, d) > SMALL_ITEM else SMALL_AISLE
    cols, rows = int((rect.x1 - rect.x0) / cell), int((rect.y1 - rect.y0) / cell)
    taken = np.zeros((rows, cols), dtype=np.int32)
    for x0, y0, x1, y1 in boxes:  # grown by the aisle, so a window of the item's size must be empty
        c0, c1 = int((x0 - aisle - rect.x0) / cell), math.ceil((x1 + aisle - rect.x0) / cell)
        r0, r1 = int((y0 - aisle - rect.y0) / cell), math.ceil((y1 + aisle - rect.y0) / cell)
        taken[max(r0, 0) : max(r1, 0), max(c0, 0) : max(c1, 0)] = 1
    margin = math.ceil(aisle / cell)
    taken[:margin, :], taken[-margin:, :], taken[:, :margin], taken[:, -margin:] = 1, 1, 1, 1
    kw, kd = math.ceil(w / cell), math.ceil(d / cell)
    if kd > rows or kw > cols:
        return None
    table = np.pad(taken.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    window = table[kd:, kw:] - table[:-kd, kw:] - table[kd:, :-kw] + table[:-kd, :-kw]
    free = np.argwhere(window == 0)
    if len(free) == 0:
        return None
    r, c = (int(v) for v in free[0])
    x, y = rect.x0 + (c + kw / 2) * cell, rect.y0 + (r + kd / 2) * cell
    return (-1, 0.0, x, y, w, d, (x - w / 2, y - d / 2, x + w / 2, y + d / 2))


def _boxes_overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return min(a[2], b[2]) - max(a[0], b[0]) > 1e-9 and min(a[3], b[3]) - max(a[1], b[1]) > 1e-9


def _skip_doors(
    start: float,
    width: float,
    origin: tuple[float, float],
    direction: tuple[int, int],
    doors: list[Door],
) -> float:
    """Move ``start`` along the wall past any door the item would block."""
    for door in doors:
        along = (door.x - origin[0]) * direction[0] + (door.y - origin[1]) * direction[1]
        across = abs((door.x - origin[0]) * direction[1] - (door.y - origin[1]) * direction[0])
        if across > 1e-6:
            continue  # the door is on another wall
        lo, hi = along - door.width / 2 - DOOR_CLEARANCE, along + door.width / 2 + DOOR_CLEARANCE
        if start < hi and start + width > lo:
            start = hi
    return start


def planner_grid_params(scene: str, layout_seed: int, params_file: Path | str) -> dict[str, Any]:
    """The frontier planner node's grid parameters (``width``, ``height`` [cells], ``origin_x``,
    ``origin_y`` [m] in ``map``) for the simulator's house ``scene`` laid out with
    ``layout_seed``: :meth:`HouseLayout.map_grid` at the planner's resolution in
    ``params_file``. Over DDS the planner then maps what the in-process robot maps; its shipped
    40 m x 40 m around the origin leaves 13 of the bddl houses partly outside, some with the
    start (``sg-search demo`` and ``sim.launch.py`` pass these)."""
    planner = from_params(FrontierPlannerConfig, load_node_params(params_file, "frontier_planner"))
    spec = layout_house(load_house(scene), layout_seed).map_grid(planner.resolution)
    return {"width": int(spec.width), "height": int(spec.height),
            "origin_x": float(spec.origin_x), "origin_y": float(spec.origin_y)}  # fmt: skip
