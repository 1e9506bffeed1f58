"""``sg-search distill ...`` and ``sg-search knowledge score``: argument parsing and output only."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

KINDS_OF_LINE = {"contain": "containment", "cooccur": "cooccurrence"}


def add_parsers(sub: Any) -> None:
    """Add the ``distill`` and ``knowledge`` commands to the top-level subparsers."""
    distill = sub.add_parser(
        "distill", help="distil commonsense knowledge: query an LLM, build datasets, train"
    )
    steps = distill.add_subparsers(dest="distill_command", required=True, metavar="STEP")
    query = steps.add_parser("query", help="ask an OpenAI-compatible endpoint (cached, resumable)")
    query.add_argument("--out", type=Path, required=True, help="answers YAML to write")
    query.add_argument(
        "--cache", type=Path, default=Path(".sg_search_llm_cache"), help="response cache folder"
    )
    query.add_argument("--base-url", default="", help="endpoint (default: $SG_SEARCH_LLM_BASE_URL)")
    query.add_argument("--model", default="", help="model name (default: $SG_SEARCH_LLM_MODEL)")
    query.add_argument("--repeats", type=int, default=1, help="object lists per (room, category)")
    query.add_argument("--max-rooms", type=int, default=0, help="stop after this many rooms (0: all)")
    query.add_argument("--max-categories", type=int, default=0, help="categories per room (0: all)")
    build = steps.add_parser("build", help="answers YAML -> containment.jsonl + cooccurrence.jsonl")
    build.add_argument("--answers", type=Path, default=None, help="answers YAML (default: the shipped one)")
    build.add_argument("--out", type=Path, required=True, help="folder for the two datasets")
    prior = steps.add_parser("prior", help="holder prior: holders used and held per room, bddl train split")
    prior.add_argument("--out", type=Path, required=True, help="folder for holder_prior.json")
    train = steps.add_parser("train", help="train the two MLPs on the datasets (CPU, minutes)")
    train.add_argument("--data", type=Path, default=None, help="dataset folder (default: the shipped one)")
    train.add_argument("--out", type=Path, required=True, help="folder for knowledge_mlp.npz/.json")
    train.add_argument("--epochs", type=int, default=0, help="override the default epochs")
    train.add_argument("--seed", type=int, default=0, help="seed of the first member; member m uses seed + m")
    train.add_argument(
        "--members", type=int, default=0, help="MLPs per head (default 1); their mean log-odds is the score"
    )
    train.add_argument(
        "--threads",
        type=int,
        default=0,
        help="torch threads (default 1: the shipped weights; another count trains other weights)",
    )

    knowledge = sub.add_parser("knowledge", help="score pairs with the distilled knowledge")
    kn = knowledge.add_subparsers(dest="knowledge_command", required=True, metavar="ACTION")
    score = kn.add_parser("score", help='score JSON lines {"kind": "contain"|"cooccur", "a": ..., "b": ...}')
    score.add_argument("--pairs", type=Path, required=True, help="JSON-lines file ('-' for stdin)")
    score.add_argument("--weights", type=Path, default=None, help="folder with other weights")


def run(args: argparse.Namespace) -> int:
    """Run a ``distill`` or ``knowledge`` command; returns the exit code."""
    if args.command == "knowledge":
        return _score(args)
    from sg_search.reasoning.knowledge.datasets import KnowledgeDataError, build_datasets, default_data_dir

    try:
        if args.distill_command == "query":
            return _query(args)
        if args.distill_command == "build":
            answers = args.answers or default_data_dir() / "llm_answers.yaml"
            counts = build_datasets(answers, args.out)
            print(json.dumps({"answers": str(answers), "out": str(args.out), "pairs": counts}))
            return 0
        if args.distill_command == "prior":
            return _prior(args)
        return _train(args)
    except KnowledgeDataError as exc:
        print(f"sg-search distill: {exc}", file=sys.stderr)
        return 2


def _prior(args: argparse.Namespace) -> int:
    from sg_search.reasoning.knowledge.holder_prior import PRIOR_FILE
    from sg_search.sim.holder_counts import bddl_holder_prior

    prior, provenance = bddl_holder_prior()
    args.out.mkdir(parents=True, exist_ok=True)
    prior.save(args.out / PRIOR_FILE, provenance)
    print(json.dumps({"out": str(args.out / PRIOR_FILE), **provenance}))
    return 0


def _query(args: argparse.Namespace) -> int:
    from sg_search.llm import ChatClient, LlmConfig, LlmError
    from sg_search.reasoning.knowledge.distill import distill

    client = ChatClient(LlmConfig(base_url=args.base_url, model=args.model, cache_dir=str(args.cache)))
    try:
        counts = distill(
            client,
            args.out,
            repeats=args.repeats,
            max_rooms=args.max_rooms,
            max_categories=args.max_categories,
            log=lambda line: print(line, file=sys.stderr),
        )
    except LlmError as exc:
        print(
            f"sg-search distill query: {exc}\n(answers so far are cached in {args.cache}; re-run to resume)",
            file=sys.stderr,
        )
        return 2
    c = client.counters
    print(json.dumps({"out": str(args.out), **counts, "calls": c.calls, "cache_hits": c.cache_hits}))
    return 0


def _train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from sg_search.reasoning.knowledge.datasets import default_data_dir
    from sg_search.reasoning.knowledge.model import METADATA_FILE
    from sg_search.reasoning.knowledge.train import TrainConfig, train

    config = TrainConfig(seed=args.seed)
    if args.epochs:
        config = replace(config, epochs=args.epochs)
    if args.members:
        config = replace(config, members=args.members)
    if args.threads:
        config = replace(config, threads=args.threads)
    metadata = train(args.data or default_data_dir(), args.out, config)
    shipped = json.loads((default_data_dir() / METADATA_FILE).read_text())["validation"]
    print(f"trained in {metadata['train_seconds']:.0f} s -> {args.out}")
    print(f"{'head':14s} {'metric':6s} {'this run':>9s} {'shipped':>9s}")
    for head, metrics in metadata["validation"].items():
        for name in ("mse", "mae", "auc"):
            print(f"{head:14s} {name:6s} {metrics[name]:9.4f} {shipped[head][name]:9.4f}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from sg_search.reasoning.knowledge import KnowledgeModel, KnowledgeWeightsError

    text = sys.stdin.read() if str(args.pairs) == "-" else _read(args.pairs)
    if text is None:
        return 2
    rows: list[tuple[int, dict[str, Any]]] = []
    bad = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if row.get("kind") not in KINDS_OF_LINE or not {"a", "b"} <= set(row):
                raise ValueError('needs "kind" ("contain" or "cooccur"), "a" and "b"')
            rows.append((number, row))
        except (json.JSONDecodeError, ValueError, AttributeError) as exc:
            print(f"{args.pairs}:{number}: {exc}", file=sys.stderr)
            bad += 1
    try:
        km = KnowledgeModel.load(args.weights) if args.weights else KnowledgeModel.load_default()
    except KnowledgeWeightsError as exc:
        print(f"sg-search knowledge score: {exc}", file=sys.stderr)
        return 2
    scores: dict[int, float] = {}
    for kind, head in KINDS_OF_LINE.items():
        mine = [(n, r) for n, r in rows if r["kind"] == kind]
        a, b = [str(r["a"]) for _, r in mine], [str(r["b"]) for _, r in mine]
        values = km.containment(a, b) if head == "containment" else km.cooccurrence(a, b)
        scores.update({n: round(float(v), 4) for (n, _), v in zip(mine, values, strict=True)})
    for number, row in rows:
        print(json.dumps({**row, "score": scores[number]}))
    return 2 if bad else 0


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError as exc:
        print(f"sg-search knowledge score: cannot read {path}: {exc}", file=sys.stderr)
        return None
