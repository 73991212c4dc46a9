"""Held-back evaluation of an NLI model: accuracy and per-class metrics.

The evaluator receives the model; it never builds one. 3-way metrics are
computed on 3-way examples; ``accuracy_2way`` collapses predictions to
entailment vs not-entailment and covers every example (2-way sets included).

>>> per_class_metrics([0, 1, 2, 2], [0, 2, 2, 1])["contradiction"]["recall"]
0.5
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

from veridic.train._data import LABELS, NOT_ENTAILMENT, Example

__all__ = ["evaluate_nli", "per_class_metrics"]


def per_class_metrics(gold: Sequence[int], pred: Sequence[int]) -> dict[str, dict[str, float]]:
    """Precision / recall / F1 (higher is better) per 3-way class."""
    out: dict[str, dict[str, float]] = {}
    for k, name in enumerate(LABELS):
        tp = sum(g == k and p == k for g, p in zip(gold, pred))
        fp = sum(g != k and p == k for g, p in zip(gold, pred))
        fn = sum(g == k and p != k for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out[name] = {"precision": prec, "recall": rec, "f1": f1, "support": float(tp + fn)}
    return out


def evaluate_nli(*, model: Any, tokenizer: Any, examples: Sequence[Example], batch_size: int = 64,
                 max_length: int = 256, bf16: bool = False) -> dict[str, Any]:
    """Accuracy of ``model`` on ``examples`` (all metrics: higher is better).

    Returns ``{"n", "accuracy_3way", "n_3way", "accuracy_2way", "per_class",
    "per_source": {source: accuracy_2way or 3way}}``.
    """
    import torch

    if not examples:
        return {"n": 0}
    was_training = model.training
    model.eval()
    preds: list[int] = []
    order = sorted(range(len(examples)), key=lambda i: len(examples[i].premise) + len(examples[i].hypothesis))
    pred_by_idx: dict[int, int] = {}
    device = next(model.parameters()).device
    ctx = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else nullcontext()
    with torch.inference_mode(), ctx:
        for s in range(0, len(order), batch_size):
            idx = order[s: s + batch_size]
            enc = tokenizer([examples[i].premise for i in idx], [examples[i].hypothesis for i in idx],
                            truncation=True, max_length=max_length, padding=True, return_tensors="pt").to(device)
            logits = model(**enc).logits.float()
            for i, p in zip(idx, logits.argmax(-1).tolist()):
                pred_by_idx[i] = p
    if was_training:
        model.train()
    preds = [pred_by_idx[i] for i in range(len(examples))]
    gold = [e.label for e in examples]
    three = [(g, p) for g, p in zip(gold, preds) if g != NOT_ENTAILMENT]
    acc3 = sum(g == p for g, p in three) / len(three) if three else None
    acc2 = sum((g == 0) == (p == 0) for g, p in zip(gold, preds)) / len(gold)
    by_src: dict[str, list[bool]] = defaultdict(list)
    for e, p in zip(examples, preds):
        by_src[e.source].append(e.label == p if e.label != NOT_ENTAILMENT else p != 0)
    return {
        "n": len(examples),
        "accuracy_3way": acc3,
        "n_3way": len(three),
        "accuracy_2way": acc2,
        "per_class": per_class_metrics([g for g, _ in three], [p for _, p in three]),
        "per_source": {k: sum(v) / len(v) for k, v in sorted(by_src.items())},
        "per_source_n": {k: len(v) for k, v in sorted(by_src.items())},
    }
