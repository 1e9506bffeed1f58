"""A search as a Rerun recording: one ``sim_time`` timeline, everything in ``world`` (= ``map``,
z up, metres).

Entities: ``world/map`` (the occupancy grid as a textured quad in the floor plane),
``world/graph/{rooms,containers,objects}`` (boxes with category labels, coloured by layer and
state), ``world/graph/edges`` (line strips), ``world/frontiers``, ``world/robot`` (base pose),
``world/trajectory``, ``world/camera`` (pose + pinhole; ``rgb``, ``depth``, ``instances``
below it), ``world/target`` and ``decisions`` (text log). Core library: no ROS; the ROS node
``sg_search.ros.live_view`` feeds it from topics.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import rerun as rr
import rerun.blueprint as rrb
from numpy.typing import NDArray

from sg_search.geometry.transforms import quat_from_matrix
from sg_search.mapping.grid import GridSpec
from sg_search.scene_graph import EdgeKind, Layer, NodeState, SceneGraph

TIMELINE = "sim_time"
RGBA = tuple[int, int, int, int]
# One colour per thing a viewer must tell apart; the instance image uses the same ones.
KIND_COLOURS: dict[str, RGBA] = {
    "room": (150, 110, 200, 255),
    "container": (70, 130, 230, 255),
    "object": (240, 160, 40, 255),
    "target": (230, 40, 40, 255),
}
STATE_COLOURS: dict[NodeState, RGBA] = {NodeState.OPEN: (60, 190, 80, 255)}
EDGE_COLOURS: dict[EdgeKind, RGBA] = {
    EdgeKind.HIERARCHY: (150, 150, 150, 120),
    EdgeKind.SPATIAL: (60, 100, 230, 220),
    EdgeKind.ADJACENCY: (60, 200, 90, 220),
    EdgeKind.GROUP: (250, 150, 30, 220),
}
MAP_COLOURS = {"unknown": (150, 150, 150), "free": (235, 235, 235), "occupied": (40, 40, 40)}
DEPTH_UNITS_PER_M = 1000  # depth is stored as uint16 millimetres (half of float32, compresses better)
MAP_MARGIN = 10  # [cells] of unknown kept around the known part of the map
JPEG_QUALITY = 80  # camera images are stored as JPEG (a search's run.rrd stays a few MB per minute)
ROOM_HEIGHT = 0.02  # [m] rooms are drawn as floor patches of this thickness
OBJECT_SIZE = 0.15  # [m] cube edge for objects without a box
MAP_Z = -0.01  # [m] the map quad lies just under the floor patches


@dataclass(frozen=True)
class CameraFrame:
    """One camera frame: ``t_map_camera`` (4x4, optical frame: x right, y down, z forward) in
    ``map`` [m]; ``intrinsics`` (fx, fy, cx, cy) [px]; ``depth`` [m] (0 = no return);
    ``instances`` ids (0 = none) with ``instance_kinds`` id -> a key of KIND_COLOURS (ids it
    does not name, such as walls and floors, are background; without it every id is an object)."""

    t_map_camera: NDArray[np.float64]
    intrinsics: tuple[float, float, float, float]
    rgb: NDArray[np.uint8] | None = None
    depth: NDArray[np.float32] | None = None
    instances: NDArray[np.int32] | None = None
    instance_kinds: Mapping[int, str] | None = None


def known_window(states: NDArray[np.int8], margin: int = MAP_MARGIN) -> tuple[slice, slice] | None:
    """(rows, cols) slices around the known cells (>= 0) plus ``margin``; None if none is known."""
    rows, cols = np.nonzero(np.any(states >= 0, axis=1))[0], np.nonzero(np.any(states >= 0, axis=0))[0]
    if rows.size == 0:
        return None
    h, w = states.shape
    return (
        slice(max(0, rows[0] - margin), min(h, rows[-1] + 1 + margin)),
        slice(max(0, cols[0] - margin), min(w, cols[-1] + 1 + margin)),
    )


def occupancy_texture(states: NDArray[np.int8]) -> NDArray[np.uint8]:
    """(H, W, 3) RGB of grid cells (-1 unknown, 0 free, >= 50 occupied), row 0 = the
    *largest* y, as an image is stored."""
    image = np.empty((*states.shape, 3), dtype=np.uint8)
    image[:] = MAP_COLOURS["unknown"]
    image[states == 0] = MAP_COLOURS["free"]
    image[states >= 50] = MAP_COLOURS["occupied"]
    return np.ascontiguousarray(image[::-1])


def blueprint() -> rrb.Blueprint:
    """The layout a viewer opens with: the 3D scene large on the left; the camera's images and
    the decision log on the right."""
    return rrb.Blueprint(
        rrb.Horizontal(
            # The depth image projected into 3D would hide the map; the 2D views show the images.
            rrb.Spatial3DView(
                origin="world",
                contents=["+ world/**", "- world/camera/depth", "- world/camera/instances"],
                name="scene graph and map",
            ),
            rrb.Vertical(
                rrb.Horizontal(
                    rrb.Spatial2DView(origin="world/camera", contents="world/camera/rgb", name="rgb"),
                    rrb.Spatial2DView(
                        origin="world/camera", contents="world/camera/instances", name="instances"
                    ),
                ),
                rrb.Spatial2DView(origin="world/camera", contents="world/camera/depth", name="depth"),
                rrb.TextLogView(origin="decisions", name="decisions"),
            ),
            column_shares=[3, 2],
        ),
        rrb.SelectionPanel(state="collapsed"),
        rrb.TimePanel(state="expanded"),
    )


class SearchLog:
    """Logs one search into ``recording`` (see the module docstring). Not thread-safe: one
    caller (the live-view worker) logs at a time."""

    def __init__(self, recording: rr.RecordingStream) -> None:
        self.recording = recording
        self._trajectory: list[tuple[float, float, float]] = []
        self._kind_of_category: dict[str, str] = {}
        self.recording.log("world", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
        self.recording.log(
            "world/robot/body",
            rr.Boxes3D(centers=[[0.0, 0.0, 0.5]], half_sizes=[[0.22, 0.22, 0.5]], labels=["robot"]),
            static=True,
        )
        classes = [rr.AnnotationInfo(id=0, label="background", color=(0, 0, 0, 255))]
        classes += [
            rr.AnnotationInfo(id=i + 1, label=k, color=c) for i, (k, c) in enumerate(KIND_COLOURS.items())
        ]
        self.recording.log("world/camera/instances", rr.AnnotationContext(classes), static=True)

    @classmethod
    def to_file(cls, path: Path, application_id: str = "sg_search", viewer_url: str = "") -> SearchLog:
        """A recording saved to ``path`` (``.rrd``), and streamed to the viewer at ``viewer_url``
        (``rerun+http://127.0.0.1:PORT/proxy``) when one is given."""
        recording = rr.RecordingStream(application_id, recording_id=path.parent.name or None)
        sinks: list[rr.FileSink | rr.GrpcSink] = [rr.FileSink(str(path))]
        if viewer_url:
            sinks.append(rr.GrpcSink(viewer_url))
        recording.set_sinks(*sinks, default_blueprint=blueprint())
        return cls(recording)

    def set_time(self, sim_time_s: float) -> None:
        """Everything logged next belongs to this simulated time [s]."""
        self.recording.set_time(TIMELINE, duration=float(sim_time_s))

    def map(self, states: NDArray[np.int8], spec: GridSpec) -> None:
        """The known part of the occupancy grid as a textured quad in the floor plane of ``map``."""
        if states.shape != spec.shape:
            raise ValueError(f"occupancy grid {states.shape} does not match its spec {spec.shape}")
        window = known_window(states)
        if window is None:
            return
        rows, cols = window
        r = spec.resolution
        x0, y0 = spec.origin_x + cols.start * r, spec.origin_y + rows.start * r
        x1, y1 = spec.origin_x + cols.stop * r, spec.origin_y + rows.stop * r
        self.recording.log(
            "world/map",
            rr.Mesh3D(
                vertex_positions=[[x0, y0, MAP_Z], [x1, y0, MAP_Z], [x1, y1, MAP_Z], [x0, y1, MAP_Z]],
                triangle_indices=[[0, 1, 2], [0, 2, 3]],
                vertex_texcoords=[[0.0, 1.0], [1.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
                albedo_texture=occupancy_texture(states[rows, cols]),
            ),
        )

    def robot(self, x: float, y: float, yaw: float) -> None:
        """Base pose in ``map`` [m, rad]; the trajectory grows with every call."""
        half = yaw / 2.0
        self.recording.log(
            "world/robot",
            rr.Transform3D(
                translation=[x, y, 0.0], quaternion=rr.Quaternion(xyzw=[0, 0, math.sin(half), math.cos(half)])
            ),
        )
        self.recording.log(
            "world/robot/heading", rr.Arrows3D(origins=[[0.0, 0.0, 1.0]], vectors=[[0.5, 0.0, 0.0]])
        )
        if not self._trajectory or math.dist(self._trajectory[-1][:2], (x, y)) > 0.02:
            self._trajectory.append((x, y, 0.02))
            self.recording.log("world/trajectory", rr.LineStrips3D([self._trajectory], radii=0.02))

    def graph(self, graph: SceneGraph, target_id: str = "") -> None:
        """Rooms, containers and objects as labelled boxes; edges as line strips."""
        self._kind_of_category = {n.category: n.kind for n in graph.nodes(layer=Layer.OBJECT) if n.category}
        groups: dict[str, tuple[list[list[float]], list[list[float]], list[str], list[RGBA]]] = {
            "rooms": ([], [], [], []),
            "containers": ([], [], [], []),
            "objects": ([], [], [], []),
        }
        for node in graph.nodes():
            if node.layer == Layer.ROOM:
                name, kind = "rooms", "room"
            elif node.layer == Layer.OBJECT:
                name, kind = (
                    ("containers", "container") if node.kind == "container" else ("objects", "object")
                )
            else:
                continue
            if node.id == target_id:
                kind = "target"
            centers, sizes, labels, colours = groups[name]
            if node.bbox is not None:
                center, size = list(node.bbox.center), list(node.bbox.size)
            else:
                center, size = list(node.position), [OBJECT_SIZE] * 3
            if node.layer == Layer.ROOM:
                center[2], size[2] = ROOM_HEIGHT / 2.0, ROOM_HEIGHT
            centers.append(center)
            sizes.append([s / 2.0 for s in size])
            labels.append(node.category or node.id)
            colours.append(
                STATE_COLOURS.get(node.state, KIND_COLOURS[kind]) if kind != "target" else KIND_COLOURS[kind]
            )
        for name, (centers, half_sizes, labels, colours) in groups.items():
            self.recording.log(
                f"world/graph/{name}",
                rr.Boxes3D(centers=centers, half_sizes=half_sizes, labels=labels, colors=colours),
            )
        strips, colours = [], []
        for edge in graph.edges():
            a, b = graph.get(edge.source), graph.get(edge.target)
            if (
                a is None
                or b is None
                or Layer.ROOT in (a.layer, b.layer)
                or Layer.BUILDING in (a.layer, b.layer)
            ):
                continue
            strips.append([list(a.position), list(b.position)])
            colours.append(EDGE_COLOURS[edge.kind])
        self.recording.log("world/graph/edges", rr.LineStrips3D(strips, colors=colours, radii=0.01))

    def frontiers(self, points: Iterable[tuple[float, float]]) -> None:
        """Frontier goals in ``map`` [m]."""
        positions = [[x, y, 0.05] for x, y in points]
        self.recording.log("world/frontiers", rr.Points3D(positions, radii=0.08, colors=[(0, 200, 200, 255)]))

    def camera(self, frame: CameraFrame) -> None:
        """The camera's pose and pinhole, and the images it took."""
        fx, fy, cx, cy = frame.intrinsics
        shape = next(i.shape[:2] for i in (frame.depth, frame.rgb, frame.instances) if i is not None)
        t = frame.t_map_camera
        self.recording.log(
            "world/camera",
            rr.Transform3D(translation=t[:3, 3], quaternion=rr.Quaternion(xyzw=quat_from_matrix(t[:3, :3]))),
            rr.Pinhole(
                focal_length=[fx, fy],
                principal_point=[cx, cy],
                resolution=[shape[1], shape[0]],
                camera_xyz=rr.ViewCoordinates.RDF,
                image_plane_distance=0.5,
            ),
        )
        if frame.rgb is not None:
            self.recording.log("world/camera/rgb", rr.Image(frame.rgb).compress(jpeg_quality=JPEG_QUALITY))
        if frame.depth is not None:
            depth = np.nan_to_num(frame.depth, nan=0.0, posinf=0.0, neginf=0.0) * DEPTH_UNITS_PER_M
            millimetres = np.clip(depth, 0, np.iinfo(np.uint16).max).astype(np.uint16)
            self.recording.log("world/camera/depth", rr.DepthImage(millimetres, meter=DEPTH_UNITS_PER_M))
        if frame.instances is not None:
            self.recording.log("world/camera/instances", rr.SegmentationImage(self._instance_classes(frame)))

    def _instance_classes(self, frame: CameraFrame) -> NDArray[np.uint8]:
        """Instance ids -> the class of KIND_COLOURS their kind has (0 = background)."""
        assert frame.instances is not None
        class_of = {kind: i + 1 for i, kind in enumerate(KIND_COLOURS)}
        ids = np.unique(frame.instances)
        lut = np.zeros(ids.shape, dtype=np.uint8)
        for i, instance in enumerate(ids):
            kind = "object" if frame.instance_kinds is None else frame.instance_kinds.get(int(instance))
            if instance != 0 and kind is not None:
                lut[i] = class_of[kind]
        return lut[np.searchsorted(ids, frame.instances)]

    def kind_of_category(self, category: str) -> str | None:
        """The kind (``container``/``object``) the last logged graph gives ``category``; None
        where the graph holds no such node (walls, floors, what was not fused yet)."""
        return self._kind_of_category.get(category)

    def target(self, node_id: str, position: Sequence[float], utility: float, reason: str) -> None:
        """The reasoner's current target in ``map`` [m]."""
        label = f"{node_id} (utility {utility:.2f}): {reason}"[:160]
        self.recording.log(
            "world/target",
            rr.Points3D([list(position)], radii=0.15, colors=[KIND_COLOURS["target"]], labels=[label]),
        )

    def decision(self, text: str, level: str = "INFO") -> None:
        """A line of the decision log."""
        self.recording.log("decisions", rr.TextLog(text, level=level))

    def close(self) -> None:
        """Flush every sink (the ``.rrd`` is complete afterwards)."""
        self.recording.flush()
        self.recording.disconnect()
