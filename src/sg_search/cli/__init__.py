"""``sg-search``: the stack's command line.

Sub-commands that need ROS import it lazily, so ``sg-search --help``, ``graph schema``
and the benchmarks work without a ROS installation.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from sg_search.cli import knowledge as knowledge_commands
from sg_search.cli import llm as llm_commands
from sg_search.ros.processes import SEGMENT_MIN_AGE_S, remove_dead_shm_segments


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sg-search",
        description="Open-vocabulary object search with online 3D scene graphs (ROS 2).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("demo", help="bring up the node set in one process and search for an object")
    demo.add_argument("--query", default="", help="free-text request (default: the episode's object)")
    demo.add_argument("--scene", default="", help="bddl scene of the test split (default: any)")
    demo.add_argument("--seed", type=int, default=0, help="picks among the matching episodes")
    demo.add_argument("--reasoner", default="", help="registered reasoner (default: the node's, scout)")
    demo.add_argument("--timeout", type=float, default=600.0, help="search budget [s]")
    demo.add_argument("--out", type=Path, default=Path("runs"), help="parent of the run folder")
    demo.add_argument("--params-file", type=Path, default=None, help="ROS params YAML (default: shipped)")
    demo.add_argument("--view", action="store_true", help="watch live in a Rerun viewer (127.0.0.1)")
    demo.add_argument(
        "--episode", default="", help="one episode as a JSON line of 'sg-search sim episodes' (any split)"
    )

    view = sub.add_parser("view", help="open a run's 3D recording (run.rrd) in the Rerun viewer")
    view.add_argument("run", type=Path, help="run folder (runs/<time>) or .rrd file")
    view.add_argument(
        "--web", action="store_true", help="web viewer on 127.0.0.1 (default without a display)"
    )
    view.add_argument("--port", type=int, default=9876, help="the viewer's gRPC port")
    view.add_argument("--web-port", type=int, default=9090, help="the web viewer's HTTP port")

    search = sub.add_parser("search", help="send a search goal to a running stack and follow it")
    search.add_argument("query", help='what to find, e.g. "passport"')
    search.add_argument("--reasoner", default="", help="registered reasoner name (default: node's)")
    search.add_argument("--max-steps", type=int, default=0, help="step budget (0: node's default)")
    search.add_argument("--timeout", type=float, default=0.0, help="time budget [s] (0: node's default)")
    search.add_argument("--namespace", default="", help="ROS namespace of the stack")

    graph = sub.add_parser("graph", help="inspect the scene graph")
    graph_sub = graph.add_subparsers(dest="graph_command", required=True, metavar="ACTION")
    schema = graph_sub.add_parser("schema", help="print the scene-graph schema (no ROS needed)")
    schema.add_argument("--text", action="store_true", help="prompt-ready text instead of YAML")
    draw = graph_sub.add_parser("draw", help="draw a snapshot file top-down to a PNG (no ROS needed)")
    draw.add_argument("snapshot", type=Path, help="snapshot JSON (scene_graph_server's snapshot_file)")
    draw.add_argument("--out", type=Path, required=True, help="PNG to write")
    show = graph_sub.add_parser("show", help="summarise a running server's graph")
    show.add_argument("--namespace", default="")
    query = graph_sub.add_parser("query", help="find nodes in a running server's graph")
    query.add_argument("text")
    query.add_argument("--kind", default="")
    query.add_argument("--namespace", default="")
    llm_commands.add_parsers(sub, graph_sub)

    bench = sub.add_parser("bench", help="run a benchmark ('sg-search bench list' names them)")
    bench.add_argument("name", help="benchmark name, or 'list'")
    bench.add_argument("--split", default="all", help="data split")
    bench.add_argument("--episodes", type=int, default=10, help="episodes to run")
    bench.add_argument("--seed", type=int, default=0, help="base seed")
    bench.add_argument(
        "--workers", type=int, default=1,
        help="episodes at once: local processes, or Ray tasks in flight (0 with Ray: every CPU)",
    )  # fmt: skip
    bench.add_argument(
        "--backend", choices=("local", "ray"), default="local",
        help="local: this process or a process pool (no Ray needed); ray: Ray tasks",
    )  # fmt: skip
    bench.add_argument(
        "--ray-address", default="",
        help="'' starts a local Ray (in a private network: scripts/private-network); 'auto' or "
        "ray://host:port joins a cluster",
    )  # fmt: skip
    results = bench.add_mutually_exclusive_group()
    results.add_argument(
        "--results", type=Path, default=None,
        help="JSON-lines results file, one row per episode as it finishes "
        "(default: <out>/results/<benchmark>-<time>.jsonl)",
    )  # fmt: skip
    results.add_argument(
        "--resume", type=Path, default=None, metavar="FILE",
        help="continue the run that wrote FILE: the episodes already there are not run again",
    )  # fmt: skip
    bench.add_argument("--json", type=Path, default=None, help="write machine-readable results here")
    bench.add_argument(
        "--out", type=Path, default=Path("runs"), help="folder for figures (PNG) a benchmark draws"
    )
    bench.add_argument(
        "--max-actions", type=int, default=0, help="closed-loop: actions per episode (0: the config's, 500)"
    )
    bench.add_argument(
        "--noise",
        action="store_true",
        help="closed-loop: ground-truth detections through the perception benchmark's noise model",
    )
    bench.add_argument(
        "--agents",
        "--reasoner",
        dest="agents",
        default="",
        help="comma-separated agents/reasoners, for benchmarks that compare them",
    )
    bench.add_argument(
        "--episodes-file", default="", help="JSON-lines episodes (symbolic), instead of drawn ones"
    )
    llm_commands.add_llm_options(bench)

    compare = sub.add_parser(
        "compare", help="two closed-loop runs on the same episodes, pair by pair (McNemar, Wilson)"
    )
    compare.add_argument(
        "results", type=Path, nargs="+", metavar="RESULTS",
        help="one results file with two reasoners, or two files (closed-loop --results)",
    )  # fmt: skip
    compare.add_argument(
        "--reasoners", default="",
        help="comma-separated: the two to compare in one file, or one per file (default: the only ones)",
    )  # fmt: skip
    compare.add_argument("--json", type=Path, default=None, help="write machine-readable results here")

    sim = sub.add_parser("sim", help="simulator scenes: bddl houses and their procedural layouts")
    sim_sub = sim.add_subparsers(dest="sim_command", required=True, metavar="ACTION")
    scenes = sim_sub.add_parser("scenes", help="list the bddl scenes with rooms, furniture and split")
    scenes.add_argument("--split", choices=("train", "val", "test"), default=None)
    layout = sim_sub.add_parser("layout", help="lay a scene out: prior YAML + top-down PNG")
    layout.add_argument("--scene", required=True, help="bddl scene name (see 'sg-search sim scenes')")
    layout.add_argument("--seed", type=int, default=0)
    layout.add_argument("--out", type=Path, required=True, help="output folder")

    render = sim_sub.add_parser(
        "render", help="render an agent view (MuJoCo): RGB, depth, instances, top-down"
    )
    render.add_argument("--scene", required=True, help="bddl scene name")
    render.add_argument("--seed", type=int, default=0)
    render.add_argument("--out", type=Path, required=True, help="output folder")
    render.add_argument("--width", type=int, default=640)
    render.add_argument("--height", type=int, default=480)
    render.add_argument("--pose", type=float, nargs=3, default=None, metavar=("X", "Y", "YAW"))

    episodes = sim_sub.add_parser("episodes", help="object-search episodes as JSON lines")
    episodes.add_argument("--split", choices=("train", "val", "test"), default="test")
    episodes.add_argument("--n", type=int, default=10, help="how many episodes")
    episodes.add_argument("--tier", choices=("typical", "misplaced"), default="typical")
    episodes.add_argument(
        "--solvable", action="store_true",
        help="only episodes an agent can succeed in: success region reachable, container openable "
        "from its room (the closed-loop benchmark's)",
    )  # fmt: skip
    episodes.add_argument("--seed", type=int, default=0)

    shm = sub.add_parser(
        "shm-clean", help="remove the Fast DDS shared memory (/dev/shm) of nodes that were killed"
    )
    shm.add_argument(
        "--min-age", type=float, default=SEGMENT_MIN_AGE_S, help="leave segments younger than this [s]"
    )

    knowledge_commands.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sg-search`` console script; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.command in ("distill", "knowledge"):
        return knowledge_commands.run(args)
    if args.command == "bench":
        return _bench(args)
    if args.command == "sim":
        return _sim(args)
    if args.command == "compare":
        return _compare(args)
    if args.command == "view":
        return _view(args)
    if args.command == "llm":
        return llm_commands.run_llm(args)
    if args.command == "shm-clean":
        removed = remove_dead_shm_segments(min_age_s=args.min_age)
        print(f"removed {len(removed)} dead segments" + "".join(f"\n  {name}" for name in removed))
        return 0
    if args.command == "graph" and args.graph_command == "ask":
        return llm_commands.run_ask(args)
    if args.command == "graph" and args.graph_command in ("schema", "draw"):
        return _graph_offline(args)
    from sg_search.ros import commands  # needs rclpy

    if args.command == "demo":
        from sg_search.ros.demo import DemoOptions
        from sg_search.sim.episodes import episode_from_json

        try:
            episode = episode_from_json(args.episode) if args.episode else None
        except ValueError as exc:
            print(f"sg-search demo: --episode: {exc}", file=sys.stderr)
            return 2
        return commands.demo(
            DemoOptions(
                args.query,
                args.scene,
                args.seed,
                args.reasoner,
                args.timeout,
                args.out,
                args.params_file,
                args.view,
                episode,
            )
        )
    if args.command == "search":
        return commands.search(args.query, args.reasoner, args.max_steps, args.timeout, args.namespace)
    if args.command == "graph":
        return commands.graph(
            args.graph_command, getattr(args, "text", ""), getattr(args, "kind", ""), args.namespace
        )
    raise AssertionError(f"unhandled command {args.command}")


def _compare(args: argparse.Namespace) -> int:
    import json

    from sg_search.bench.compare import compare, pick_sides

    try:
        reasoners = [r.strip() for r in args.reasoners.split(",") if r.strip()]
        comparison = compare(*pick_sides(args.results, reasoners))
    except ValueError as exc:
        print(f"sg-search compare: {exc}", file=sys.stderr)
        return 2
    print(comparison.table())
    if args.json is not None:
        args.json.write_text(json.dumps(comparison.to_json(), indent=1) + "\n")
    return 0


def _view(args: argparse.Namespace) -> int:
    from sg_search.view.viewer import ViewerError, ViewerPorts, open_viewer, stop_viewer

    recording = args.run / "run.rrd" if args.run.is_dir() else args.run
    try:
        process = open_viewer(recording, args.web, ViewerPorts(args.port, args.web_port))
    except ViewerError as exc:
        print(f"sg-search view: {exc}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM ends the viewer too
    try:
        return process.wait()
    except KeyboardInterrupt:
        stop_viewer(process)
        return 0


def _graph_offline(args: argparse.Namespace) -> int:
    if args.graph_command == "schema":
        from sg_search.scene_graph.schema import schema_text, schema_yaml

        print(schema_text() if args.text else schema_yaml(), end="\n" if args.text else "")
        return 0
    from sg_search.scene_graph.draw import draw_top_down
    from sg_search.scene_graph.serialization import SnapshotError, load_snapshot

    try:
        graph = load_snapshot(args.snapshot)
    except SnapshotError as exc:
        print(f"sg-search graph draw: {exc}", file=sys.stderr)
        return 2
    print(draw_top_down(graph, args.out, title=args.snapshot.name))
    return 0


def _sim(args: argparse.Namespace) -> int:
    from sg_search.sim.bddl_scenes import SceneError, load_house, scene_names
    from sg_search.sim.layout import layout_house

    if args.sim_command == "render":
        from sg_search.cli.render import render_view
        from sg_search.sim.mujoco.world import CameraConfig

        try:
            camera = CameraConfig(args.width, args.height)
            for path in render_view(args.scene, args.seed, args.out, camera, args.pose):
                print(path)
        except (SceneError, ValueError) as exc:
            print(f"sg-search sim render: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.sim_command == "episodes":
        import json

        from sg_search.sim.episodes import make_episodes
        from sg_search.sim.mujoco.scene import solvable

        keep = solvable if args.solvable else None
        made, skipped = make_episodes(args.split, args.n, args.tier, args.seed, keep)
        for episode in made:
            print(json.dumps(episode.to_json()))
        refused = "could not be placed" + (" or were not solvable" if args.solvable else "")
        print(f"{len(made)} episodes ({args.split}, {args.tier}); {skipped} draws {refused}", file=sys.stderr)
        return 0
    if args.sim_command == "scenes":
        for name in scene_names(args.split):
            house = load_house(name)
            furniture = sum(sum(r.furniture.values()) for r in house.rooms)
            print(f"{name:34s} {house.split:5s} {len(house.rooms):3d} rooms {furniture:4d} furniture")
        return 0
    try:
        layout = layout_house(load_house(args.scene), args.seed)
    except SceneError as exc:
        print(f"sg-search sim layout: {exc}", file=sys.stderr)
        return 2
    import yaml

    from sg_search.scene_graph import SceneGraph
    from sg_search.scene_graph.draw import draw_top_down
    from sg_search.scene_graph.prior import add_prior

    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"{args.scene}_seed{args.seed}"
    prior = layout.to_prior()
    prior["metadata"] = {
        **layout.metadata,
        "unplaced": layout.unplaced,
        "scene": args.scene,
        "seed": args.seed,
    }
    stem.with_suffix(".yaml").write_text(yaml.safe_dump(prior, sort_keys=False))
    title = f"{args.scene} (seed {args.seed}; layout synthetic)"
    draw_top_down(add_prior(prior, SceneGraph()), stem.with_suffix(".png"), title=title)
    print(f"{stem}.yaml\n{stem}.png")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from sg_search.bench import BenchOptions, available_benchmarks, run_benchmark

    if args.name == "list":
        for name, description in available_benchmarks().items():
            print(f"{name:20s} {description}")
        return 0
    from sg_search.bench.harness import EpisodesFailed

    try:
        params = llm_commands.llm_params(args)
        options = BenchOptions(
            args.split,
            args.episodes,
            args.seed,
            args.workers,
            args.agents,
            args.episodes_file,
            tuple(f"{k}={v}" for k, v in params.items()),
            str(args.out),
            args.max_actions,
            args.noise,
            args.backend,
            args.ray_address,
            str(args.resume or args.results or ""),
            args.resume is not None,
        )
        report = run_benchmark(args.name, options)
    except (KeyError, ValueError) as exc:
        print(f"sg-search bench: {exc.args[0]}", file=sys.stderr)
        return 2
    except EpisodesFailed as exc:
        print(f"sg-search bench: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("sg-search bench: interrupted; finished episodes are in the results file named above "
              "(--resume it)", file=sys.stderr)  # fmt: skip
        return 130
    print(report.table())
    if args.json is not None:
        report.write_json(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
