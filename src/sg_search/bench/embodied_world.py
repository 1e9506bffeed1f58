"""The in-process world: the whole stack on one episode of the embedded simulator, without ROS.

The same core objects the nodes host, wired to the MuJoCo world instead of topics: the
rendered RGB-D and instance images go through the perception pipeline
(:class:`~sg_search.perception.pipeline.PerceptionPipeline`, the perception node's) into the
scene-graph builder (the scene-graph server's); the occupancy map, frontiers and the one
navigator (the frontier planner's) drive the base in Habitat's actions (forward 0.25 m, turn
30 degrees, one frame each: :mod:`sg_search.bench.sim_robot`); rooms are segmented from the
map and named from their objects. It is a :class:`~sg_search.search.world.VerifyingWorld` for
:func:`~sg_search.search.loop.run_search` and :class:`~sg_search.search.verification.Verifier`,
and the :class:`~sg_search.search.executor.Skills` of the affordance executor. This is what
``sg-search bench closed-loop`` runs per episode. Frame ``map``, metres, radians.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.bench.failures import EpisodeFacts
from sg_search.bench.sim_robot import SimRobot
from sg_search.config import default_params_file, from_params, load_node_params, nested_sections
from sg_search.geometry import Pose2D
from sg_search.mapping.occupancy import FREE
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.detection import RgbdImage
from sg_search.perception.ground_truth import GroundTruthDetector, NoiseParams
from sg_search.perception.pipeline import PerceptionPipeline
from sg_search.perception.room_segmentation import RoomSegmentationParams
from sg_search.planning.approach import ApproachDriver, Reached, approach
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.planning.discrete import DiscreteParams
from sg_search.planning.navigator import NavError
from sg_search.planning.stall import point_ahead
from sg_search.reasoning.base import Candidate
from sg_search.reasoning.knowledge.model import KnowledgeModel
from sg_search.reasoning.knowledge.room_naming import knowledge_map_rooms
from sg_search.reasoning.registry import section_key
from sg_search.scene_graph import Layer, NodeState, SceneGraph, SceneNode
from sg_search.scene_graph.builder import SceneGraphBuilder
from sg_search.scene_graph.config import SceneGraphServerConfig
from sg_search.scene_graph.frontier_nodes import FrontierObservation
from sg_search.scene_graph.fronts import RefusedFronts, approach_distance, measured_at, node_viewpoint
from sg_search.scene_graph.groups import load_related_pairs
from sg_search.scene_graph.observations import current_unit, seen_within_reach
from sg_search.search.config import ExecutorNodeConfig, ReasonerNodeConfig
from sg_search.search.executor import AffordanceExecutor, ExecutorError, SkillResult, navigated
from sg_search.search.outcome import SearchOutcome
from sg_search.search.reports import ExecutionReport
from sg_search.search.verification import follow_candidate
from sg_search.sim.episodes import Episode
from sg_search.sim.mujoco.config import SimBridgeConfig
from sg_search.sim.mujoco.scene import episode_world
from sg_search.sim.mujoco.world import Frame, SimError, WrongSideError

TARGET = "target"  # the simulator's id of the episode's target object


@dataclass(frozen=True)
class EmbodiedParams:
    """The in-process episode's budgets and tolerances (``embodied`` in config/sg_search.yaml);
    the simulated robot itself (camera, reach) is ``sim_bridge``'s, its base ``frontier_planner``'s.

    Attributes:
        max_actions: forward/turn actions per episode.
        actions_per_target: most actions one navigation may take.
        arrive_m: how close [m] a navigation goal counts as reached.
        rooms_every: re-segment rooms at most every this many frames.
        forward_step_m, turn_step_deg: Habitat's action sizes [m, deg] (forward, turn).
        turn_hysteresis_deg, drift_tolerance_m: when the discrete base turns [deg, m]
            (:mod:`sg_search.planning.discrete`).
    """

    max_actions: int = 500
    actions_per_target: int = 200
    arrive_m: float = 0.3
    rooms_every: int = 20
    forward_step_m: float = 0.25
    turn_step_deg: float = 30.0
    turn_hysteresis_deg: float = 15.0
    drift_tolerance_m: float = 0.1

    def discrete(self) -> DiscreteParams:
        """The action sizes of the discrete base and when it turns."""
        return DiscreteParams(
            self.forward_step_m,
            math.radians(self.turn_step_deg),
            math.radians(self.turn_hysteresis_deg),
            self.drift_tolerance_m,
        )


@dataclass(frozen=True)
class StackConfig:
    """Every component's parameters, from one ROS params file."""

    embodied: EmbodiedParams
    sim: SimBridgeConfig
    perception: PerceptionConfig
    planner: FrontierPlannerConfig
    graph: SceneGraphServerConfig
    rooms: RoomSegmentationParams
    reasoner: ReasonerNodeConfig
    executor: ExecutorNodeConfig
    reasoner_sections: dict[str, dict[str, Any]]

    @classmethod
    def load(cls, path: Path | None = None) -> StackConfig:
        """From ``path`` (default: the shipped config/sg_search.yaml)."""
        path = path or default_params_file()

        def section(kind: Any, node: str) -> Any:
            return from_params(kind, load_node_params(path, node), source=f"{path}:{node}")

        graph = load_node_params(path, "scene_graph_server")  # the server's and its rooms section

        return cls(
            section(EmbodiedParams, "embodied"),
            section(SimBridgeConfig, "sim_bridge"),
            section(PerceptionConfig, "perception"),
            section(FrontierPlannerConfig, "frontier_planner"),
            from_params(SceneGraphServerConfig, graph, source=f"{path}:scene_graph_server"),
            from_params(
                RoomSegmentationParams,
                nested_sections(graph).get("rooms", {}),
                source=f"{path}:scene_graph_server: rooms",
            ),
            section(ReasonerNodeConfig, "reasoner"),
            section(ExecutorNodeConfig, "affordance_executor"),
            nested_sections(load_node_params(path, "reasoner")),
        )

    def reasoner_params(self, name: str) -> dict[str, Any]:
        """What reasoner ``name`` is made with: the shared values and its own section."""
        return self.reasoner.reasoner_params(self.reasoner_sections.get(section_key(name)))


class EmbodiedEpisode:
    """One episode's world, perception, map and graph (module docstring)."""

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
        self.world = episode_world(episode, c.sim.camera())
        x, y, _ = self.world.pose
        self.world.set_pose(x, y, 0.0, tilt=c.sim.camera_tilt_rad)
        self.robot = SimRobot(self.world, c.planner, p.max_actions, self._perceive, p.discrete())
        detector = GroundTruthDetector(noise, seed=c.perception.seed) if noise is not None else None
        self.perception = PerceptionPipeline(c.perception, detector)
        self.scene_graph = SceneGraph(c.graph.history_limit, c.graph.max_frame_ids)
        self.builder = SceneGraphBuilder(
            self.scene_graph, c.graph.builder(), load_related_pairs(c.graph.related_categories_file or None)
        )
        self.knowledge = knowledge or KnowledgeModel.load_default()
        self.executor = AffordanceExecutor(self, c.executor.navigation_retries, c.executor.open_sides)
        self.refused_fronts = RefusedFronts()  # sides containers would not open from
        self.rooms = knowledge_map_rooms(self.knowledge, params=c.rooms)
        self.frames = 0
        self.recent_rgb: OrderedDict[int, np.ndarray] = OrderedDict()  # frame id -> RGB, for VLMs
        self._rooms_at = -p.rooms_every
        self._frontier_goals: dict[str, tuple[float, float]] = {}
        self.opened: set[str] = set()  # simulator ids of the containers opened
        self.target_nodes: set[str] = set()  # graph ids ever given to the target (evaluation)

    def release(self) -> None:
        """Release the renderer."""
        self.world.close()

    def __enter__(self) -> EmbodiedEpisode:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # ------------------------------------------------------------------ sensing
    def _perceive(self, frame: Frame) -> None:
        """One frame through the perception pipeline into the graph (the perception node and
        the scene-graph server)."""
        self.frames += 1
        self.recent_rgb[self.frames] = frame.rgb
        while len(self.recent_rgb) > self.config.reasoner.kept_frames:
            self.recent_rgb.popitem(last=False)
        image = RgbdImage(frame.rgb, frame.depth, frame.instance, frame.instances)
        update = self.perception.process(image, frame.intrinsics, frame.T_map_camera)
        self.target_nodes.update(i.instance_id for i in update.confirmed if i.main_source == TARGET)
        if update:
            self.builder.integrate(
                self.frames, [i.as_object_instance() for i in update.confirmed], update.removed
            )

    def look_around(self, level: bool = False) -> SkillResult:
        """A full turn in place (twelve 30-degree actions); ``level``: the head aimed as the ROS
        simulator's ``look_at`` aims it at a point ahead (executor ``level_look_*``), down
        again after."""
        if level:
            e, s = self.config.executor, self.config.sim
            ahead = point_ahead(self.world.pose, e.level_look_ahead_m)
            self.world.aim_head((*ahead, e.level_look_height_m), s.head_lift_max_m, s.look_down_min_rad)
        self.robot.look_around()
        if level:
            self.world.set_pose(*self.world.pose, tilt=self.config.sim.camera_tilt_rad, lift=0.0)
        return SkillResult(
            True, message="turned a full turn in place" + (", the head level" if level else "")
        )

    # ------------------------------------------------------------------ the world seam
    def graph(self) -> SceneGraph:
        """Refresh frontiers and (every ``rooms_every`` frames) rooms; the live graph."""
        states = self.robot.map.states()
        segments = self.robot.open_frontiers()
        self._frontier_goals = {s.frontier_id: s.goal for s in segments}
        self.builder.integrate_frontiers(
            [
                FrontierObservation(s.frontier_id, (*s.centroid, 0.0), (*s.goal, 0.0), s.size, s.length)
                for s in segments
            ]
        )
        if self.frames - self._rooms_at >= self.config.embodied.rooms_every:
            self._rooms_at = self.frames
            self.rooms.update(self.scene_graph, states == FREE, self.robot.spec)
        return self.scene_graph

    def pose(self) -> Pose2D:
        """The base in ``map``."""
        return self.robot.pose()

    def recent_images(self) -> Mapping[int, Any]:
        """The last ``kept_frames`` RGB frames by frame id."""
        return self.recent_rgb

    def distances(self) -> dict[str, float]:
        """Geodesic metres over the map from the base to every node the reasoner may pick: to a
        frontier's goal, to where the base would stand to open a container
        (:func:`~sg_search.scene_graph.fronts.standing_points`), else to the node's position."""
        field = self.robot.frontier_field() or self.robot.field()
        if field is None:
            return {}
        out = {}
        radii = self.config.planner.reach_radii
        for node in self.scene_graph.nodes():
            refused = self.refused_fronts.of(node.id)
            points = measured_at(node, self.scene_graph.get, radii, refused, self._frontier_goals)
            out[node.id] = approach_distance(field.distance_to(p) for p in points)
        return out

    def execute(self, candidate: Candidate) -> ExecutionReport:
        """The affordance executor with this world's skills."""
        return self.executor.execute(candidate, self.scene_graph)

    def stop(self) -> None:
        """Nothing moves between actions."""

    def approach(self, node: SceneNode) -> ExecutionReport:
        """Within reach of the candidate (the planner's ``reach_radii``), facing it with the head up: the
        search ends here, and what lies in an open drawer shows only from above."""
        before = self.world.travelled
        ok = self._approach(node, within_reach=True).arrived
        if ok:  # not face(): the head stays up
            self._aim(node)
            self.robot.observe()
        message = f"at {node.id}" if ok else f"could not get within reach of {node.id}"
        return ExecutionReport(ok, self.world.travelled - before, message)

    def reobserve(self, node: SceneNode, after_frame: int) -> SceneNode | None:
        """Face the candidate from above (one frame; the head stays up while verifying); its
        node if a newer frame saw it."""
        current = follow_candidate(self.scene_graph, node, node.category)
        self._aim(current or node)
        self.robot.observe()
        seen = follow_candidate(self.scene_graph, node, node.category)
        return seen if seen is not None and seen.frame_ids and seen.frame_ids[-1] > after_frame else None

    def cooccurrence(self, labels: Sequence[str], goal: str) -> list[float]:
        """p(goal with label) from the commonsense knowledge (verification's context)."""
        return self.knowledge.cooccurrence_with(labels, goal)

    # ------------------------------------------------------------------ skills
    def navigate(self, node: SceneNode, purpose: str) -> SkillResult:
        """Drive to a frontier's goal, a room's centre or a viewpoint of an object."""
        p = self.config.embodied
        before = self.world.travelled
        if node.kind == "frontier":
            goal = self._frontier_goals.get(node.id)
            if goal is None:
                return navigated(NavError.UNKNOWN_NODE, 0.0, node, purpose)
            seen = [False]  # the map saw beyond the frontier on the way: choose again from here

            def beyond_seen() -> bool:
                seen[0] = self.robot.frontier_seen(goal)
                return seen[0]

            drive = self.robot.drive_to(goal, p.arrive_m, p.actions_per_target, until=beyond_seen)
            code, why = (NavError.NONE, "") if seen[0] else (drive.code, drive.message)
        elif node.layer == Layer.ROOM:
            drive = self.robot.drive_to(
                node.position[:2], self.config.executor.room_arrive_m, p.actions_per_target
            )
            code, why = drive.code, drive.message
        else:
            end = self._approach(node, within_reach=purpose == "reach")
            if end.arrived:
                self.face(node)
            code, why = end.code(), end.message()
        return navigated(code, self.world.travelled - before, node, purpose, why)

    def _approach(self, node: SceneNode, within_reach: bool) -> Reached:
        """To the best reachable viewpoint of ``node`` (VVD; or within reach of it), by the
        approach the planner node runs too (:func:`~sg_search.planning.approach.approach`); the
        caller faces it. An object the base already sees within reach
        (:func:`~sg_search.scene_graph.observations.seen_within_reach`) is reached where it
        stands, as the planner node's choice."""
        if within_reach and seen_within_reach(
            self.scene_graph, node, self.world.pose[:2], self.config.planner.reach_m
        ):
            return Reached(True)
        p = self.config.embodied
        tolerance = self.config.planner.reach_tolerance_m if within_reach else p.arrive_m
        robot = self.robot
        host = ApproachDriver(
            choose=lambda failed: self._viewpoint(node, within_reach, failed),
            drive=lambda goal, allowance: robot.drive_to(goal, tolerance, p.actions_per_target, allowance),
            position=lambda: (self.world.pose[0], self.world.pose[1]),
            way=lambda goal: robot.navigator.way(self.world.pose[:2], goal),
            odometer=lambda: self.world.travelled,
        )
        return approach(host, tolerance, robot.spec.resolution, robot.navigator.params)

    def _viewpoint(
        self, node: SceneNode, within_reach: bool, failed: Sequence[tuple[float, float]]
    ) -> tuple[float, float] | None:
        """The planner node's choice (:func:`~sg_search.scene_graph.fronts.node_viewpoint`) on
        the current map, away from ``failed`` goals."""
        pose = self.world.pose[:2]
        return node_viewpoint(
            self.scene_graph, node, pose, self.refused_fronts.of(node.id), self.robot.map.states(),
            self.robot.navigator.fields(pose), self.robot.spec, self.config.planner, within_reach, failed,
        )  # fmt: skip

    def face(self, node: SceneNode) -> None:
        """Turn the base (30-degree actions) and look at the node from above; one frame."""
        self._aim(node)
        self.robot.observe()
        self._head_down(node)

    def _aim(self, node: SceneNode) -> None:
        """Face the node, raise the head and tilt the camera at it (:meth:`SimWorld.aim_head`,
        over the head's whole tilt range, as the ROS simulator's ``look_at``: up into a wall
        cabinet too)."""
        x, y, _ = self.world.pose
        target = node.bbox.center if node.bbox is not None else node.position
        self.robot.turn_towards(math.atan2(target[1] - y, target[0] - x))
        s = self.config.sim
        self.world.aim_head(target, s.head_lift_max_m, s.look_down_min_rad)

    def _head_down(self, node: SceneNode) -> None:
        """The head down again, still tilted towards the node (no lift), as the base drives on."""
        target = node.bbox.center if node.bbox is not None else node.position
        s = self.config.sim
        self.world.aim_head(target, 0.0, 0.0, s.camera_tilt_rad)

    def open(self, node: SceneNode) -> SkillResult:
        """Open the simulated container under the perceived node's box."""
        return self._set_open(node, True)

    def close(self, node: SceneNode) -> SkillResult:
        """Close what its open opened (the node's box may have moved since: a container fused
        with one behind the wall), else the container under its box."""
        return self._set_open(node, False)

    def _set_open(self, node: SceneNode, open_: bool) -> SkillResult:
        point = node.bbox.center if node.bbox is not None else node.position
        try:
            handle = self.world.set_open_for(node.id, point, open_, self.config.sim.reach_m)
        except SimError as exc:
            wrong_side = open_ and isinstance(exc, WrongSideError)
            other_side = wrong_side and self.refused_fronts.refuse(node, self.world.pose[:2])
            return SkillResult(
                False,
                message=f"{node.id}: {exc}",
                retryable=other_side,
                code=ExecutorError.MANIPULATION_FAILED,
            )
        if open_:
            self.opened.add(handle)
        return SkillResult(True, message=f"{'opened' if open_ else 'closed'} {node.id}")

    def look(self, node: SceneNode) -> SkillResult:
        """Look at the node from above and observe it twice more (a small pan each way)."""
        self._aim(node)
        self.robot.observe()
        half = self.robot.base.params.turn_step_rad / 2
        self.robot.act(0.0, half)
        self.robot.act(0.0, -half)
        self._head_down(node)
        return SkillResult(True, message=f"looked at {node.id}")

    def set_state(self, node: SceneNode, state: NodeState) -> None:
        """Record an opened/explored node in the graph, on the unit it is now."""
        now = current_unit(self.scene_graph, node)
        if now is not None and now.state != state:
            self.scene_graph.upsert_node(replace(now, state=state))

    # ------------------------------------------------------------------ evaluation
    def facts(self, outcome: SearchOutcome, success: bool, budget_spent: bool) -> EpisodeFacts:
        """What happened, for the failure taxonomy (:mod:`sg_search.bench.failures`)."""
        episode, world = self.episode, self.world
        room = world.layout.room(episode.room_id)
        entered = any(room.contains(x, y) for x, y in self.robot.visited)
        detected = any(TARGET in i.sources for i in self.perception.instances.instances.values())
        return EpisodeFacts(
            success=success,
            verified=outcome.success,
            found_target=outcome.found is not None and outcome.found.id in self.target_nodes,
            end="BUDGET" if budget_spent and not outcome.success else outcome.error.name,
            entered_room=entered,
            needs_opening=episode.relation == "inside" and episode.container_id in world.spec.openable,
            container_opened=episode.container_id in self.opened,
            detected=detected,
            fused=bool(self.target_nodes),
            rejected=bool(self.target_nodes & set(outcome.rejected_candidates)),
            last_phase=self.robot.phase,
        )
