"""MJCF for a laid-out house (:class:`~sg_search.sim.layout.HouseLayout`), in the ``map`` frame
(metres, z up).

- Walls: 2.5 m high, 1 cm thick boxes centred on every room edge (furniture stands flush
  against the edge, so a thicker wall would swallow its back), with gaps where the layout
  has doors. The planning raster keeps its own conservative 0.1 m walls.
- Furniture: boxes. Openable furniture is a carcass (back, sides, top, bottom panels) open
  towards the room, closed by a door on a vertical hinge at one front edge (joint
  ``<id>/hinge``, 0 = closed, ``OPEN_ANGLE`` = open) or, for ``opening: drawer`` categories,
  by a shallow top drawer that slides out along the front normal (joint ``<id>/slide``,
  0 = closed, 80 % of the depth = open) carrying what lies in it.
- Receptacles that do not open are open: one at least ``SHELVING_MIN_HEIGHT`` tall is shelving
  (a carcass open at the front with a shelf at half its height: a bookcase); a lower one is a
  basin (a block with a hollow ``BASIN_DEPTH`` deep under its rim: a sink, a bathtub, a bin).
- Small objects: boxes inside (on the carcass bottom, the shelf or the basin's floor), on top
  of furniture, or on a room's floor; on a basin, "on top" is in it too.
- The agent: two mocap bodies, ``agent`` (base footprint, a 0.2 m radius cylinder drawn
  for top-down views) and ``agent_camera`` (carries the camera ``agent_camera``); the
  simulator sets both poses, so the camera pose is known exactly.

Every body's name is the scene-graph id of what it belongs to; :class:`WorldSpec` keeps the
category of each, so rendered geoms map to (node id, category).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from sg_search.sim.layout import ROOM_HEIGHT, HouseLayout, PlacedFurniture

WALL_HALF = 0.005  # [m] half the thickness of a wall, centred on the room edge
PANEL = 0.02  # [m] carcass panel thickness
OPEN_ANGLE = 1.75  # [rad] door angle when open (100 degrees)
DRAWER_HEIGHT = 0.25  # [m] height of a drawer (one per drawer unit, at its top)
AGENT_RADIUS = 0.2  # [m]
FRONT_REACH_M = 0.3  # [m] how far behind the front edge a small object on deep furniture lies
SHELVING_MIN_HEIGHT = 1.2  # [m] a receptacle that does not open and is this tall is shelving
BASIN_DEPTH = 0.15  # [m] depth of a basin's hollow under its rim
FLOOR_GAP = 0.05  # [m] kept between an object on a room's floor and the walls and furniture around it
ROOM_COLOURS = {
    "kitchen": "0.85 0.80 0.70",
    "bathroom": "0.75 0.85 0.90",
    "bedroom": "0.85 0.78 0.85",
    "living_room": "0.80 0.85 0.75",
    "corridor": "0.80 0.80 0.80",
}


@dataclass(frozen=True)
class SmallObject:
    """A small object to place: id, category, and where (``relation`` "inside", "ontop" or
    "inroom"; ``holder`` = furniture id, or room id for "inroom")."""

    object_id: str
    category: str
    relation: str
    holder: str
    size: tuple[float, float, float] = (0.1, 0.1, 0.12)


@dataclass
class WorldSpec:
    """The MJCF text and what its bodies are."""

    xml: str
    categories: dict[str, str] = field(default_factory=dict)  # body name -> category
    openable: dict[str, str] = field(default_factory=dict)  # furniture id -> hinge/slide joint name
    open_value: dict[str, float] = field(default_factory=dict)  # furniture id -> joint value when open
    fronts: dict[str, tuple[float, float]] = field(default_factory=dict)  # furniture id -> unit normal
    # door id -> unit vector along its front from the centre towards the hinged edge
    hinge_sides: dict[str, tuple[float, float]] = field(default_factory=dict)


def front_normal(item: PlacedFurniture, layout: HouseLayout) -> tuple[float, float]:
    """Unit vector (x, y) from the item into its room: away from the nearest wall."""
    room = layout.room(item.room_id)
    cx, cy = item.center[0], item.center[1]
    gaps = {
        (1.0, 0.0): cx - item.size[0] / 2 - room.x0,
        (-1.0, 0.0): room.x1 - (cx + item.size[0] / 2),
        (0.0, 1.0): cy - item.size[1] / 2 - room.y0,
        (0.0, -1.0): room.y1 - (cy + item.size[1] / 2),
    }
    return min(gaps, key=lambda k: gaps[k])


def _box(name: str, pos: tuple[float, ...], half: tuple[float, ...], rgba: str, extra: str = "") -> str:
    p = " ".join(f"{v:.4f}" for v in pos)
    s = " ".join(f"{max(v, 1e-3):.4f}" for v in half)
    label = f' name="{name}"' if name else ""
    return f'<geom{label} type="box" pos="{p}" size="{s}" rgba="{rgba}"{extra}/>'


def wall_segments(layout: HouseLayout) -> list[tuple[float, float, float, float]]:
    """Wall boxes (x0, y0, x1, y1) on every room edge, minus the door gaps on that line."""
    out = []
    for room in layout.rooms:
        for horizontal, fixed, lo, hi in (
            (True, room.y0, room.x0, room.x1),
            (True, room.y1, room.x0, room.x1),
            (False, room.x0, room.y0, room.y1),
            (False, room.x1, room.y0, room.y1),
        ):
            cuts = sorted(
                (d.x - d.width / 2, d.x + d.width / 2)
                if horizontal
                else (d.y - d.width / 2, d.y + d.width / 2)
                for d in layout.doors
                if abs((d.y if horizontal else d.x) - fixed) < 0.05  # any door on this line, as the raster
            )
            start = lo
            for c0, c1 in [*cuts, (hi, hi)]:
                if c0 - start > 1e-3:
                    a, b = fixed - WALL_HALF, fixed + WALL_HALF
                    out.append((start, a, c0, b) if horizontal else (a, start, b, c0))
                start = max(start, c1)
    return out


def _furniture(item: PlacedFurniture, layout: HouseLayout, spec: WorldSpec, contents: str = "") -> str:
    """A furniture body; ``contents`` (MJCF of small objects, in the drawer's frame) go into a drawer."""
    cx, cy, cz = item.center
    sx, sy, sz = item.size
    name = item.furniture_id
    spec.categories[name] = item.category
    rgba = "0.62 0.48 0.35 1" if item.openable else "0.55 0.55 0.58 1"
    if not item.openable and _mouth(item) == "":
        body = _box("", (0, 0, 0), (sx / 2, sy / 2, sz / 2), rgba)
        return f'<body name="{name}" pos="{cx:.4f} {cy:.4f} {cz:.4f}">{body}</body>'
    nx, ny = front_normal(item, layout)
    spec.fronts[name] = (nx, ny)
    hx, hy, hz = sx / 2, sy / 2, sz / 2
    if _mouth(item) == "top":
        geoms = "".join(_box("", p, h, rgba) for p, h in _basin(hx, hy, hz))
        return f'<body name="{name}" pos="{cx:.4f} {cy:.4f} {cz:.4f}">{geoms}</body>'
    # Local frame of the body = map axes; the front face is at +normal.
    panels = [
        (
            (-nx * (hx - PANEL / 2), -ny * (hy - PANEL / 2), 0.0),
            (PANEL / 2 if nx else hx, PANEL / 2 if ny else hy, hz),
        ),
        ((0.0, 0.0, hz - PANEL / 2), (hx, hy, PANEL / 2)),
        ((0.0, 0.0, -hz + PANEL / 2), (hx, hy, PANEL / 2)),
    ]
    if nx:  # side panels perpendicular to the front
        panels += [((0.0, s * (hy - PANEL / 2), 0.0), (hx, PANEL / 2, hz)) for s in (-1, 1)]
    else:
        panels += [((s * (hx - PANEL / 2), 0.0, 0.0), (PANEL / 2, hy, hz)) for s in (-1, 1)]
    if _mouth(item) == "front":  # shelving: no door, a shelf at half height
        panels.append(((0.0, 0.0, 0.0), (hx, hy, PANEL / 2)))
        geoms = "".join(_box("", p, h, rgba) for p, h in panels)
        return f'<body name="{name}" pos="{cx:.4f} {cy:.4f} {cz:.4f}">{geoms}</body>'
    geoms = "".join(_box("", p, h, rgba) for p, h in panels)
    if item.opening == "drawer":
        drawer = _drawer(item, (nx, ny), spec, contents)
        return f'<body name="{name}" pos="{cx:.4f} {cy:.4f} {cz:.4f}">{geoms}{drawer}</body>'
    # Door: a panel on the front face, hinged at the edge with the larger coordinate along it.
    along = (0.0, 1.0) if nx else (1.0, 0.0)
    half_width = hy if nx else hx
    hinge = (nx * hx + along[0] * half_width, ny * hy + along[1] * half_width, 0.0)
    door_centre = (-along[0] * half_width, -along[1] * half_width, 0.0)
    door_half = (PANEL / 2 if nx else half_width, half_width if nx else PANEL / 2, hz)
    # Positive rotation about +z swings the free edge out of the carcass for this hinge side.
    axis_sign = 1.0 if (nx * along[1] - ny * along[0]) > 0 else -1.0
    joint = f"{name}/hinge"
    spec.openable[name] = joint
    spec.hinge_sides[name] = along
    door = (
        f'<body name="{name}/door" pos="{hinge[0]:.4f} {hinge[1]:.4f} {hinge[2]:.4f}">'
        f'<joint name="{joint}" type="hinge" axis="0 0 {axis_sign:.0f}" '
        f'range="0 {OPEN_ANGLE}" limited="true"/>'
        f"{_box('', door_centre, door_half, '0.70 0.55 0.40 1')}</body>"
    )
    spec.categories[f"{name}/door"] = item.category
    spec.open_value[name] = OPEN_ANGLE
    return f'<body name="{name}" pos="{cx:.4f} {cy:.4f} {cz:.4f}">{geoms}{door}</body>'


def _mouth(item: PlacedFurniture) -> str:
    """How a receptacle that does not open is open: "front" (shelving), "top" (a basin);
    "" for openable and solid furniture."""
    if item.openable or not item.receptacle:
        return ""
    return "front" if item.size[2] >= SHELVING_MIN_HEIGHT else "top"


def _basin(
    hx: float, hy: float, hz: float
) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
    """(centre, half size) boxes of a basin with half sizes (hx, hy, hz), in its body frame: a
    block up to ``BASIN_DEPTH`` under the rim and four rim walls around the hollow."""
    depth = min(BASIN_DEPTH, hz)
    rim_z = hz - depth / 2
    boxes = [((0.0, 0.0, -depth / 2), (hx, hy, hz - depth / 2))] if hz > depth else []
    boxes += [((s * (hx - PANEL / 2), 0.0, rim_z), (PANEL / 2, hy, depth / 2)) for s in (-1, 1)]
    boxes += [((0.0, s * (hy - PANEL / 2), rim_z), (hx, PANEL / 2, depth / 2)) for s in (-1, 1)]
    return boxes


def inner_floor(item: PlacedFurniture) -> float:
    """Height [m] of what a small object inside ``item`` (not in a drawer) stands on: the
    carcass bottom, the shelf of shelving, the floor of a basin."""
    bottom, top = item.center[2] - item.size[2] / 2, item.center[2] + item.size[2] / 2
    mouth = _mouth(item)
    if mouth == "front":
        return item.center[2] + PANEL / 2
    if mouth == "top":
        return top - min(BASIN_DEPTH, item.size[2] / 2)
    return bottom + PANEL


def _drawer(item: PlacedFurniture, normal: tuple[float, float], spec: WorldSpec, contents: str) -> str:
    """A shallow top drawer: a tray under the unit's top that slides out along the front normal
    (joint ``<id>/slide``, 0 = closed, 80 % of the depth = open), with a fixed panel closing
    the opening below it. What lies in the drawer is a child of the tray and moves with it."""
    nx, ny = normal
    hx, hy, hz = (s / 2 - PANEL for s in item.size)  # inner half sizes
    height = min(DRAWER_HEIGHT, hz)  # [m] the drawer's full height
    top = hz  # the drawer's top, under the unit's top panel
    bottom = top - height
    depth = 2 * (hx if nx else hy)
    travel = 0.8 * depth
    thin = (PANEL / 2 if nx else hx, PANEL / 2 if ny else hy)  # a panel across the depth axis
    front = (nx * (hx + PANEL / 2), ny * (hy + PANEL / 2))
    mid = (top + bottom) / 2
    walls = [
        ((0.0, 0.0, bottom + PANEL / 2), (hx, hy, PANEL / 2)),  # tray bottom
        ((*front, mid), (*thin, height / 2)),  # drawer front
        ((-nx * hx, -ny * hy, mid), (*thin, height / 2)),  # back
    ]
    if nx:
        walls += [((0.0, s * hy, mid), (hx, PANEL / 2, height / 2)) for s in (-1, 1)]
    else:
        walls += [((s * hx, 0.0, mid), (PANEL / 2, hy, height / 2)) for s in (-1, 1)]
    lower = ((*front, (bottom - hz - PANEL) / 2), (*thin, (bottom + hz + PANEL) / 2))  # fixed
    joint = f"{item.furniture_id}/slide"
    spec.openable[item.furniture_id] = joint
    spec.open_value[item.furniture_id] = travel
    spec.categories[f"{item.furniture_id}/drawer"] = item.category
    wood = "0.70 0.55 0.40 1"
    return (
        _box("", *lower, "0.62 0.48 0.35 1") + f'<body name="{item.furniture_id}/drawer" pos="0 0 0">'
        f'<joint name="{joint}" type="slide" axis="{nx:.0f} {ny:.0f} 0" '
        f'range="0 {travel:.4f}" limited="true"/>'
        + "".join(_box("", p, h, wood) for p, h in walls)
        + contents
        + "</body>"
    )


def drawer_floor(item: PlacedFurniture) -> float:
    """Height of a drawer's tray bottom above the unit's centre [m] (its contents stand on it)."""
    inner = item.size[2] / 2 - PANEL
    return inner - min(DRAWER_HEIGHT, inner) + PANEL


def _in_drawer(obj: SmallObject, layout: HouseLayout) -> PlacedFurniture | None:
    """The drawer unit ``obj`` lies in, if any."""
    if obj.relation != "inside":
        return None
    item = next((f for f in layout.furniture if f.furniture_id == obj.holder), None)
    return item if item is not None and item.openable and item.opening == "drawer" else None


def _drawer_content(obj: SmallObject, item: PlacedFurniture) -> str:
    """``obj`` on the tray bottom, in the drawer body's frame (the unit's centre)."""
    z = drawer_floor(item) + obj.size[2] / 2 + 1e-3
    half = " ".join(f"{s / 2:.4f}" for s in obj.size)
    return (
        f'<body name="{obj.object_id}" pos="0 0 {z:.4f}">'
        f'<geom type="box" size="{half}" rgba="0.85 0.15 0.15 1"/></body>'
    )


def _resting_point(obj: SmallObject, item: PlacedFurniture, layout: HouseLayout) -> tuple[float, float]:
    """Where (x, y) ``obj`` rests on or in ``item``: inside, at its centre; on top, at the centre
    or ``FRONT_REACH_M`` behind the middle of one of its edges, whichever is nearest the floor
    the robot can stand on (as things left on a bed or a long table lie near its free side).
    ObjectNav keeps only episodes whose target has such floor within 1 m; the centre of a
    double bed with another bed at its foot has none."""
    x, y = item.center[0], item.center[1]
    if obj.relation != "ontop":
        return x, y
    floor = _standing_floor(layout, item.room_id)
    if len(floor) == 0:
        return x, y
    half_x, half_y = (max(0.0, s / 2 - FRONT_REACH_M) for s in item.size[:2])
    spots = [(x, y), (x + half_x, y), (x - half_x, y), (x, y + half_y), (x, y - half_y)]
    gaps = [float(np.min(np.hypot(floor[:, 0] - sx, floor[:, 1] - sy))) for sx, sy in spots]
    return spots[int(np.argmin(gaps))]


def _standing_floor(layout: HouseLayout, room_id: str, step: float = 0.05) -> np.ndarray:
    """(N, 2) points [m] of the room where the base fits: ``AGENT_RADIUS`` from its walls
    and every furniture footprint."""
    return _clear_floor(layout, room_id, AGENT_RADIUS, AGENT_RADIUS, step)


def _clear_floor(layout: HouseLayout, room_id: str, half_x: float, half_y: float, step: float) -> np.ndarray:
    """(N, 2) points [m] of a ``step`` grid on the room's floor where a box of half sizes
    (``half_x``, ``half_y``) [m] fits clear of its walls and every furniture footprint."""
    room = layout.room(room_id)
    xs = np.arange(room.x0 + half_x, room.x1 - half_x + 1e-9, step)
    ys = np.arange(room.y0 + half_y, room.y1 - half_y + 1e-9, step)
    points: np.ndarray = np.stack([a.ravel() for a in np.meshgrid(xs, ys)], axis=1)
    clear: np.ndarray = points[_clear_of_furniture(layout, points, half_x, half_y)]
    return clear


def _clear_of_furniture(layout: HouseLayout, points: np.ndarray, half_x: float, half_y: float) -> np.ndarray:
    """Which of the (N, 2) ``points`` [m] a box of half sizes (``half_x``, ``half_y``) centred
    there keeps clear of every furniture footprint (a bool per point)."""
    clear = np.ones(len(points), dtype=bool)
    for f in layout.furniture:
        clear &= (np.abs(points[:, 0] - f.center[0]) >= f.size[0] / 2 + half_x) | (
            np.abs(points[:, 1] - f.center[1]) >= f.size[1] / 2 + half_y
        )
    return clear


def _floor_point(obj: SmallObject, layout: HouseLayout) -> tuple[float, float]:
    """Where (x, y) [m] ``obj`` lies on the floor of its room (``holder``): the room's centre,
    or where furniture stands there (a bed or a table would hold the object inside its box, out
    of every view), the point of a 5 cm grid nearest the centre that is ``FLOOR_GAP`` clear of
    the walls and of every furniture footprint. ValueError if furniture covers the floor."""
    half_x, half_y = obj.size[0] / 2 + FLOOR_GAP, obj.size[1] / 2 + FLOOR_GAP
    centre = np.asarray([layout.room(obj.holder).center], dtype=float)
    if _clear_of_furniture(layout, centre, half_x, half_y)[0]:
        return float(centre[0, 0]), float(centre[0, 1])
    floor = _clear_floor(layout, obj.holder, half_x, half_y, 0.05)
    if not len(floor):
        raise ValueError(f"no free floor for {obj.object_id!r} in {obj.holder} of {layout.scene}")
    best = int(np.argmin(np.hypot(*(floor - centre).T)))
    return float(floor[best, 0]), float(floor[best, 1])


def _small_object(obj: SmallObject, layout: HouseLayout) -> str:
    hx, hy, hz = (s / 2 for s in obj.size)
    if obj.relation == "inroom":
        x, y = _floor_point(obj, layout)
        z = hz
    else:
        item = next((f for f in layout.furniture if f.furniture_id == obj.holder), None)
        if item is None:
            raise KeyError(f"no furniture {obj.holder!r} in the layout of {layout.scene}")
        x, y = _resting_point(obj, item, layout)
        if obj.relation == "inside" or _mouth(item) == "top":
            z = inner_floor(item) + hz + 1e-3
        else:
            z = item.center[2] + item.size[2] / 2 + hz
    return (
        f'<body name="{obj.object_id}" pos="{x:.4f} {y:.4f} {z:.4f}">'
        f"{_box('', (0, 0, 0), (hx, hy, hz), '0.85 0.15 0.15 1')}</body>"
    )


def build_mjcf(
    layout: HouseLayout,
    objects: list[SmallObject] | None = None,
    width: int = 640,
    height: int = 480,
    fovy_deg: float = 60.0,
) -> WorldSpec:
    """The MJCF of the house with ``objects`` placed, and the body -> category table."""
    spec = WorldSpec("")
    x0, y0, x1, y1 = layout.bounds(margin=1.0)
    floors = "".join(
        _box(
            "",
            ((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, -0.005),
            ((r.x1 - r.x0) / 2, (r.y1 - r.y0) / 2, 0.005),
            ROOM_COLOURS.get(r.room_type, "0.78 0.76 0.72") + " 1",
        )
        for r in layout.rooms
    )
    walls = "".join(
        _box(
            "",
            ((a + c) / 2, (b + d) / 2, ROOM_HEIGHT / 2),
            ((c - a) / 2, (d - b) / 2, ROOM_HEIGHT / 2),
            "0.92 0.92 0.90 1",
        )
        for a, b, c, d in wall_segments(layout)
    )
    drawer_contents: dict[str, str] = {}
    small = ""
    for obj in objects or []:
        drawer = _in_drawer(obj, layout)
        if drawer is not None:
            drawer_contents[drawer.furniture_id] = drawer_contents.get(
                drawer.furniture_id, ""
            ) + _drawer_content(obj, drawer)
        else:
            small += _small_object(obj, layout)
        spec.categories[obj.object_id] = obj.category
    furniture = "".join(
        _furniture(f, layout, spec, drawer_contents.get(f.furniture_id, "")) for f in layout.furniture
    )
    extent = math.hypot(x1 - x0, y1 - y0)
    spec.xml = f"""<mujoco model="{layout.scene}_seed{layout.seed}">
  <compiler angle="radian"/>
  <statistic extent="{extent:.2f}" center="{(x0 + x1) / 2:.2f} {(y0 + y1) / 2:.2f} 1"/>
  <visual>
    <global offwidth="{width}" offheight="{height}"/>
    <map znear="0.005" zfar="5"/>
    <headlight ambient="0.45 0.45 0.45" diffuse="0.4 0.4 0.4" specular="0 0 0"/>
  </visual>
  <worldbody>
    <light directional="true" pos="0 0 10" dir="0.3 0.2 -1" diffuse="0.35 0.35 0.35" castshadow="false"/>
    <body name="house">{floors}{walls}</body>
    {furniture}
    {small}
    <body name="agent" mocap="true" pos="0 0 0">
      <geom type="cylinder" size="{AGENT_RADIUS} 0.05" pos="0 0 0.05" rgba="0.2 0.4 0.9 1"
            contype="0" conaffinity="0"/>
    </body>
    <body name="agent_camera" mocap="true" pos="0 0 0.9">
      <camera name="agent_camera" mode="fixed" fovy="{fovy_deg}" xyaxes="0 -1 0 0 0 1"/>
    </body>
  </worldbody>
</mujoco>
"""
    spec.categories["house"] = "structure"
    spec.categories["agent"] = "robot"
    return spec
