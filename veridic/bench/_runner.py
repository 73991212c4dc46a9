"""Score datasets with scorers and compute the benchmark statistics.

The runner receives scorers (it never loads models), scores every dataset
once per scorer (through the cache), and computes per dataset and scorer:
ROC AUC with a stratified percentile-bootstrap CI, PR AUC, and balanced
accuracy / F1 at a threshold fitted on rows that are *not* the reported
ones: a declared dev split (``threshold_datasets``) or, failing that, 2-fold
cross-fitting within the dataset. Pairs of scorers named in ``compare`` get
paired approximate-randomization tests per dataset and on the macro mean.

>>> import tempfile, pathlib, json
>>> from veridic.bench._datasets import load_datasets
>>> from veridic import build_scorer
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"id": str(i), "source": "the red fox jumps", "claim": c, "label": l}
...         for i, (c, l) in enumerate([("red fox", 1), ("blue cat", 0)] * 4)]
>>> _ = (d / "toy.jsonl").write_text("\\n".join(json.dumps(r) for r in rows))
>>> res = run_benchmark(datasets=load_datasets(specs=[str(d)]), scorers=[build_scorer("overlap")], n_resamples=50)
>>> res.result(dataset="toy", scorer="overlap").auc
1.0
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from tqdm.auto import tqdm

from veridic.bench._cache import CacheEntry, ScoreCache, cache_key, veridic_version
from veridic.bench._datasets import BenchDataset
from veridic.bench._metrics import (
    ARTest,
    BootstrapCI,
    approximate_randomization,
    bootstrap_auc,
    crossfit_predictions,
    dataset_rng,
    fit_threshold,
    mean_approximate_randomization,
    mean_ci,
    pr_auc,
    threshold_metrics,
)
from veridic.bench._scorers import ExternalScores
from veridic.errors import ConfigError, InputError, RegistryError, VeridicError, did_you_mean
from veridic.types import Scorer

__all__ = [
    "BenchResult",
    "BenchSettings",
    "Comparison",
    "DatasetResult",
    "MeanResult",
    "ScoreRun",
    "ThresholdFit",
    "run_benchmark",
    "score_dataset",
]


@dataclass(frozen=True, slots=True)
class BenchSettings:
    """The statistical protocol of one run (recorded in the report)."""

    n_resamples: int = 1000
    seed: int = 0
    confidence: float = 0.95
    ar_trials: int = 10_000
    threshold_from: tuple[str, ...] | None = None
    cache_dir: str | None = None


@dataclass(frozen=True, slots=True)
class ScoreRun:
    """Per-example scores of one scorer on one dataset, and where they came from.

    ``timing`` is ``"measured"`` (scored in this run), ``"cache"`` (seconds
    measured when the cache entry was written) or ``"external"`` (no timing).
    """

    scorer: str
    dataset: str
    ids: tuple[str, ...]
    labels: np.ndarray
    scores: np.ndarray
    seconds_per_example: float | None
    timing: Literal["measured", "cache", "external"]
    cache_key: str | None


@dataclass(frozen=True, slots=True)
class ThresholdFit:
    """How the classification threshold of one scorer on one dataset was obtained.

    ``kind="dev_split"``: ``threshold`` was fitted on ``fit_datasets`` (no
    reported row) and applied to every reported row. ``kind="cross_fit"``:
    rows of fold k were classified with ``fold_thresholds[1 - k]`` (fitted on
    the other fold); ``threshold`` is then the mean of the two fold
    thresholds, reported for reference only, not applied to any row.
    """

    kind: Literal["dev_split", "cross_fit"]
    threshold: float
    fit_datasets: tuple[str, ...]
    fit_n: int
    fold_thresholds: tuple[float, float] | None = None
    rule: str = "maximise balanced accuracy of score >= threshold; midpoints between distinct scores; ties -> lowest"


@dataclass(frozen=True, slots=True)
class DatasetResult:
    """All metrics of one scorer on one dataset (AUC is of label 1 = faithful)."""

    dataset: str
    scorer: str
    n: int
    n_pos: int
    auc: float
    auc_ci: BootstrapCI
    pr_auc: float
    pr_auc_unfaithful: float
    balanced_accuracy: float
    f1_faithful: float
    f1_unfaithful: float
    threshold: ThresholdFit
    predictions: np.ndarray
    folds: np.ndarray | None
    run: ScoreRun


@dataclass(frozen=True, slots=True)
class MeanResult:
    """Macro means over datasets; the AUC CI is a joint bootstrap across datasets."""

    scorer: str
    datasets: tuple[str, ...]
    auc: float
    auc_ci_low: float
    auc_ci_high: float
    pr_auc: float
    balanced_accuracy: float
    seconds_per_example: float | None


@dataclass(frozen=True, slots=True)
class Comparison:
    """Paired AR test of AUC(a) - AUC(b) on one dataset (or ``"mean"``)."""

    a: str
    b: str
    dataset: str
    diff: float
    diff_ci_low: float
    diff_ci_high: float
    p_value: float
    trials: int


@dataclass(slots=True)
class BenchResult:
    """Everything a report needs; look results up with :meth:`result`."""

    settings: BenchSettings
    datasets: list[BenchDataset]
    scorers: dict[str, dict[str, Any]]
    results: dict[tuple[str, str], DatasetResult]
    means: dict[str, MeanResult]
    comparisons: list[Comparison]
    threshold_runs: dict[str, list[ScoreRun]] = field(default_factory=dict)
    #: (scorer, reported dataset) -> the threshold fitted on that dataset's dev rows.
    threshold_fits: dict[tuple[str, str], ThresholdFit] = field(default_factory=dict)

    @property
    def scorer_names(self) -> list[str]:
        return list(self.scorers)

    def result(self, *, dataset: str, scorer: str) -> DatasetResult:
        try:
            return self.results[(dataset, scorer)]
        except KeyError:
            raise RegistryError(
                f"No result for dataset {dataset!r} and scorer {scorer!r}; datasets: "
                f"{', '.join(d.name for d in self.datasets)}; scorers: {', '.join(self.scorers)}."
            ) from None


# ---------------------------------------------------------------------------


def _describe(scorer: Scorer | ExternalScores) -> dict[str, Any]:
    desc = dict(scorer.describe())
    desc.setdefault("name", scorer.name)
    return desc


def score_dataset(
    *,
    scorer: Scorer | ExternalScores,
    dataset: BenchDataset,
    cache: ScoreCache | None = None,
    progress: bool = False,
) -> ScoreRun:
    """Scores of ``scorer`` on every row of ``dataset``, from the cache when possible."""
    labels = np.asarray(dataset.labels, dtype=int)
    ids = tuple(dataset.ids)
    if isinstance(scorer, ExternalScores):
        scores = np.asarray(scorer.lookup(ids=ids, dataset=dataset.name), dtype=float)
        return ScoreRun(scorer=scorer.name, dataset=dataset.name, ids=ids, labels=labels, scores=scores,
                        seconds_per_example=None, timing="external", cache_key=None)
    desc = _describe(scorer)
    version = veridic_version()
    key = cache_key(describe=desc, veridic_version=version, data_hash=dataset.data_hash)
    if cache is not None:
        entry = cache.get(key=key)
        if entry is not None and all(i in entry.scores for i in ids):
            scores = np.asarray([entry.scores[i]["score"] for i in ids], dtype=float)
            if np.isfinite(scores).all():
                return ScoreRun(scorer=scorer.name, dataset=dataset.name, ids=ids, labels=labels, scores=scores,
                                seconds_per_example=entry.seconds_per_example, timing="cache", cache_key=key)
    pairs = [ex.pair for ex in dataset.examples]
    contexts = [p.context for p in pairs]
    start = time.perf_counter()
    verdicts = scorer.score(
        sources=[p.source for p in pairs],
        claims=[p.claim for p in pairs],
        contexts=contexts if any(c is not None for c in contexts) else None,
        progress=progress,
    )
    seconds = (time.perf_counter() - start) / max(len(pairs), 1)
    if len(verdicts) != len(pairs):
        raise VeridicError(
            f"Scorer {scorer.name!r} returned {len(verdicts)} verdicts for the {len(pairs)} rows of dataset "
            f"{dataset.name!r}; a scorer must return exactly one verdict per row."
        )
    scores = np.asarray([v.score for v in verdicts], dtype=float)
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise VeridicError(
            f"Scorer {scorer.name!r} gave non-finite scores on dataset {dataset.name!r} (ids "
            f"{', '.join(repr(ids[i]) for i in bad[:5])}); the benchmark does not drop rows silently. Fix the scorer."
        )
    if cache is not None:
        records = {
            i: {"score": float(v.score), "e": v.e, "n": v.n, "c": v.c, "uncertainty": v.uncertainty}
            for i, v in zip(ids, verdicts)
        }
        cache.put(key=key, entry=CacheEntry(
            scores=records,
            seconds_per_example=seconds,
            meta={"describe": desc, "veridic_version": version, "dataset": dataset.name, "data_hash": dataset.data_hash,
                  "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
        ))
    return ScoreRun(scorer=scorer.name, dataset=dataset.name, ids=ids, labels=labels, scores=scores,
                    seconds_per_example=seconds, timing="measured", cache_key=key)


_SPLITS = ("dev", "valid", "validation", "val", "test", "train", "eval")


def split_base(name: str) -> str:
    """A dataset's name without a trailing split word: ``frank_test`` and ``frank_dev`` are both ``frank``.

    >>> split_base("frank_test"), split_base("begin2_dev"), split_base("wice")
    ('frank', 'begin2', 'wice')
    """
    for sep in ("_", "-", "."):
        head, _, tail = name.rpartition(sep)
        if head and tail.lower() in _SPLITS:
            return head
    return name


def match_threshold_datasets(*, datasets: Sequence[BenchDataset], threshold_datasets: Sequence[BenchDataset]) -> dict[str, list[str]]:
    """For each reported dataset, the threshold (dev) datasets of the same name, split words aside.

    Each reported dataset gets a threshold fitted on its own dev rows only;
    one with no dev rows is an error that names it and the dev sets given.
    """
    by_base: dict[str, list[str]] = {}
    for t in threshold_datasets:
        by_base.setdefault(split_base(t.name), []).append(t.name)
    out: dict[str, list[str]] = {}
    missing = []
    for ds in datasets:
        names = [t.name for t in threshold_datasets if t.name == ds.name] or by_base.get(split_base(ds.name), [])
        if not names:
            missing.append(ds.name)
        out[ds.name] = names
    if missing:
        raise ConfigError(
            f"--threshold-from has no dev rows for the reported dataset(s) {', '.join(map(repr, missing))}: thresholds are fitted per "
            f"dataset on the dev set of the same name (split words like _dev/_test aside); the dev sets given are "
            f"{', '.join(repr(t.name) for t in threshold_datasets)}. Add a dev file for each, or leave --threshold-from out to cross-fit."
        )
    return out


def _check_inputs(
    datasets: Sequence[BenchDataset],
    scorers: Sequence[Scorer | ExternalScores],
    threshold_datasets: Sequence[BenchDataset],
    compare: Sequence[tuple[str, str]],
) -> None:
    if not datasets:
        raise InputError("No datasets to benchmark; pass at least one with --data.")
    if not scorers:
        raise InputError("No scorers to benchmark; pass --scorer NAME or --scores FILE.")
    names = [s.name for s in scorers]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"Scorer names must be unique in one run; {', '.join(map(repr, dupes))} appear twice.")
    for ds in list(datasets) + list(threshold_datasets):
        if ds.n_pos in (0, ds.n):
            raise InputError(
                f"Dataset {ds.name!r} ({ds.path}) has {ds.n_pos} faithful and {ds.n - ds.n_pos} unfaithful rows; "
                "AUC and threshold fitting need both classes."
            )
    # A threshold fitted on reported rows would flatter the scorer: refuse any overlap.
    evaluated = {(ex.pair.source, ex.pair.claim): ds.name for ds in datasets for ex in ds.examples}
    for ds in threshold_datasets:
        shared = [evaluated[(ex.pair.source, ex.pair.claim)] for ex in ds.examples if (ex.pair.source, ex.pair.claim) in evaluated]
        if shared:
            raise ConfigError(
                f"The threshold split {ds.name!r} shares {len(shared)} rows (same source and claim) with the evaluated "
                f"dataset(s) {', '.join(sorted(set(shared)))}; thresholds must be fitted on rows that are not reported. "
                "Pass a different --threshold-from, or leave it out to cross-fit within each dataset."
            )
    if threshold_datasets:
        match_threshold_datasets(datasets=datasets, threshold_datasets=threshold_datasets)  # before any scoring
    for a, b in compare:
        for n in (a, b):
            if n not in names:
                raise RegistryError(f"--compare names {n!r}, which is not among this run's scorers ({', '.join(names)}).{did_you_mean(n, names)}")
        if a == b:
            raise ConfigError(f"--compare needs two different scorers; got {a!r} twice.")


def run_benchmark(
    *,
    datasets: Sequence[BenchDataset],
    scorers: Sequence[Scorer | ExternalScores],
    threshold_datasets: Sequence[BenchDataset] | None = None,
    threshold_from: Sequence[str] | None = None,
    compare: Sequence[tuple[str, str]] = (),
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    ar_trials: int = 10_000,
    cache: ScoreCache | None = None,
    progress: bool = False,
) -> BenchResult:
    """Score every dataset with every scorer and compute the statistics.

    ``threshold_datasets`` is the declared dev split for thresholds (its
    spec strings go in ``threshold_from`` for the report); without it each
    dataset is cross-fitted in two seeded, label-stratified folds.
    """
    threshold_datasets = list(threshold_datasets or [])
    _check_inputs(datasets, scorers, threshold_datasets, compare)
    settings = BenchSettings(
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        ar_trials=ar_trials,
        threshold_from=tuple(threshold_from) if threshold_from else (tuple(d.name for d in threshold_datasets) or None),
        cache_dir=None if cache is None else str(cache.directory),
    )
    runs, threshold_runs = _score_all(datasets, threshold_datasets, scorers, cache=cache, progress=progress)
    threshold_fits = _fit_thresholds(datasets, threshold_datasets, threshold_runs)
    results = {(ds.name, sc.name): _dataset_result(ds, sc.name, runs[(ds.name, sc.name)], threshold_fits.get((sc.name, ds.name)), settings)
               for ds in datasets for sc in scorers}
    means = {sc.name: _mean_result(sc.name, [results[(ds.name, sc.name)] for ds in datasets], confidence) for sc in scorers}
    comparisons = [c for a, b in compare for c in _compare(a, b, datasets, results, settings)]

    return BenchResult(
        settings=settings,
        datasets=list(datasets),
        scorers={s.name: _describe(s) for s in scorers},
        results=results,
        means=means,
        comparisons=comparisons,
        threshold_runs=threshold_runs,
        threshold_fits=threshold_fits,
    )


def _score_all(datasets: Sequence[BenchDataset], threshold_datasets: Sequence[BenchDataset], scorers: Sequence[Scorer | ExternalScores], *,
               cache: ScoreCache | None, progress: bool) -> tuple[dict[tuple[str, str], ScoreRun], dict[str, list[ScoreRun]]]:
    """Every scorer over the threshold split and the datasets (one progress bar over all runs)."""
    bar = tqdm(total=(len(datasets) + len(threshold_datasets)) * len(scorers), desc="bench", unit="run", disable=not progress)
    runs: dict[tuple[str, str], ScoreRun] = {}
    threshold_runs: dict[str, list[ScoreRun]] = {}
    try:
        for scorer in scorers:
            for ds in threshold_datasets:
                bar.set_postfix_str(f"{scorer.name} on {ds.name} (threshold split)")
                threshold_runs.setdefault(scorer.name, []).append(score_dataset(scorer=scorer, dataset=ds, cache=cache, progress=progress))
                bar.update(1)
            for ds in datasets:
                bar.set_postfix_str(f"{scorer.name} on {ds.name}")
                runs[(ds.name, scorer.name)] = score_dataset(scorer=scorer, dataset=ds, cache=cache, progress=progress)
                bar.update(1)
    finally:
        bar.close()
    return runs, threshold_runs


def _fit_thresholds(datasets: Sequence[BenchDataset], threshold_datasets: Sequence[BenchDataset],
                    threshold_runs: dict[str, list[ScoreRun]]) -> dict[tuple[str, str], ThresholdFit]:
    """Per (scorer, dataset), the threshold fitted on the dataset's declared dev split (none without one)."""
    fits: dict[tuple[str, str], ThresholdFit] = {}
    dev_of = match_threshold_datasets(datasets=datasets, threshold_datasets=threshold_datasets) if threshold_datasets else {}
    for name, tr in threshold_runs.items():
        for ds in datasets:
            mine = [r for r in tr if r.dataset in dev_of[ds.name]]
            y = np.concatenate([r.labels for r in mine])
            s = np.concatenate([r.scores for r in mine])
            fits[(name, ds.name)] = ThresholdFit(kind="dev_split", threshold=fit_threshold(labels=y, scores=s),
                                                 fit_datasets=tuple(r.dataset for r in mine), fit_n=len(y))
    return fits


def _dataset_result(ds: BenchDataset, scorer: str, run: ScoreRun, fit: ThresholdFit | None, st: BenchSettings) -> DatasetResult:
    """AUC with its bootstrap CI, PR-AUC, and the threshold metrics (at the dev-split threshold, else cross-fitted)."""
    y, s = run.labels, run.scores
    ci = bootstrap_auc(labels=y, scores=s, n_resamples=st.n_resamples, seed=st.seed, confidence=st.confidence,
                       rng=dataset_rng(seed=st.seed, name=ds.name))
    if fit is not None:
        preds = (s >= fit.threshold).astype(int)
        folds = None
    else:
        cf = crossfit_predictions(labels=y, scores=s, rng=dataset_rng(seed=st.seed, name="crossfit:" + ds.name))
        preds, folds = cf.predictions, cf.folds
        fit = ThresholdFit(kind="cross_fit", threshold=float(np.mean(cf.fold_thresholds)), fit_datasets=(ds.name,),
                           fit_n=len(y), fold_thresholds=cf.fold_thresholds)
    tm = threshold_metrics(labels=y, predictions=preds)
    return DatasetResult(
        dataset=ds.name, scorer=scorer, n=len(y), n_pos=int(y.sum()), auc=ci.estimate, auc_ci=ci,
        pr_auc=pr_auc(labels=y, scores=s, positive=1), pr_auc_unfaithful=pr_auc(labels=y, scores=s, positive=0),
        balanced_accuracy=tm.balanced_accuracy, f1_faithful=tm.f1_faithful, f1_unfaithful=tm.f1_unfaithful,
        threshold=fit, predictions=preds, folds=folds, run=run,
    )


def _mean_result(scorer: str, rs: Sequence[DatasetResult], confidence: float) -> MeanResult:
    """The mean over datasets, its CI from the per-dataset bootstrap distributions, and the time per example."""
    est, lo, hi = mean_ci(distributions=[r.auc_ci.distribution for r in rs], estimates=[r.auc for r in rs], confidence=confidence)
    timed = [(r.run.seconds_per_example, r.n) for r in rs if r.run.seconds_per_example is not None]
    spe = sum(t * n for t, n in timed) / sum(n for _, n in timed) if timed else None
    return MeanResult(scorer=scorer, datasets=tuple(r.dataset for r in rs), auc=est, auc_ci_low=lo, auc_ci_high=hi,
                      pr_auc=float(np.mean([r.pr_auc for r in rs])), balanced_accuracy=float(np.mean([r.balanced_accuracy for r in rs])),
                      seconds_per_example=spe)


def _compare(a: str, b: str, datasets: Sequence[BenchDataset], results: dict[tuple[str, str], DatasetResult],
             st: BenchSettings) -> list[Comparison]:
    """Paired AR tests of AUC(a) − AUC(b) per dataset and on the mean, with bootstrap CIs of the difference."""
    out: list[Comparison] = []
    tests: list[ARTest] = []
    diffs: list[np.ndarray] = []
    alpha = (1.0 - st.confidence) / 2.0
    for ds in datasets:
        ra, rb = results[(ds.name, a)], results[(ds.name, b)]
        test = approximate_randomization(labels=ra.run.labels, scores_a=ra.run.scores, scores_b=rb.run.scores,
                                         trials=st.ar_trials, seed=st.seed, rng=dataset_rng(seed=st.seed, name="ar:" + ds.name))
        # Both scorers were bootstrapped with the same per-dataset resamples, so this difference is paired.
        diff_dist = ra.auc_ci.distribution - rb.auc_ci.distribution
        lo, hi = np.quantile(diff_dist, [alpha, 1.0 - alpha])
        out.append(Comparison(a=a, b=b, dataset=ds.name, diff=test.diff, diff_ci_low=float(lo), diff_ci_high=float(hi),
                              p_value=test.p_value, trials=test.trials))
        tests.append(test)
        diffs.append(diff_dist)
    mean_test = mean_approximate_randomization(tests=tests)
    lo, hi = np.quantile(np.mean(np.vstack(diffs), axis=0), [alpha, 1.0 - alpha])
    out.append(Comparison(a=a, b=b, dataset="mean", diff=mean_test.diff, diff_ci_low=float(lo), diff_ci_high=float(hi),
                          p_value=mean_test.p_value, trials=mean_test.trials))
    return out
