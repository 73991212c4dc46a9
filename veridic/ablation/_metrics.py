"""Accuracy and margin-accuracy of factual ablation, with bootstrap CIs (paper 001, §3.2).

For each example, ``difference = log P(y | c, g) − log P(y | c, g′)``
(natural log). *Accuracy* is the fraction with ``difference > 0``;
*margin-accuracy* at margin ``m`` the fraction with ``difference > m``:
with ``m = log 100`` the target must be at least 100 times less likely
under the ablated grounding. Ties count as failures (strict ``>``, as in
the authors' script). Both are proportions in [0, 1], greater is better.

>>> margin_accuracy(differences=[5.0, 0.5, -1.0, 4.7], margin=0.0)
0.75
>>> margin_accuracy(differences=[5.0, 0.5, -1.0, 4.7], margin=LOG_100)
0.5
>>> r = summarize(differences=[5.0, 0.5, -1.0, 4.7], margins=[0.0], n_resamples=200, seed=0)[0]
>>> (r.margin, r.value, r.n)
(0.0, 0.75, 4)
>>> r.ci_low <= r.value <= r.ci_high
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError

__all__ = ["DEFAULT_MARGINS", "LOG_100", "LOG_1000", "MarginAccuracy", "bootstrap_ci", "margin_accuracy", "parse_margins", "summarize"]

LOG_100 = math.log(100.0)
LOG_1000 = math.log(1000.0)
#: 0 = plain accuracy; log 100 is the paper's margin for the synthetic set, log 1000 for the natural one.
DEFAULT_MARGINS: tuple[float, ...] = (0.0, LOG_100, LOG_1000)


def _diffs(differences: Sequence[float]) -> np.ndarray:
    d = np.asarray(differences, dtype=float)
    if d.ndim != 1 or d.size == 0:
        raise InputError(f"differences must be a non-empty 1-D sequence of floats; got shape {d.shape}.")
    if not np.isfinite(d).all():
        raise InputError(f"differences must be finite; {int((~np.isfinite(d)).sum())} are NaN or infinite.")
    return d


def margin_accuracy(*, differences: Sequence[float], margin: float) -> float:
    """Fraction of examples whose log-prob difference exceeds ``margin`` (nats)."""
    if not math.isfinite(margin) or margin < 0:
        raise ConfigError(f"margin must be a finite number >= 0 (nats); got {margin!r}.")
    return float(np.mean(_diffs(differences) > margin))


def bootstrap_ci(
    *,
    successes: Sequence[bool],
    groups: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of a proportion.

    With ``groups``, whole groups are resampled (cluster bootstrap): the two
    directions of one synthetic edit share a grounding pair and are not
    independent draws.
    """
    s = np.asarray(successes, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise InputError("successes must be a non-empty 1-D sequence.")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1); got {confidence}.")
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be >= 1; got {n_resamples}.")
    rng = np.random.default_rng(seed)
    if groups is None:
        idx = rng.integers(0, s.size, size=(n_resamples, s.size))
        stats = s[idx].mean(axis=1)
    else:
        if len(groups) != s.size:
            raise InputError(f"groups has {len(groups)} entries for {s.size} successes.")
        names, inv = np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)
        sums = np.bincount(inv, weights=s, minlength=len(names))
        counts = np.bincount(inv, minlength=len(names)).astype(float)
        idx = rng.integers(0, len(names), size=(n_resamples, len(names)))
        stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    alpha = (1 - confidence) / 2
    return float(np.quantile(stats, alpha)), float(np.quantile(stats, 1 - alpha))


@dataclass(frozen=True)
class MarginAccuracy:
    """Margin-accuracy at ``margin`` nats (0 = accuracy), a proportion; greater is better."""

    margin: float
    value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float = 0.95
    greater_is_better: bool = True

    @property
    def name(self) -> str:
        return "accuracy" if self.margin == 0 else f"margin_accuracy@{self.margin:.3f}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **asdict(self)}


def summarize(
    *,
    differences: Sequence[float],
    margins: Sequence[float] = DEFAULT_MARGINS,
    groups: Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[MarginAccuracy]:
    """Margin-accuracy with a bootstrap CI for each margin (same resamples for every margin)."""
    d = _diffs(differences)
    out = []
    for m in margins:
        value = margin_accuracy(differences=d, margin=m)
        lo, hi = bootstrap_ci(successes=d > m, groups=groups, n_resamples=n_resamples, confidence=confidence, seed=seed)
        out.append(MarginAccuracy(margin=float(m), value=value, ci_low=lo, ci_high=hi, n=int(d.size), confidence=confidence))
    return out


def parse_margins(text: str) -> tuple[float, ...]:
    """Parse ``"0,log100,4.605"`` (nats; ``logN`` means log N).

    >>> [round(m, 3) for m in parse_margins("0, log100, 6.908")]
    [0.0, 4.605, 6.908]
    """
    out = []
    for part in text.split(","):
        p = part.strip().lower()
        if not p:
            continue
        try:
            out.append(math.log(float(p[3:])) if p.startswith("log") else float(p))
        except ValueError:
            raise ConfigError(f"Cannot read margin {part.strip()!r}: expected a number of nats (4.605) or logN (log100).") from None
        if out[-1] < 0 or not math.isfinite(out[-1]):
            raise ConfigError(f"Margins must be finite and >= 0; got {part.strip()!r}.")
    if not out:
        raise ConfigError("No margins given; expected e.g. '0,log100'.")
    return tuple(out)
