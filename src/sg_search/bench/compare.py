"""Two closed-loop runs on the same episodes, compared pair by pair (``sg-search compare``).

A side is one reasoner's rows of one results file (``sg-search bench closed-loop --results``):
two reasoners of one run (scout against nearest), or one reasoner in two runs (a change against
main). Episodes are paired by their number in the run and must name the same scene and object
on both sides. At each action budget B an episode counts as found when it succeeded within B
actions (as in the benchmark's budget curve). What the comparison gives per budget: each side's
finds with a Wilson 95 % interval, the discordant pairs (found by one side only) and the exact
McNemar test on them (two-sided binomial, p = 0.5): whether the difference could be the draw of
which episodes changed. Among the episodes both sides found, which side found sooner (a sign
test, and the median ratio of their actions): a speed-up that no single budget shows when most
searches end well within it or well beyond it. It also lists the episodes that ended differently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from sg_search.bench.results_file import read_results
from sg_search.config import default_params_file, load_node_params

BUDGETS = (100, 250, 500, 1000, 1500)  # actions; ObjectNav's is 500 (SCOUT's Fig. 5 style curve)
DEFAULT_REASONERS = "scout,nearest"  # a closed-loop run's reasoners when it names none


def split_job(job: int, reasoners: int) -> tuple[int, int]:
    """A closed-loop run's job number as (episode number, reasoner's index): each episode is
    run by every reasoner in turn."""
    return divmod(job, reasoners)


def found_by(row: Mapping[str, Any], budget: float) -> bool:
    """True when the episode of ``row`` succeeded within ``budget`` actions."""
    return bool(row.get("success", 0.0) > 0 and row.get("steps", float("inf")) <= budget)


@dataclass(frozen=True)
class Side:
    """One reasoner's episodes of one run: ``rows`` by episode number (0-based, the order the
    run drew them), the run's action budget and a label for tables."""

    label: str
    reasoner: str
    rows: Mapping[int, Mapping[str, Any]]
    max_actions: int
    episodes: str  # what decides the episodes: "<split> split, seed <n>" or the episodes file


def load_sides(path: Path) -> dict[str, Side]:
    """The sides a results file holds, one per reasoner (ValueError naming the file and what
    is wrong when it is not a closed-loop results file). A running or killed run's file is read
    up to its last whole row (:func:`~sg_search.bench.results_file.read_results`)."""
    header, rows, _ = read_results(path)
    if header.get("benchmark") != "closed-loop":
        raise ValueError(f"{path}: not the results of `sg-search bench closed-loop` (no such header)")
    work = header.get("work", {})
    agents = [a.strip() for a in str(work.get("agents") or DEFAULT_REASONERS).split(",") if a.strip()]
    max_actions = int(work.get("max_actions", 0)) or int(
        load_node_params(default_params_file(), "embodied")["max_actions"]
    )
    episodes = work.get("episodes_file") or f"{work.get('split')} split, seed {work.get('seed')}"
    by_reasoner: dict[str, dict[int, dict[str, Any]]] = {name: {} for name in agents}
    for job, row in rows.items():
        episode, reasoner = split_job(job, len(agents))
        by_reasoner[agents[reasoner]][episode] = row
    return {
        name: Side(f"{name} ({path.name})", name, mine, max_actions, str(episodes))
        for name, mine in by_reasoner.items()
    }


def pick_sides(paths: Sequence[Path], reasoners: Sequence[str] = ()) -> tuple[Side, Side]:
    """The two sides to compare: the two reasoners of one file (or the two named), or one
    reasoner of each of two files (the file's only one, or the one named for it)."""
    if len(paths) not in (1, 2):
        raise ValueError("compare takes one results file (two reasoners) or two (one reasoner each)")
    loaded = [load_sides(p) for p in paths]
    if len(paths) == 1:
        names = list(reasoners) or list(loaded[0])
        if len(names) != 2:
            raise ValueError(f"{paths[0]} holds reasoners {', '.join(loaded[0])}: name two to compare")
        return _side(loaded[0], names[0], paths[0]), _side(loaded[0], names[1], paths[0])
    if reasoners and len(reasoners) != 2:
        raise ValueError("with two files, name one reasoner per file (or none where each holds one)")
    picked = []
    for i, (sides, path) in enumerate(zip(loaded, paths, strict=True)):
        if reasoners:
            picked.append(_side(sides, reasoners[i], path))
        elif len(sides) == 1:
            picked.append(next(iter(sides.values())))
        else:
            raise ValueError(f"{path} holds reasoners {', '.join(sides)}: name one per file")
    return picked[0], picked[1]


def _side(sides: Mapping[str, Side], name: str, path: Path) -> Side:
    if name not in sides:
        raise ValueError(f"{path} holds no reasoner {name!r} (it holds {', '.join(sides)})")
    return sides[name]


@dataclass(frozen=True)
class BudgetRow:
    """One budget's paired counts: finds of A and B, found by A only and by B only, and the exact
    McNemar p-value of the discordant pairs; Wilson 95 % intervals of both success rates."""

    budget: int
    found_a: int
    found_b: int
    only_a: int
    only_b: int
    p_value: float
    interval_a: tuple[float, float]
    interval_b: tuple[float, float]


@dataclass(frozen=True)
class Sooner:
    """Of the ``both`` episodes both sides found: how many A found in fewer actions, how many B,
    the sign test's two-sided p-value (ties left out) and the median of A's actions over B's."""

    both: int
    a_sooner: int
    b_sooner: int
    p_value: float
    median_ratio: float


@dataclass(frozen=True)
class Changed:
    """An episode the two sides ended differently: its scene and query (``where``), how each
    side ended (:func:`_end`) and where their traces part (:func:`parting`; None without traces)."""

    episode: int
    where: str
    a: str
    b: str
    parting: str | None


@dataclass(frozen=True)
class Comparison:
    """Side A against side B on their common episodes."""

    a: Side
    b: Side
    episodes: tuple[int, ...]
    budgets: tuple[BudgetRow, ...]
    sooner: Sooner
    changed: tuple[Changed, ...]

    def table(self) -> str:
        """The comparison as text: the budget table, which side found sooner, then the episodes
        that ended differently."""
        n = len(self.episodes)
        lines = [
            f"A: {self.a.label}\nB: {self.b.label}\n{n} paired episodes ({self.a.episodes})",
            f"{'budget':>7} {'A found':>8} {'B found':>8} {'A only':>7} {'B only':>7} "
            f"{'SR A [95% CI]':>19} {'SR B [95% CI]':>19} {'B - A':>6} {'McNemar p':>10}",
        ]
        for r in self.budgets:
            lines.append(
                f"{r.budget:>7} {r.found_a:>8} {r.found_b:>8} {r.only_a:>7} {r.only_b:>7} "
                f"{_rate(r.found_a, n, r.interval_a):>19} {_rate(r.found_b, n, r.interval_b):>19} "
                f"{(r.found_b - r.found_a) / n:>+6.2f} {_p(r.p_value):>10}"
            )
        s = self.sooner
        lines.append(
            f"Found by both: {s.both}; A sooner in {s.a_sooner}, B sooner in {s.b_sooner} (sign test "
            f"p {_p(s.p_value, '= ')}); median actions A / B {s.median_ratio:.2f}"
        )
        lines += ["", f"Episodes that ended differently ({len(self.changed)}):"]
        for c in self.changed:
            lines.append(f"  {c.episode:>3} {c.where}: A {c.a}; B {c.b}")
            if c.parting is not None:
                lines.append(f"      {c.parting}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """Machine-readable: the sides, the per-budget counts and the changed episodes."""
        return {
            "a": self.a.label,
            "b": self.b.label,
            "episodes": len(self.episodes),
            "budgets": [vars(r) for r in self.budgets],
            "sooner": vars(self.sooner),
            "changed": [
                {"episode": c.episode, "a": c.a, "b": c.b, "parting": c.parting} for c in self.changed
            ],
        }


def compare(a: Side, b: Side, budgets: Sequence[int] = BUDGETS) -> Comparison:
    """Pair ``a`` and ``b`` by episode (ValueError when a pair names different scenes or
    objects, or none is shared) and count at each of ``budgets`` both runs reached."""
    common = tuple(sorted(set(a.rows) & set(b.rows)))
    if not common:
        raise ValueError(f"{a.label} and {b.label} share no episode")
    for episode in common:
        ra, rb = a.rows[episode], b.rows[episode]
        if (ra.get("scene"), ra.get("query")) != (rb.get("scene"), rb.get("query")):
            raise ValueError(
                f"episode {episode} is {ra.get('scene')} {ra.get('query')!r} in {a.label} but "
                f"{rb.get('scene')} {rb.get('query')!r} in {b.label}: the runs drew different episodes"
            )
    reach = min(a.max_actions, b.max_actions)
    rows = []
    for budget in [x for x in budgets if x <= reach] or [reach]:
        fa = [found_by(a.rows[e], budget) for e in common]
        fb = [found_by(b.rows[e], budget) for e in common]
        only_a = sum(x and not y for x, y in zip(fa, fb, strict=True))
        only_b = sum(y and not x for x, y in zip(fa, fb, strict=True))
        p_value = mcnemar_p(only_a, only_b)
        intervals = wilson(sum(fa), len(common)), wilson(sum(fb), len(common))
        rows.append(BudgetRow(budget, sum(fa), sum(fb), only_a, only_b, p_value, *intervals))
    changed = []
    for e in common:
        row_a, row_b = a.rows[e], b.rows[e]
        end_a, end_b = _end(row_a), _end(row_b)
        if end_a != end_b:
            where = f"{row_a.get('scene', '')} {row_a.get('query', '')!r}"
            changed.append(Changed(e, where, end_a, end_b, parting(row_a.get("trace"), row_b.get("trace"))))
    return Comparison(a, b, common, tuple(rows), _sooner(a, b, common, reach), tuple(changed))


def _sooner(a: Side, b: Side, common: Sequence[int], reach: int) -> Sooner:
    both = [(a.rows[e]["steps"], b.rows[e]["steps"]) for e in common
            if found_by(a.rows[e], reach) and found_by(b.rows[e], reach)]  # fmt: skip
    a_sooner = sum(x < y for x, y in both)
    b_sooner = sum(y < x for x, y in both)
    ratios = [x / y for x, y in both if y > 0]
    return Sooner(
        len(both),
        a_sooner,
        b_sooner,
        mcnemar_p(a_sooner, b_sooner),
        float(np.median(ratios)) if ratios else 1.0,
    )


def mcnemar_p(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p-value: the discordant pairs as a binomial draw with p = 0.5
    (1 when there is none)."""
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson score 95 % interval of a success rate (0, 1 when ``n`` is 0)."""
    if n == 0:
        return (0.0, 1.0)
    interval = stats.binomtest(successes, n).proportion_ci(0.95, method="wilson")
    return (float(interval.low), float(interval.high))


def _p(p_value: float, equals: str = "") -> str:
    """A p-value to three decimals; "< 0.001" below that."""
    return "< 0.001" if p_value < 0.001 else f"{equals}{p_value:.3f}"


def _rate(found: int, n: int, interval: tuple[float, float]) -> str:
    return f"{found / n:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


# What makes two traced steps the same step (closed_loop.traced): the ids of the nodes made after
# the runs part differ between them, so only the steps before are compared
_SAME_STEP = ("action", "phase", "node", "utility")


def first_difference(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> int | None:
    """The index of the first step at which two traces of one episode differ (the shorter
    one's length when it is the other's beginning), None when they are the same."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if any(x.get(key) != y.get(key) for key in _SAME_STEP):
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


def parting(a: Sequence[Mapping[str, Any]] | None, b: Sequence[Mapping[str, Any]] | None) -> str | None:
    """Where two traces of one episode part, as a line: the action, then each side's step there
    (phase, node, what it is, utility, and a decision's runners-up); None when either row has no
    trace (results written before traces were kept) or the traces are the same."""
    if a is None or b is None:
        return None
    k = first_difference(a, b)
    if k is None:
        return None
    action = min(t[k]["action"] for t in (a, b) if k < len(t))
    return f"the runs part at action {action} (step {k + 1}): A {_step(a, k)}; B {_step(b, k)}"


def _step(trace: Sequence[Mapping[str, Any]], k: int) -> str:
    if k >= len(trace):
        return "ended"
    s = trace[k]
    text = f"{s['phase']} {s['node'] or '-'}" + (f" ({s['what']}, {s['utility']:.2f})" if s["node"] else "")
    runners = [f"{node} {u:.2f}" for node, _, u in s.get("top", [])[1:]]
    return text + (f" over {', '.join(runners)}" if runners else "")


def _end(row: Mapping[str, Any]) -> str:
    """How an episode ended: "found at N" or its cause and the actions it ran."""
    steps = int(row.get("steps", 0))
    if row.get("success", 0.0) > 0:
        return f"found at {steps}"
    return f"{row.get('cause') or row.get('end', 'no cause')} ({steps} actions)"
