"""Named aggregation strategies for chunked and sentence-level scoring.

Over source windows a strategy picks or pools the windows' scores for one
claim (sentence); over claim sentences it pools sentence scores into one.

>>> import numpy as np
>>> SOURCE_AGGREGATIONS["max"](np.array([0.1, 0.7, 0.3]))
1
>>> float(CLAIM_AGGREGATIONS["min"](np.array([0.9, 0.2])))
0.2
>>> discount_by_contradiction(np.array([0.8, 0.1, 0.1]), np.array(0.6)).round(3).tolist()
[0.356, 0.044, 0.6]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from veridic.errors import ConfigError, did_you_mean

__all__ = ["SOURCE_AGGREGATIONS", "CONTRADICTED_ANYWHERE", "CLAIM_AGGREGATIONS", "discount_by_contradiction", "get_source_aggregation",
           "get_claim_aggregation"]


def _argmax(scores: np.ndarray) -> int:
    return int(np.argmax(scores))


def _first(scores: np.ndarray) -> int:
    return 0


#: window scores → index of the window whose verdict stands for the claim.
SOURCE_AGGREGATIONS: dict[str, Callable[[np.ndarray], int]] = {
    "max": _argmax,  # some window supports it: paper 004 / SummaC-ZS
    "first": _first,  # only the first window (truncation baseline)
    # The best window's verdict, with the strongest contradiction among all kept windows: supported somewhere and
    # contradicted nowhere. "max" keeps the window that supports a claim and never sees that another one
    # contradicts it (a station said to be in Cebreros when the source puts it in Malargüe and names Cebreros
    # for another station).
    "uncontradicted": _argmax,
    # The same, counting only windows that hold at least half of the claim sentence's content words: a window
    # about something else tends to read as a contradiction to an NLI model, where it only says nothing.
    "uncontradicted-relevant": _argmax,
}
#: Source aggregations whose verdict also reads other windows' contradiction (discount_by_contradiction), each with
#: the share of the claim sentence's content words a window must hold for its contradiction to count.
CONTRADICTED_ANYWHERE: dict[str, float] = {"uncontradicted": 0.0, "uncontradicted-relevant": 0.5}


def discount_by_contradiction(best: np.ndarray, c_any: np.ndarray) -> np.ndarray:
    """e, n, c (last axis) of the best window, with c raised to ``c_any`` where that is higher.

    The claim is contradicted with the probability of the most confident contradiction among its windows; the rest
    is shared between entailment and neutral in the proportion the best window gives them, so each row still sums
    to 1. ``c_any`` broadcasts against ``best[..., 2]``.
    """
    best = np.asarray(best, dtype=np.float64)
    c = np.maximum(best[..., 2], np.asarray(c_any, dtype=np.float64))
    rest = best[..., 0] + best[..., 1]
    # rest is 0 only when the best window is itself a certain contradiction; then nothing is left to share.
    scale = np.divide(1.0 - c, rest, out=np.zeros_like(rest), where=rest > 0)
    out = np.stack([best[..., 0] * scale, best[..., 1] * scale, np.where(rest > 0, c, best[..., 2])], axis=-1)
    return out


def _softmin(x: np.ndarray, axis: int = -1, temperature: float = 0.1) -> np.ndarray:
    w = np.exp(-(x - x.min(axis=axis, keepdims=True)) / temperature)
    return np.asarray((w * x).sum(axis=axis) / w.sum(axis=axis))


#: per-sentence scores (last axis) → claim score.
CLAIM_AGGREGATIONS: dict[str, Callable[..., Any]] = {
    "min": lambda x, axis=-1: np.min(x, axis=axis),  # one unsupported sentence makes the claim unfaithful
    "mean": lambda x, axis=-1: np.mean(x, axis=axis),  # SummaC-ZS
    "softmin": _softmin,  # between the two: dominated by the weakest sentences
}


def get_source_aggregation(name: str) -> Callable[[np.ndarray], int]:
    if name not in SOURCE_AGGREGATIONS:
        raise ConfigError(f"Unknown source aggregation {name!r}; expected one of {sorted(SOURCE_AGGREGATIONS)}." + did_you_mean(name, SOURCE_AGGREGATIONS))
    return SOURCE_AGGREGATIONS[name]


def get_claim_aggregation(name: str) -> Callable[..., np.ndarray]:
    if name not in CLAIM_AGGREGATIONS:
        raise ConfigError(f"Unknown claim aggregation {name!r}; expected one of {sorted(CLAIM_AGGREGATIONS)}." + did_you_mean(name, CLAIM_AGGREGATIONS))
    return CLAIM_AGGREGATIONS[name]
