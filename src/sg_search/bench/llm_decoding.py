"""What constrained decoding costs and buys with the packaged local models, without a server.

For each model (``--agents``, default both) and each of ``--episodes`` prompts (a robot
asking which of 2-6 listed places to search, ids drawn per prompt from ``--seed``), the
answer is generated greedily twice: unconstrained (prompt only) and constrained to the
reasoners' choice schema (the id an enum of the listed ids, a reason of at most 80
characters). Reported per model and mode: milliseconds per generated token, of which the
grammar's mask (xgrammar's matcher and the masking of the logits), the compile time of a
new schema, tokens per answer, and the share of answers that are one valid JSON object
naming a listed id.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from sg_search.bench.harness import BenchOptions, BenchReport
from sg_search.llm.constrained import Constraint, MaskingProcessor
from sg_search.llm.local_models import MODELS, local_model
from sg_search.reasoning.llm import forms

PLACES = (
    "kitchen cabinet",
    "office desk drawer",
    "bathroom sink",
    "bed",
    "fridge",
    "sofa",
    "wardrobe",
    "shoe rack",
    "bookshelf",
    "nightstand",
)
OBJECTS = ("passport", "mug", "toothbrush", "remote control", "socks", "charger", "milk", "towel")
MAX_TOKENS = 128


def _prompt(rng: random.Random) -> tuple[list[dict[str, str]], list[str]]:
    ids = [f"{rng.choice('nck')}{rng.randrange(100)}" for _ in range(rng.randint(2, 6))]
    ids = list(dict.fromkeys(ids))
    listing = "\n".join(f"{i}: {p}" for i, p in zip(ids, rng.sample(PLACES, len(ids)), strict=False))
    goal = rng.choice(OBJECTS)
    text = (
        f"A robot looks for a {goal}. Which place should it search first?\n{listing}\n"
        'Answer with JSON only: {"id": "<one listed id>", "reason": "..."}'
    )
    return [{"role": "user", "content": text}], ids


class _TimedMask:
    """Wraps a :class:`MaskingProcessor`, adding up the time spent in it [s]."""

    def __init__(self, inner: MaskingProcessor) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        start = time.perf_counter()
        out = self.inner(input_ids, scores)
        self.seconds += time.perf_counter() - start
        return out


def _valid(text: str, ids: list[str]) -> bool:
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return False
    return isinstance(answer, dict) and answer.get("id") in ids


def _measure(name: str, options: BenchOptions) -> dict[str, float]:
    from sg_search.llm.local_server import GgufChatModel

    start = time.perf_counter()
    model = GgufChatModel(local_model(name), threads=2)
    out: dict[str, float] = {"load_s": time.perf_counter() - start}
    rng = random.Random(options.seed)
    totals = {
        k: 0.0 for k in ("plain_s", "plain_tokens", "plain_valid", "c_s", "c_tokens", "c_valid", "mask_s")
    }
    compile_s = []
    for _ in range(options.episodes):
        messages, ids = _prompt(rng)
        start = time.perf_counter()
        text, _, tokens, _ = model.generate(messages, MAX_TOKENS, 0.0, [])
        totals["plain_s"] += time.perf_counter() - start
        totals["plain_tokens"] += tokens
        totals["plain_valid"] += _valid(text, ids)
        constraint = Constraint("json_schema", json.dumps(forms.choice_schema("id", ids)))
        start = time.perf_counter()
        compiled = model.grammars.compile(constraint)
        compile_s.append(time.perf_counter() - start)
        mask = _TimedMask(model.grammars.logits_processor(compiled))
        start = time.perf_counter()
        text, _, tokens, _ = model.generate(messages, MAX_TOKENS, 0.0, [mask])
        totals["c_s"] += time.perf_counter() - start
        totals["c_tokens"] += tokens
        totals["c_valid"] += _valid(text, ids)
        totals["mask_s"] += mask.seconds
    n = options.episodes
    out.update(
        {
            "plain_ms_per_token": 1e3 * totals["plain_s"] / max(totals["plain_tokens"], 1),
            "constrained_ms_per_token": 1e3 * totals["c_s"] / max(totals["c_tokens"], 1),
            "mask_ms_per_token": 1e3 * totals["mask_s"] / max(totals["c_tokens"], 1),
            "compile_ms_median": 1e3 * sorted(compile_s)[len(compile_s) // 2],
            "plain_tokens_per_answer": totals["plain_tokens"] / n,
            "constrained_tokens_per_answer": totals["c_tokens"] / n,
            "plain_valid_share": totals["plain_valid"] / n,
            "constrained_valid_share": totals["c_valid"] / n,
        }
    )
    return out


def run(options: BenchOptions) -> BenchReport:
    """Measure every model named in ``options.agents`` (default: all packaged ones)."""
    names = [a for a in options.agents.split(",") if a] or list(MODELS)
    summary: dict[str, float] = {}
    for name in names:
        for key, value in _measure(name, options).items():
            summary[f"{name}/{key}"] = value
    return BenchReport("llm-decoding", options, summary, [])
