"""Benchmark runner: score labelled datasets, report AUC with honest statistics.

Datasets (:mod:`~veridic.bench._datasets`) and scorers
(:mod:`~veridic.bench._scorers`) come from registries; the runner
(:mod:`~veridic.bench._runner`) scores through a cache
(:mod:`~veridic.bench._cache`) and computes the statistics of
:mod:`~veridic.bench._metrics`; :mod:`~veridic.bench._report` writes
``report.json``, ``report.md`` and ROC curves. The CLI lives in
:mod:`veridic.bench.cli` (imported lazily: it needs typer).

>>> from veridic.bench import scorer_names
>>> "overlap" in scorer_names()
True
"""

from veridic.bench._cache import CacheEntry, ScoreCache, cache_key, default_cache_dir
from veridic.bench._datasets import (
    BenchDataset,
    BenchExample,
    dataset_groups,
    load_dataset_file,
    load_datasets,
    register_dataset_group,
    resolve_data_spec,
)
from veridic.bench._metrics import (
    approximate_randomization,
    bootstrap_auc,
    crossfit_predictions,
    fit_threshold,
    pr_auc,
    roc_auc,
)
from veridic.bench._report import build_report, render_markdown, write_report
from veridic.bench._runner import BenchResult, BenchSettings, DatasetResult, run_benchmark, score_dataset
from veridic.bench._scorers import (
    ExternalScores,
    get_scorer_spec,
    load_external_scores,
    register_scorer,
    scorer_names,
)

__all__ = [
    "BenchDataset",
    "BenchExample",
    "BenchResult",
    "BenchSettings",
    "CacheEntry",
    "DatasetResult",
    "ExternalScores",
    "ScoreCache",
    "approximate_randomization",
    "bootstrap_auc",
    "build_report",
    "cache_key",
    "crossfit_predictions",
    "dataset_groups",
    "default_cache_dir",
    "fit_threshold",
    "get_scorer_spec",
    "load_dataset_file",
    "load_datasets",
    "load_external_scores",
    "pr_auc",
    "register_dataset_group",
    "register_scorer",
    "render_markdown",
    "resolve_data_spec",
    "roc_auc",
    "run_benchmark",
    "score_dataset",
    "scorer_names",
    "write_report",
]
