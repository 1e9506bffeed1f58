"""The whole stack on one episode of the embedded simulator, in one process, without ROS.

The same core objects the nodes host, wired directly: the MuJoCo world renders RGB-D and
instance images; the ground-truth detector and the instance fusion (perception node) feed
the scene-graph builder (scene-graph server); the occupancy map, frontiers and distance
fields (frontier planner) drive Habitat-style actions (forward 0.25 m, turn 30 degrees, one
frame each); rooms are segmented from the map and named from the objects in them; the
reasoner and the affordance executor run in :func:`~sg_search.search.loop.run_search`.
This is what ``sg-search bench closed-loop`` runs per episode; the ROS launch runs the same
parts as nodes over DDS. Frame ``map``, metres, radians.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.exploration import TURN, Explorer
from sg_search.config import default_params_file, from_params, load_node_params
from sg_search.mapping.occupancy import FREE
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import RgbdImage
from sg_search.perception.fusion import InstanceMap, ReportedInstances
from sg_search.perception.ground_truth import GroundTruthDetector, NoiseParams
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.geodesic import DistanceField
from sg_search.planning.viewpoints import ViewpointParams, box_viewpoints
from sg_search.reasoning.knowledge.model import KnowledgeModel
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.builder import SceneGraphBuilder
from sg_search.scene_graph.config import SceneGraphServerConfig
from sg_search.scene_graph.frontiers import FrontierObservation
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.rooms import MapRooms
from sg_search.search.config import ReasonerNodeConfig
from sg_search.search.executor import ExecutorError, SkillResult
from sg_search.search.loop import VerificationReport
from sg_search.search.verification import (
    Cooccurrence,
    Credibility,
    Verdict,
    context_support,
    goal_confidence,
)
from sg_search.sim.episodes import Episode
from sg_search.sim.mujoco.scene import episode_world
from sg_search.sim.mujoco.world import CameraConfig, Frame, SimError


@dataclass(frozen=True)
class EmbodiedParams:
    """The simulated robot (``embodied`` in config/sg_search.yaml).

    Attributes:
        width, height: camera image [px].
        tilt_rad: camera pitch, positive down.
        max_actions: forward/turn actions per episode.
        actions_per_target: most actions one navigation may take.
        arrive_m: how close [m] a navigation goal counts as reached.
        reach_m: how close to a container's box the base must be to open it [m].
        reach_radii: viewpoint circles [m] for manipulation (within reach).
        reach_tolerance_m: how close [m] to such a viewpoint the base must get.
        rooms_every: re-segment rooms at most every this many frames.
        kept_frames: the most recent RGB frames kept for VLM reasoners (by frame id).
    """

    width: int = 320
    height: int = 240
    tilt_rad: float = 0.25
    max_actions: int = 500
    actions_per_target: int = 200
    arrive_m: float = 0.3
    reach_m: float = 1.0
    reach_radii: tuple[float, ...] = (0.6, 0.75, 0.9)
    reach_tolerance_m: float = 0.1
    rooms_every: int = 20
    kept_frames: int = 16


@dataclass(frozen=True)
class StackConfig:
    """Every component's parameters, from one ROS params file."""

    embodied: EmbodiedParams
    perception: PerceptionConfig
    planner: FrontierPlannerConfig
    graph: SceneGraphServerConfig
    reasoner: ReasonerNodeConfig

    @classmethod
    def load(cls, path: Path | None = None) -> StackConfig:
        """From ``path`` (default: the shipped config/sg_search.yaml)."""
        path = path or default_params_file()

        def section(kind: Any, node: str) -> Any:
            return from_params(kind, load_node_params(path, node), source=f"{path}:{node}")

        return cls(
            section(EmbodiedParams, "embodied"),
            section(PerceptionConfig, "perception"),
            section(FrontierPlannerConfig, "frontier_planner"),
            section(SceneGraphServerConfig, "scene_graph_server"),
            section(ReasonerNodeConfig, "reasoner"),
        )


class EmbodiedEpisode:
    """One episode's world, perception, map and graph; also the executor's :class:`Skills`."""

    def __init__(
        self,
        episode: Episode,
        config: StackConfig | None = None,
        noise: NoiseParams | None = None,
        knowledge: KnowledgeModel | None = None,
    ) -> None:
        self.episode = episode
        self.config = config or StackConfig.load()
        c = self.config
        p = c.embodied
        self.world = episode_world(episode, CameraConfig(p.width, p.height))
        x, y, _ = self.world.pose
        self.world.set_pose(x, y, 0.0, tilt=p.tilt_rad)
        self.explorer = Explorer(self.world, on_frame=self._perceive)
        self.explorer.budget = p.max_actions
        self.detector = GroundTruthDetector(noise or c.perception.noise(), seed=c.perception.seed)
        self.instances = InstanceMap(c.perception.fusion(), c.perception.backprojection())
        self.graph = SceneGraph(c.graph.history_limit, c.graph.max_frame_ids)
        self.builder = SceneGraphBuilder(
            self.graph, c.graph.builder(), load_related_pairs(c.graph.related_categories_file or None)
        )
        self.knowledge = knowledge or KnowledgeModel.load_default()
        self.rooms = MapRooms()
        self.frames = 0
        self.recent_rgb: OrderedDict[int, np.ndarray] = OrderedDict()  # frame id -> RGB, for VLMs
        self._rooms_at = -p.rooms_every
        self._frontier_goals: dict[str, tuple[float, float]] = {}
        self._reported = ReportedInstances(self.instances)

    def release(self) -> None:
        """Release the renderer."""
        self.world.close()

    def __enter__(self) -> EmbodiedEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ------------------------------------------------------------------ sensing
    def _perceive(self, frame: Frame) -> None:
        """Perception and graph update for one frame (the perception node + graph server)."""
        self.frames += 1
        self.recent_rgb[self.frames] = frame.rgb
        while len(self.recent_rgb) > self.config.embodied.kept_frames:
            self.recent_rgb.popitem(last=False)
        image = RgbdImage(frame.rgb, frame.depth, frame.instance, frame.instances)
        detections = self.detector.detect(image)
        result = self.instances.integrate(
            detections, frame.depth, frame.intrinsics, frame.T_map_camera, self.frames
        )
        confirmed, removed = self._reported.after(result)
        if confirmed or removed:
            self.builder.integrate(self.frames, [i.as_object_instance() for i in confirmed], removed)

    def look_around(self) -> None:
        """The first observation and a full turn in place."""
        self.explorer.observe()
        for _ in range(round(2 * math.pi / TURN)):
            self.explorer.act(0.0, TURN)

    def read_graph(self) -> SceneGraph:
        """Refresh frontiers and (every ``rooms_every`` frames) rooms; the live graph."""
        states = self.explorer.map.states()
        field = self._field()
        segments = self.explorer.frontiers.extract(
            states, self.explorer.spec, field.distance if field else None
        )
        self._frontier_goals = {s.frontier_id: s.goal for s in segments}
        self.builder.integrate_frontiers(
            [
                FrontierObservation(s.frontier_id, (*s.centroid, 0.0), (*s.goal, 0.0), s.size, s.length)
                for s in segments
            ]
        )
        if self.frames - self._rooms_at >= self.config.embodied.rooms_every:
            self._rooms_at = self.frames
            self.rooms.update(self.graph, states == FREE, self.explorer.spec)
        return self.graph

    def _field(self) -> DistanceField | None:
        """The distance field of the safest clearance at which the base can plan at all."""
        return next((field for _, field in self.explorer.fields()), None)

    def distances(self) -> dict[str, float]:
        """Geodesic metres over the map from the base to every node the reasoner may pick."""
        field = self._field()
        if field is None:
            return {}
        out = {}
        for node in self.graph.nodes():
            point = self._frontier_goals.get(node.id, (node.position[0], node.position[1]))
            out[node.id] = float(field.distance_to(point))
        return out

    # ------------------------------------------------------------------ skills
    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        """Drive to a frontier's goal, a room's centre or a viewpoint of an object."""
        p = self.config.embodied
        before = self.world.travelled
        if node.kind == "frontier":
            goal = self._frontier_goals.get(node.id)
            if goal is None:
                return SkillResult(
                    False, message=f"frontier {node.id} is gone", code=ExecutorError.UNKNOWN_NODE
                )
            ok = self.explorer.drive_to(goal, p.arrive_m, p.actions_per_target)
        elif node.layer == Layer.ROOM:
            ok = self.explorer.drive_to(node.position[:2], 1.0, p.actions_per_target)
        else:
            ok = self._approach(node, p.reach_radii if purpose == "reach" else None)
        travelled = self.world.travelled - before
        if not ok:
            return SkillResult(False, travelled, f"could not reach {node.id} ({purpose})", retryable=True)
        return SkillResult(True, travelled, f"at {node.id}")

    def _approach(self, node: SceneNode, radii: tuple[float, ...] | None) -> bool:
        """To the best reachable viewpoint of ``node`` (VVD), then face it."""
        c = self.config.planner
        if node.bbox is None:
            return False
        states = self.explorer.map.states()
        params = c.viewpoints() if radii is None else ViewpointParams(radii=radii)
        views = []
        box = (np.array(node.bbox.center), np.array(node.bbox.size))
        for free, distances in self.explorer.fields():  # the safest clearance that has a viewpoint
            views = box_viewpoints(
                *box, states, free, self.explorer.spec, params, distances.distance,
                (c.obstacle_min_z, c.obstacle_max_z),
            )  # fmt: skip
            if views:
                break
        p = self.config.embodied
        tolerance = p.arrive_m if radii is None else p.reach_tolerance_m  # within reach means within it
        for view in views[:3]:
            if self.explorer.drive_to(view.xy, tolerance, p.actions_per_target):
                self.face(node)
                return True
        return False

    def face(self, node: SceneNode) -> None:
        """Turn the base (30-degree actions) and tilt the camera towards the node; one frame."""
        x, y, _ = self.world.pose
        target = node.bbox.center if node.bbox is not None else node.position
        self.explorer.turn_towards(math.atan2(target[1] - y, target[0] - x))
        distance = max(math.hypot(target[0] - x, target[1] - y), 0.3)
        tilt = math.atan2(self.world.camera.height_m - target[2], distance)
        self.world.set_pose(*self.world.pose, tilt=max(tilt, self.config.embodied.tilt_rad))
        self.explorer.observe()

    def open(self, node: SceneNode) -> SkillResult:
        """Open the simulated container under the perceived node's box."""
        return self._set_open(node, True)

    def close(self, node: SceneNode) -> SkillResult:
        """Close it again."""
        return self._set_open(node, False)

    def _set_open(self, node: SceneNode, open_: bool) -> SkillResult:
        point = node.bbox.center if node.bbox is not None else node.position
        handle = self.world.openable_near(*point)
        if handle is None:
            return SkillResult(
                False, message=f"{node.id}: nothing openable there", code=ExecutorError.MANIPULATION_FAILED
            )
        try:
            self.world.set_open(handle, open_, self.config.embodied.reach_m)
        except SimError as exc:
            return SkillResult(False, message=f"{node.id}: {exc}", code=ExecutorError.MANIPULATION_FAILED)
        return SkillResult(True, message=f"{'opened' if open_ else 'closed'} {node.id}")

    def look(self, node: SceneNode) -> SkillResult:
        """Face the node and observe it twice more (a small pan each way)."""
        self.face(node)
        self.explorer.act(0.0, TURN / 2)
        self.explorer.act(0.0, -TURN / 2)
        return SkillResult(True, message=f"looked at {node.id}")

    def set_state(self, node_id: str, state: NodeState) -> None:
        """Record an opened/explored node in the graph."""
        from dataclasses import replace

        node = self.graph.get(node_id)
        if node is not None and node.state != state:
            self.graph.upsert_node(replace(node, state=state))

    # ------------------------------------------------------------------ verification
    def verify(
        self, candidate: SceneNode, goal: str, context_scores: Cooccurrence | None = None
    ) -> VerificationReport:
        """Approach the candidate within reach, then re-observe it until the credibility
        verdict (see :mod:`sg_search.search.verification`); ``context_scores`` replace the
        commonsense co-occurrence in the context term (a reasoner's own, e.g. SG-Nav's)."""
        before = self.world.travelled
        params = self.config.reasoner.credibility()
        credibility = Credibility(candidate.id, params)
        self._approach(candidate, self.config.embodied.reach_radii)
        node: SceneNode | None = candidate
        while credibility.verdict == Verdict.PENDING:
            node = self.graph.get(candidate.id)
            if node is not None:
                self.face(node)
            context = context_support(
                self.graph, node or candidate, goal, context_scores or self._cooccurrence, params
            )
            credibility.add(goal_confidence(self.graph.get(candidate.id), goal), context)
        accepted = credibility.verdict == Verdict.ACCEPTED
        return VerificationReport(
            accepted,
            credibility.total,
            len(credibility.scores),
            self.world.travelled - before,
            credibility.summary(),
        )

    def _cooccurrence(self, labels: Sequence[str], goal: str) -> list[float]:
        return [float(v) for v in self.knowledge.cooccurrence(labels, [goal] * len(labels))]
