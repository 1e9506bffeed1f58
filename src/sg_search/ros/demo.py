"""``sg-search demo``: the whole node set against the embedded simulator, one search, a run folder.

All nodes of ``launch/sim.launch.py`` are composed in this process (the pip-only ROS 2 has
no ``ros2 launch``) and talk over DDS on loopback: sim_bridge (the episode's house with its
target placed), perception, scene_graph_server, frontier_planner, affordance_executor,
reasoner, a recorder writing ``run.mcap`` and live_view writing ``run.rrd`` (and, with
``--view``, streaming to a Rerun viewer bound to 127.0.0.1). The demo calls the ``search`` action like
any client, prints its feedback, then writes ``report.html`` and its figures.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sg_search.config import default_params_file
from sg_search.ros_env import ensure_ros_env, use_localhost_profile

ensure_ros_env()

import rclpy  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from sg_search.perception.categories import query_category  # noqa: E402
from sg_search.reasoning.base import SkillAffordance  # noqa: E402
from sg_search.report import RunRecord, write_report  # noqa: E402
from sg_search.ros.search_client import SearchClient  # noqa: E402
from sg_search.search.outcome import DecisionRecord  # noqa: E402
from sg_search.sim.episodes import Episode, make_episodes  # noqa: E402

DEMO_POOL = 40  # test-split episodes the demo chooses from


@dataclass(frozen=True)
class DemoOptions:
    """What ``sg-search demo`` was asked for."""

    query: str = ""
    scene: str = ""
    seed: int = 0
    reasoner: str = ""
    timeout_s: float = 600.0
    out: Path = Path("runs")
    params_file: Path | None = None
    view: bool = False
    episode: Episode | None = None  # this episode (any split), not one chosen by scene and query


def choose_episode(options: DemoOptions) -> Episode:
    """``options.episode`` if given; else a test-split episode: of ``scene`` if given, whose
    target is ``query`` if one is (else the query's object is placed where the episode's target
    would be); ``seed`` picks. With neither scene nor query, the episodes that show the whole
    job: the target is inside the fridge of a room other than the start room, so the robot
    explores, opens and verifies."""
    if options.episode is not None:
        if options.scene or options.query:
            raise ValueError("an episode names its scene and object: give it without --scene or --query")
        return options.episode
    episodes, _ = make_episodes("test", DEMO_POOL, seed=0)
    if not options.scene and not options.query:
        whole_job = [
            e
            for e in episodes
            if e.relation == "inside" and e.container == "fridge" and e.room_id != e.start_room_id
        ]
        episodes = whole_job or episodes
    if options.scene:
        episodes = [e for e in episodes if e.scene == options.scene]
        if not episodes:
            raise ValueError(
                f"no test-split episode in scene {options.scene!r}; see 'sg-search sim episodes'"
            )
    if options.query:
        category = query_category(options.query)
        matching = [e for e in episodes if query_category(e.query) == category]
        if not matching:
            e = episodes[options.seed % len(episodes)]
            return Episode(**{**e.to_json(), "query": category})
        episodes = matching
    return episodes[options.seed % len(episodes)]


def run_demo(options: DemoOptions) -> int:
    """Bring the stack up, search, write the run folder; exit code 0 on a find. With
    ``options.view`` a viewer watches; it stays open until Ctrl-C and ends with the demo."""
    from sg_search.view.viewer import stop_viewer

    try:
        episode = choose_episode(options)
    except ValueError as exc:
        print(f"sg-search demo: {exc}", file=sys.stderr)
        return 2
    viewer, viewer_url = _start_viewer() if options.view else (None, "")
    try:
        code = _search_and_report(episode, options, viewer_url)
        if viewer is not None:
            print("[demo] the viewer stays open; Ctrl-C ends it")
            viewer.wait()
        return code
    except KeyboardInterrupt:
        print("[demo] interrupted")
        return 130
    finally:
        if viewer is not None:
            stop_viewer(viewer)


def _search_and_report(episode: Episode, options: DemoOptions, viewer_url: str) -> int:
    from sg_search.ros.affordance_executor import AffordanceExecutorNode
    from sg_search.ros.commands import run_search_goal, spinning
    from sg_search.ros.frontier_planner import FrontierPlanner
    from sg_search.ros.live_view import LiveView
    from sg_search.ros.perception_node import Perception
    from sg_search.ros.reasoner_node import ReasonerNode
    from sg_search.ros.recorder import Recorder
    from sg_search.ros.runner import EXECUTOR_THREADS
    from sg_search.ros.scene_graph_server import SceneGraphServer
    from sg_search.ros.sim_bridge import SimBridge
    from sg_search.sim.layout import planner_grid_params
    from sg_search.sim.metrics import EpisodeRun

    folder = options.out / time.strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    where = f"{episode.relation} {episode.container or episode.room}"
    print(f"[demo] {episode.scene}: find {episode.query!r} ({where})")
    print(f"[demo] run folder: {folder}")
    use_localhost_profile()
    params = options.params_file or default_params_file()
    rclpy.init(args=["sg-search", "--ros-args", "--params-file", str(params)])
    sim_time = Parameter("use_sim_time", value=True)
    with _nodes() as nodes:
        bridge = nodes.add(
            SimBridge,
            scene=episode.scene,
            layout_seed=episode.layout_seed,
            start_room=episode.start_room_id,
            target_query=episode.query,
            target_relation=episode.relation,
            target_holder=episode.container_id or episode.room_id,
        )
        for factory in (Perception, AffordanceExecutorNode, ReasonerNode):
            nodes.add(factory, extra=[sim_time])
        grid = planner_grid_params(episode.scene, episode.layout_seed, params)  # the house's, as in process
        nodes.add(FrontierPlanner, extra=[sim_time], **grid)
        nodes.add(SceneGraphServer, extra=[sim_time], snapshot_file=str(folder / "scene_graph.json"))
        nodes.add(Recorder, extra=[sim_time], output=str(folder / "run.mcap"))
        nodes.add(LiveView, extra=[sim_time], output=str(folder / "run.rrd"), viewer_url=viewer_url)
        client = nodes.add(Node, "sg_search_demo_client")
        path: list[tuple[float, float]] = []
        client.create_subscription(
            Odometry, "odom", lambda m: path.append((m.pose.pose.position.x, m.pose.pose.position.y)), 10
        )
        with bridge.world_lock:
            run = EpisodeRun(bridge.world, "target")
        started = time.monotonic()
        # Four actions (search, execute_affordance, navigate, look_at) each hold a thread while
        # they run, and wait on services and actions that need threads of their own.
        with spinning(nodes.all, threads=4 * EXECUTOR_THREADS):
            code, search = run_search_goal(client, episode.query, options.reasoner, 0, options.timeout_s)
            reasoner_name = (
                options.reasoner
                or next(n for n in nodes.all if isinstance(n, ReasonerNode)).config.default_reasoner
            )
            with bridge.world_lock:
                metrics = run.result(bridge.last_frame)
            planner = next(n for n in nodes.all if isinstance(n, FrontierPlanner))
            server = next(n for n in nodes.all if isinstance(n, SceneGraphServer))
            with server.lock:
                graph_copy = server.graph.snapshot()
            states, spec, frontiers = planner.map.states(), planner.spec, [f.goal for f in planner.frontiers]
    record = _record(episode, reasoner_name, search, metrics, time.monotonic() - started)
    from sg_search.scene_graph import SceneGraph

    record.graph = SceneGraph()
    record.graph.apply(graph_copy)
    record.states, record.spec, record.frontiers, record.path = states, spec, frontiers, path
    record.opened = [
        (n.id, (n.position[0], n.position[1]))
        for n in record.graph.nodes()
        if n.kind == "container" and n.state == 2
    ]
    page = write_report(record, folder)
    (folder / "result.json").write_text(
        json.dumps({**metrics, "result": record.result, "query": episode.query})
    )
    m = metrics
    print(f"[demo] ObjectNav: success {m['success']:.0f}, SPL {m['SPL']:.2f}, {m['path_m']:.1f} m driven")
    print(f"[demo] report: {page}")
    print(f"[demo] recording: {folder / 'run.mcap'} (open in Foxglove)")
    print(f"[demo] 3D view: {folder / 'run.rrd'} (sg-search view {folder})")
    return code


def _start_viewer() -> tuple[Any, str]:
    """A Rerun viewer on 127.0.0.1 (native with a display, else the web viewer) and the URL
    live_view streams to."""
    from sg_search.view.viewer import ViewerPorts, open_viewer

    ports = ViewerPorts()
    return open_viewer(None, web=False, ports=ports), ports.sdk_url


class _NodeSet:
    def __init__(self) -> None:
        self.all: list[Node] = []

    def add(self, factory: Any, *args: Any, extra: Sequence[Parameter] = (), **overrides: Any) -> Any:
        params = [*extra, *(Parameter(k, value=v) for k, v in overrides.items())]
        node = factory(*args, parameter_overrides=params) if params else factory(*args)
        self.all.append(node)
        return node


@contextmanager
def _nodes() -> Iterator[_NodeSet]:
    nodes = _NodeSet()
    try:
        yield nodes
    finally:
        for node in reversed(nodes.all):
            node.destroy_node()
        if rclpy.ok():  # a SIGTERM has shut it down already
            rclpy.shutdown()


def _record(
    episode: Episode, reasoner: str, search: SearchClient, metrics: dict[str, float], wall_s: float
) -> RunRecord:
    """The report's record from the action's result and feedback; the distance is what the
    simulated base drove (ObjectNav's path), not only what the skills reported."""
    result, feedback = search.result(), search.feedback
    record = RunRecord(
        episode.query,
        episode.scene,
        reasoner,
        False,
        "UNKNOWN",
        metrics=metrics,
        wall_s=wall_s,
    )
    if result is not None:
        record.success = bool(result.success)
        record.result = "NONE" if result.success else str(result.error_code)
        record.message, record.explanation = result.error_msg, result.explanation
        record.steps = int(result.steps)
        if result.success:
            p = result.pose.pose.position
            record.found_id, record.found_xy = result.object_id, (p.x, p.y)
    record.path_length_m = float(metrics.get("path_m", 0.0))
    record.decisions = [
        DecisionRecord(f.step, f.target_node_id, f.explanation, tuple(_candidate(c) for c in f.candidates))
        for f in feedback
        if f.phase == "reason" and f.target_node_id
    ]
    return record


def _candidate(score: Any) -> tuple[str, str, float, str]:
    """A TargetScore as the report's (id, affordance, utility, why)."""
    return (score.node_id, SkillAffordance(score.affordance).name.lower(), float(score.utility), score.reason)
