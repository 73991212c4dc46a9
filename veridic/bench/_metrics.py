"""Ranking metrics, threshold fitting, bootstrap CIs and significance tests.

Conventions: ``labels`` are 1 = faithful, 0 = unfaithful; ``scores`` are
higher = more faithful; every metric is ``greater_is_better``. Thresholds
classify ``score >= threshold`` as faithful.

>>> roc_auc(labels=[0, 0, 1, 1], scores=[0.1, 0.4, 0.35, 0.8])
0.75
>>> ci = bootstrap_auc(labels=[0, 1] * 20, scores=list(range(40)), n_resamples=200, seed=0)
>>> ci.low <= ci.estimate <= ci.high
True
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veridic.errors import InputError, MissingDependencyError

try:
    from scipy.stats import rankdata
    from sklearn.metrics import average_precision_score, balanced_accuracy_score, f1_score, roc_auc_score
except ImportError as _exc:  # pragma: no cover - depends on the installed extras
    raise MissingDependencyError(_exc.name or "scikit-learn", extra="bench", purpose="The benchmark runner") from None

__all__ = [
    "ARTest",
    "BootstrapCI",
    "CrossFit",
    "ThresholdMetrics",
    "approximate_randomization",
    "bootstrap_auc",
    "crossfit_predictions",
    "dataset_rng",
    "fit_threshold",
    "mean_approximate_randomization",
    "mean_ci",
    "pr_auc",
    "roc_auc",
    "threshold_metrics",
]


def _arrays(labels: Sequence[int], scores: Sequence[float], *, what: str) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=float)
    if y.shape != s.shape or y.ndim != 1:
        raise InputError(f"{what}: labels and scores must be 1-D and equally long; got {y.shape} and {s.shape}.")
    if not np.isin(y, (0, 1)).all():
        raise InputError(f"{what}: labels must be 0/1; got values {sorted(set(y.tolist()))[:5]}.")
    if not np.isfinite(s).all():
        raise InputError(f"{what}: scores must be finite; {int((~np.isfinite(s)).sum())} are NaN or infinite.")
    if y.min(initial=1) == y.max(initial=0) or y.size == 0:
        raise InputError(
            f"{what} needs both faithful (1) and unfaithful (0) rows; got {int((y == 1).sum())} faithful and "
            f"{int((y == 0).sum())} unfaithful. Use a dataset that has both classes."
        )
    return y.astype(int), s


def dataset_rng(*, seed: int, name: str) -> np.random.Generator:
    """A generator seeded by ``(seed, name)``.

    Every scorer evaluated on the same dataset draws the *same* bootstrap
    resamples and folds (so per-scorer CIs are paired), while different
    datasets draw independently (so the CI of the mean is a joint bootstrap).
    """
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def roc_auc(*, labels: Sequence[int], scores: Sequence[float]) -> float:
    """ROC AUC with label 1 (faithful) as the positive class (``sklearn.metrics.roc_auc_score``)."""
    y, s = _arrays(labels, scores, what="ROC AUC")
    return float(roc_auc_score(y, s))


def pr_auc(*, labels: Sequence[int], scores: Sequence[float], positive: int = 1) -> float:
    """Average precision (area under the PR curve, ``sklearn.metrics.average_precision_score``).

    ``positive=1`` treats faithful rows as positives; ``positive=0`` treats
    unfaithful rows as positives and ranks them by ``-score``.
    """
    y, s = _arrays(labels, scores, what="PR AUC")
    if positive == 1:
        return float(average_precision_score(y, s))
    return float(average_precision_score(1 - y, -s))


@dataclass(frozen=True, slots=True)
class ThresholdMetrics:
    """Classification metrics of ``predictions`` (1 = predicted faithful)."""

    balanced_accuracy: float
    f1_faithful: float
    f1_unfaithful: float


def threshold_metrics(*, labels: Sequence[int], predictions: Sequence[int]) -> ThresholdMetrics:
    """Balanced accuracy and the F1 of each class for 0/1 predictions."""
    y = np.asarray(labels, dtype=int)
    p = np.asarray(predictions, dtype=int)
    return ThresholdMetrics(
        balanced_accuracy=float(balanced_accuracy_score(y, p)),
        f1_faithful=float(f1_score(y, p, pos_label=1, zero_division=0.0)),
        f1_unfaithful=float(f1_score(y, p, pos_label=0, zero_division=0.0)),
    )


def fit_threshold(*, labels: Sequence[int], scores: Sequence[float]) -> float:
    """Threshold maximising balanced accuracy of ``score >= threshold`` on these rows.

    Candidates are midpoints between consecutive distinct scores (and the
    minimum score, i.e. "everything faithful"), so the threshold never sits on
    a fitted row; ties in balanced accuracy go to the lowest threshold.

    >>> fit_threshold(labels=[0, 0, 1, 1], scores=[0.1, 0.2, 0.6, 0.9])
    0.4
    """
    y, s = _arrays(labels, scores, what="Threshold fitting")
    order = np.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    fp = np.cumsum(1 - y_sorted)
    # Only the last index of each run of equal scores is a valid cut point.
    last = np.r_[s_sorted[1:] != s_sorted[:-1], True]
    tpr = tp[last] / tp[-1]
    tnr = 1.0 - fp[last] / fp[-1]
    bal = (tpr + tnr) / 2.0
    uniq = s_sorted[last]  # descending distinct scores
    # Lowest threshold among the best: the last maximal index in descending order.
    k = len(bal) - 1 - int(np.argmax(bal[::-1] >= bal.max() - 1e-12))
    if k + 1 < len(uniq):
        return float((uniq[k] + uniq[k + 1]) / 2.0)
    return float(uniq[k])


@dataclass(frozen=True, slots=True)
class CrossFit:
    """Out-of-fold predictions: row i was classified with ``fold_thresholds[1 - folds[i]]``."""

    predictions: np.ndarray
    folds: np.ndarray
    fold_thresholds: tuple[float, float]


def crossfit_predictions(*, labels: Sequence[int], scores: Sequence[float], rng: np.random.Generator) -> CrossFit:
    """2-fold cross-fitting: fit on one half, classify the other, and swap.

    The split is stratified by label so each half has both classes; no row is
    ever classified by a threshold fitted on itself.
    """
    y, s = _arrays(labels, scores, what="Cross-fitted thresholds")
    folds = np.empty(len(y), dtype=int)
    for cls in (0, 1):
        idx = np.flatnonzero(y == cls)
        if len(idx) < 2:
            raise InputError(
                f"Cross-fitting a threshold needs at least 2 rows of each class; class {cls} has {len(idx)}. "
                "Pass --threshold-from with a separate dev split instead."
            )
        perm = rng.permutation(idx)
        # Alternate the starting fold per class so fold sizes stay balanced.
        folds[perm[: (len(idx) + cls) // 2]] = 0
        folds[perm[(len(idx) + cls) // 2 :]] = 1
    thresholds = tuple(fit_threshold(labels=y[folds == f], scores=s[folds == f]) for f in (0, 1))
    applied = np.where(folds == 0, thresholds[1], thresholds[0])
    return CrossFit(predictions=(s >= applied).astype(int), folds=folds, fold_thresholds=(thresholds[0], thresholds[1]))


# ---------------------------------------------------------------------------
# bootstrap


def _auc_rows(y_pos_first: int, n_neg: int, matrix: np.ndarray) -> np.ndarray:
    """AUC of every row of ``matrix`` whose first ``y_pos_first`` columns are positives (Mann-Whitney via ranks)."""
    ranks = rankdata(matrix, axis=1)
    n_pos = y_pos_first
    return (ranks[:, :n_pos].sum(axis=1) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    """A percentile bootstrap CI; ``distribution`` holds the resampled AUCs."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    seed: int | None
    distribution: np.ndarray


def bootstrap_auc(
    *,
    labels: Sequence[int],
    scores: Sequence[float],
    n_resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
    rng: np.random.Generator | None = None,
    chunk: int = 250,
) -> BootstrapCI:
    """Percentile bootstrap CI of ROC AUC, resampling stratified by label.

    Positives and negatives are resampled separately with replacement, which
    keeps the class counts (and so the AUC's definition) fixed in every
    resample. Pass ``rng`` (e.g. :func:`dataset_rng`) to share resamples
    across scorers; otherwise ``seed`` seeds a fresh generator.
    """
    y, s = _arrays(labels, scores, what="Bootstrap CI")
    if n_resamples < 1:
        raise InputError(f"n_resamples must be >= 1; got {n_resamples}.")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1); got {confidence}.")
    rng = rng if rng is not None else np.random.default_rng(seed)
    pos, neg = s[y == 1], s[y == 0]
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        ip = rng.integers(0, len(pos), size=(b, len(pos)))
        ineg = rng.integers(0, len(neg), size=(b, len(neg)))
        out[start : start + b] = _auc_rows(len(pos), len(neg), np.concatenate([pos[ip], neg[ineg]], axis=1))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(out, [alpha, 1.0 - alpha])
    return BootstrapCI(
        estimate=float(roc_auc_score(y, s)),
        low=float(low),
        high=float(high),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        distribution=out,
    )


def mean_ci(*, distributions: Sequence[np.ndarray], estimates: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Macro mean of per-dataset estimates with a joint-bootstrap percentile CI.

    ``distributions[d][b]`` must be the AUC of dataset ``d`` in resample ``b``
    with datasets resampled independently; the mean of column ``b`` is then a
    draw from the bootstrap distribution of the macro mean.
    """
    if not distributions:
        raise InputError("A mean over datasets needs at least one dataset.")
    lengths = {len(d) for d in distributions}
    if len(lengths) != 1:
        raise InputError(f"All datasets need the same number of bootstrap resamples; got {sorted(lengths)}.")
    means = np.mean(np.vstack(distributions), axis=0)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(np.mean(estimates)), float(low), float(high)


# ---------------------------------------------------------------------------
# approximate randomization


@dataclass(frozen=True, slots=True)
class ARTest:
    """Paired approximate-randomization test of AUC(a) - AUC(b).

    ``p_value`` is two-sided with the (count + 1) / (trials + 1) correction;
    ``null`` holds the permuted differences (used to test means of datasets).
    """

    diff: float
    p_value: float
    trials: int
    seed: int | None
    null: np.ndarray


def _rank_normalise(s: np.ndarray) -> np.ndarray:
    return rankdata(s) / len(s)


def approximate_randomization(
    *,
    labels: Sequence[int],
    scores_a: Sequence[float],
    scores_b: Sequence[float],
    trials: int = 10_000,
    seed: int | None = 0,
    rng: np.random.Generator | None = None,
    chunk: int = 500,
) -> ARTest:
    """Test whether scorers ``a`` and ``b`` rank these rows differently well.

    Each scorer's scores are first rank-normalised (scorers live on different
    scales, and swapping raw scores would compare apples to logits); AUC is
    unchanged by this. In each trial every row's pair of scores is swapped
    with probability 1/2; the p-value counts trials whose |AUC difference|
    reaches the observed one.

    >>> y = [0, 1] * 30
    >>> approximate_randomization(labels=y, scores_a=list(range(60)), scores_b=list(range(60)), trials=100).p_value
    1.0
    """
    y, a = _arrays(labels, scores_a, what="Approximate randomization")
    _, b = _arrays(labels, scores_b, what="Approximate randomization")
    if trials < 1:
        raise InputError(f"trials must be >= 1; got {trials}.")
    rng = rng if rng is not None else np.random.default_rng(seed)
    order = np.r_[np.flatnonzero(y == 1), np.flatnonzero(y == 0)]
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    ra, rb = _rank_normalise(a)[order], _rank_normalise(b)[order]
    observed = float(roc_auc_score(y, a) - roc_auc_score(y, b))
    null = np.empty(trials)
    for start in range(0, trials, chunk):
        t = min(chunk, trials - start)
        swap = rng.random((t, len(y))) < 0.5
        pa = np.where(swap, rb, ra)
        pb = np.where(swap, ra, rb)
        null[start : start + t] = _auc_rows(n_pos, n_neg, pa) - _auc_rows(n_pos, n_neg, pb)
    count = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    return ARTest(diff=observed, p_value=(count + 1) / (trials + 1), trials=trials, seed=seed, null=null)


def mean_approximate_randomization(*, tests: Sequence[ARTest]) -> ARTest:
    """Combine per-dataset AR tests into a test of the macro-mean AUC difference.

    Valid because rows are swapped independently, so trial ``t`` of every
    dataset together is one joint trial; all tests need equal ``trials``.
    """
    if not tests:
        raise InputError("A mean test needs at least one per-dataset test.")
    trials = {t.trials for t in tests}
    if len(trials) != 1:
        raise InputError(f"All per-dataset tests need the same number of trials; got {sorted(trials)}.")
    null = np.mean(np.vstack([t.null for t in tests]), axis=0)
    observed = float(np.mean([t.diff for t in tests]))
    count = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    n = tests[0].trials
    return ARTest(diff=observed, p_value=(count + 1) / (n + 1), trials=n, seed=tests[0].seed, null=null)

