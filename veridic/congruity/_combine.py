"""Combine two or more scorers' option scores for the same items (e.g. the fine-tuned encoder and the zero-shot LM).

The scorers live on different scales: the multiple-choice head gives
logits that spread over several units, the LM a per-byte log-likelihood
whose options differ by tenths of a nat. Adding them raw would let the
wider scale decide alone. Each scorer's options are therefore
**standardised within the item** (mean 0, standard deviation 1 over the
item's options; an item whose options all tie contributes zeros), and the
standardised scores are summed with fixed weights. Nothing is fitted:
the weights are the only choice, and they are made on validation items,
never on the test.

Weight 0 drops a scorer, so picking one scorer per task is the same
operation (``weights=(1, 0)``); ``congruity combine`` takes one weight
vector per run.

>>> from veridic.congruity._ranking import ItemScores
>>> mc = [ItemScores(id="1", task="description", scores={"accurate": 2.0, "both": 0.0, "nonfactual": 1.0})]
>>> lm = [ItemScores(id="1", task="description", scores={"accurate": -1.1, "both": -1.0, "nonfactual": -1.6})]
>>> out = combine_scores(runs=[mc, lm], weights=[1.0, 1.0])
>>> max(out[0].scores, key=out[0].scores.get)
'accurate'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from veridic.congruity._ranking import ItemScores
from veridic.errors import ConfigError, InputError

__all__ = ["combine_scores", "standardise"]


def standardise(scores: Mapping[str, float]) -> dict[str, float]:
    """Scores shifted to mean 0 and scaled to standard deviation 1 over the item's options (all zeros when they tie)."""
    vals = list(scores.values())
    if not vals or any(not math.isfinite(v) for v in vals):
        raise InputError(f"Option scores must be finite numbers; got {dict(scores)}.")
    mean = sum(vals) / len(vals)
    sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
    return {k: ((v - mean) / sd if sd > 0 else 0.0) for k, v in scores.items()}


def combine_scores(*, runs: Sequence[Sequence[ItemScores]], weights: Sequence[float]) -> list[ItemScores]:
    """Weighted sum of standardised scores, item by item.

    ``runs`` are score lists for the same items in the same order (as
    ``congruity score`` writes them for one items file); every item must
    carry the same id, task and classes in every run. The result keeps the
    first run's ``familiar`` and ``meta``.
    """
    if len(runs) < 2:
        raise ConfigError(f"Combining needs at least two score runs; got {len(runs)}.")
    if len(weights) != len(runs):
        raise ConfigError(f"One weight per score run: {len(runs)} runs, {len(weights)} weights.")
    if any(not math.isfinite(w) or w < 0 for w in weights) or not any(w > 0 for w in weights):
        raise ConfigError(f"Weights must be finite, >= 0 and not all 0; got {list(weights)}.")
    n = len(runs[0])
    if n == 0:
        raise InputError("The score runs hold no items; score an items file with each model first.")
    if any(len(r) != n for r in runs):
        raise InputError(f"The score runs cover different numbers of items ({[len(r) for r in runs]}); score the same items file with each model.")
    out: list[ItemScores] = []
    for i in range(n):
        first = runs[0][i]
        for r in runs[1:]:
            other = r[i]
            if (other.id, other.task) != (first.id, first.task) or set(other.scores) != set(first.scores):
                raise InputError(f"Item {i} differs between runs: {(first.id, first.task, sorted(first.scores))} vs {(other.id, other.task, sorted(other.scores))}; "
                                 "score the same items file, in the same order, with each model.")
        total = dict.fromkeys(first.scores, 0.0)
        for r, w in zip(runs, weights):
            if w:
                for k, v in standardise(r[i].scores).items():
                    total[k] += w * v
        out.append(ItemScores(id=first.id, task=first.task, scores=total, familiar=first.familiar, meta=dict(first.meta)))
    return out
