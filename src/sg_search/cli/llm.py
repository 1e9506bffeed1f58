"""``sg-search llm ...`` (a local model server) and ``sg-search graph ask`` (SG-RwR question
answering over a scene graph, no ROS needed)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sg_search.llm.local_models import DEFAULT_MODEL, MODELS, local_model
from sg_search.llm.params import params_from


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    """The endpoint options every LLM-using command takes (defaults from the environment)."""
    parser.add_argument(
        "--llm-base-url", default="", help="OpenAI-compatible endpoint (default: $SG_SEARCH_LLM_BASE_URL)"
    )
    parser.add_argument("--llm-model", default="", help="model name (default: $SG_SEARCH_LLM_MODEL)")
    parser.add_argument("--llm-cache", default="", help="response cache folder ('' = no cache)")
    parser.add_argument(
        "--llm-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a reasoner/client parameter, e.g. llm_max_requests=20 or fallback=scout (repeatable)",
    )


def llm_params(args: argparse.Namespace) -> dict[str, Any]:
    """The ``llm_*`` and extra parameters the options name (for ``create_reasoner``)."""
    return params_from(args.llm_base_url, args.llm_model, args.llm_cache, args.llm_param)


def add_parsers(sub: Any, graph_sub: Any) -> None:
    """``llm serve``, ``llm model-path``, ``graph ask``."""
    llm = sub.add_parser("llm", help="a local OpenAI-compatible model server (SmolLM2, offline)")
    llm_sub = llm.add_subparsers(dest="llm_command", required=True, metavar="ACTION")
    serve = llm_sub.add_parser(
        "serve", help="serve a packaged model (SmolLM2-135M, Gemma 3 270M) on 127.0.0.1"
    )
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument(
        "--model", default=DEFAULT_MODEL, choices=sorted(MODELS), help=f"default {DEFAULT_MODEL}"
    )
    serve.add_argument(
        "--model-file", default="", help="a GGUF file in --model's format (default: the package's)"
    )
    serve.add_argument("--threads", type=int, default=2)
    path = llm_sub.add_parser(
        "model-path", help="print a packaged model's GGUF file (for llama.cpp's server)"
    )
    path.add_argument("--model", default=DEFAULT_MODEL, choices=sorted(MODELS))

    ask = graph_sub.add_parser("ask", help="answer a question about a scene graph with SG-RwR (LLM)")
    ask.add_argument("question", help='e.g. "how many cabinets are in the kitchen?"')
    source = ask.add_mutually_exclusive_group()
    source.add_argument("--graph", type=Path, default=None, help="snapshot JSON (scene_graph_server's)")
    source.add_argument("--scene", default="Benevolence_1_int", help="a bddl house, laid out (default)")
    ask.add_argument("--seed", type=int, default=0, help="layout seed of --scene")
    ask.add_argument("--verbose", action="store_true", help="print the agents' conversation")
    add_llm_options(ask)


def run_llm(args: argparse.Namespace) -> int:
    """``sg-search llm ...``."""
    from sg_search.llm.local_server import serve

    try:
        if args.llm_command == "model-path":
            print(local_model(args.model).locate())
            return 0
        serve(args.port, args.model, args.model_file, args.threads)
    except (FileNotFoundError, OSError, ValueError) as exc:
        print(f"sg-search llm: {exc}", file=sys.stderr)
        return 2
    return 0


def run_ask(args: argparse.Namespace) -> int:
    """``sg-search graph ask``: the answer on stdout, counters as JSON on stderr."""
    from sg_search.llm import ChatClient, LlmConfig, LlmError
    from sg_search.reasoning.llm.sgrwr import ask
    from sg_search.scene_graph import SceneGraph
    from sg_search.scene_graph.serialization import SnapshotError, load_snapshot
    from sg_search.sim.bddl_scenes import SceneError

    try:
        client = ChatClient(LlmConfig.from_params(llm_params(args)))
        if args.graph is not None:
            graph = load_snapshot(args.graph)
        else:
            from sg_search.scene_graph.prior import add_prior
            from sg_search.sim.bddl_scenes import load_house
            from sg_search.sim.layout import layout_house

            graph = add_prior(layout_house(load_house(args.scene), args.seed).to_prior(), SceneGraph())
        result = ask(args.question, graph, client)
    except (SnapshotError, SceneError, ValueError) as exc:
        print(f"sg-search graph ask: {exc}", file=sys.stderr)
        return 2
    except LlmError as exc:
        print(f"sg-search graph ask: {exc}", file=sys.stderr)
        return 3
    if args.verbose:
        print("\n".join(result.transcript), file=sys.stderr)
    print(result.answer)
    print(json.dumps(client.counters.as_row()), file=sys.stderr)
    return 0
