"""Turn a :class:`~veridic.bench._runner.BenchResult` into report files.

``write_report`` writes, into one folder:

- ``report.json`` — every number with what produced it (schema in
  ``docs/report_schema.md`` and the TypedDicts below), including the
  per-example scores so anyone can recompute each AUC;
- ``report.md`` — a table like paper 004's Table 1 (datasets as rows,
  scorers as columns, AUC × 100 with the 95% CI as small numbers and marks
  for significant wins), a threshold table and a cost table like 004's
  Table 4;
- ``roc_<dataset>.png`` — one ROC curve per scorer, AUC in the legend.

>>> import tempfile, pathlib, json
>>> from veridic.bench._datasets import load_datasets
>>> from veridic.bench._runner import run_benchmark
>>> from veridic import build_scorer
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> rows = [{"id": str(i), "source": "the red fox", "claim": c, "label": l}
...         for i, (c, l) in enumerate([("red fox", 1), ("blue cat", 0)] * 4)]
>>> _ = (d / "toy.jsonl").write_text("\\n".join(json.dumps(r) for r in rows))
>>> res = run_benchmark(datasets=load_datasets(specs=[str(d)]), scorers=[build_scorer("overlap")], n_resamples=50)
>>> paths = write_report(result=res, out_dir=d / "out", command="veridic bench --data toy --scorer overlap")
>>> json.loads(paths["json"].read_text())["results"]["toy"]["overlap"]["auc"]
1.0
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Any, Literal, TypedDict

from veridic.bench._cache import veridic_version
from veridic.bench._runner import BenchResult, DatasetResult
from veridic.errors import MissingDependencyError

__all__ = ["SCHEMA_VERSION", "Report", "build_report", "plot_roc_curves", "render_markdown", "write_report"]

SCHEMA_VERSION = "1.1"  # 1.1: threshold_fits per scorer and dataset; datasets[*].skipped; scores.csv beside the report
SIGNIFICANCE_MARKS = ("†", "‡", "§", "¶", "#", "*")
P_THRESHOLD = 0.05


# ---------------------------------------------------------------------------
# schema (documented key by key in docs/report_schema.md)


class ScoreRow(TypedDict):
    id: str
    label: int
    score: float
    prediction: int
    fold: int | None


class ThresholdSource(TypedDict):
    kind: Literal["dev_split", "cross_fit"]
    fit_datasets: list[str]
    fit_n: int
    fold_thresholds: list[float] | None
    rule: str
    note: str


class DatasetScorerBlock(TypedDict):
    n: int
    n_pos: int
    auc: float
    auc_ci_low: float
    auc_ci_high: float
    pr_auc: float
    pr_auc_unfaithful: float
    balanced_accuracy: float
    f1_faithful: float
    f1_unfaithful: float
    threshold: float
    threshold_source: ThresholdSource
    seconds_per_example: float | None
    timing: Literal["measured", "cache", "external"]
    cache_key: str | None
    scores: list[ScoreRow]


class MeanBlock(TypedDict):
    datasets: list[str]
    auc: float
    auc_ci_low: float
    auc_ci_high: float
    pr_auc: float
    balanced_accuracy: float
    seconds_per_example: float | None


class ComparisonBlock(TypedDict):
    a: str
    b: str
    dataset: str
    diff: float
    diff_ci_low: float
    diff_ci_high: float
    p_value: float
    trials: int
    significant: bool


class Report(TypedDict):
    schema_version: str
    veridic_version: str
    created: str
    command: str
    settings: dict[str, Any]
    metrics: dict[str, dict[str, Any]]
    scorers: dict[str, dict[str, Any]]
    datasets: dict[str, dict[str, Any]]
    results: dict[str, dict[str, DatasetScorerBlock]]
    mean: dict[str, MeanBlock]
    comparisons: list[ComparisonBlock]
    threshold_fits: dict[str, dict[str, Any]]
    cost: list[dict[str, Any]]
    figures: dict[str, str]


METRIC_DEFINITIONS: dict[str, dict[str, Any]] = {
    "auc": {"what": "ROC AUC, positive class = label 1 (faithful), ranked by score", "by": "sklearn.metrics.roc_auc_score", "greater_is_better": True},
    "auc_ci_low/auc_ci_high": {"what": "percentile bootstrap CI of auc, resampling faithful and unfaithful rows separately (stratified)", "by": "veridic.bench.bootstrap_auc", "greater_is_better": True},
    "pr_auc": {"what": "average precision with label 1 (faithful) as positive", "by": "sklearn.metrics.average_precision_score", "greater_is_better": True},
    "pr_auc_unfaithful": {"what": "average precision with label 0 (unfaithful) as positive, ranked by -score", "by": "sklearn.metrics.average_precision_score", "greater_is_better": True},
    "balanced_accuracy": {"what": "mean of per-class recall of 'faithful iff score >= threshold', threshold fitted on rows not reported (see threshold_source)", "by": "sklearn.metrics.balanced_accuracy_score", "greater_is_better": True},
    "f1_faithful": {"what": "F1 of the faithful class (label 1) at the fitted threshold", "by": "sklearn.metrics.f1_score(pos_label=1)", "greater_is_better": True},
    "f1_unfaithful": {"what": "F1 of the unfaithful class (label 0) at the fitted threshold", "by": "sklearn.metrics.f1_score(pos_label=0)", "greater_is_better": True},
    "p_value": {"what": "two-sided paired approximate-randomization test of auc(a) - auc(b), rank-normalised scores, (count+1)/(trials+1)", "by": "veridic.bench.approximate_randomization", "greater_is_better": False},
    "seconds_per_example": {"what": "wall-clock seconds of scorer.score over the dataset divided by n (measured when first scored; cached runs keep that timing)", "by": "time.perf_counter", "greater_is_better": False},
}


def _num(x: float | None, digits: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return None
    return round(float(x), digits)


def _threshold_note(r: DatasetResult) -> str:
    t = r.threshold
    if t.kind == "dev_split":
        return f"fitted once on {', '.join(t.fit_datasets)} (n={t.fit_n}) and applied to every row of {r.dataset}"
    return ("2-fold cross-fitting within the dataset: each row was classified with the threshold fitted on the other fold "
            "(row field 'fold'); 'threshold' is the mean of the two fold thresholds, for reference, and was not applied")


def _dataset_block(r: DatasetResult) -> DatasetScorerBlock:
    t = r.threshold
    folds = r.folds
    rows: list[ScoreRow] = [
        {"id": i, "label": int(y), "score": float(s), "prediction": int(p), "fold": None if folds is None else int(folds[k])}
        for k, (i, y, s, p) in enumerate(zip(r.run.ids, r.run.labels, r.run.scores, r.predictions))
    ]
    return {
        "n": r.n,
        "n_pos": r.n_pos,
        "auc": _num(r.auc),
        "auc_ci_low": _num(r.auc_ci.low),
        "auc_ci_high": _num(r.auc_ci.high),
        "pr_auc": _num(r.pr_auc),
        "pr_auc_unfaithful": _num(r.pr_auc_unfaithful),
        "balanced_accuracy": _num(r.balanced_accuracy),
        "f1_faithful": _num(r.f1_faithful),
        "f1_unfaithful": _num(r.f1_unfaithful),
        "threshold": float(t.threshold),
        "threshold_source": {
            "kind": t.kind,
            "fit_datasets": list(t.fit_datasets),
            "fit_n": t.fit_n,
            "fold_thresholds": None if t.fold_thresholds is None else [float(x) for x in t.fold_thresholds],
            "rule": t.rule,
            "note": _threshold_note(r),
        },
        "seconds_per_example": _num(r.run.seconds_per_example, 9),
        "timing": r.run.timing,
        "cache_key": r.run.cache_key,
        "scores": rows,
    }


def build_report(*, result: BenchResult, command: str, figures: dict[str, str] | None = None) -> Report:
    """The ``report.json`` payload (see ``docs/report_schema.md``)."""
    s = result.settings
    settings = {
        "n_resamples": s.n_resamples,
        "seed": s.seed,
        "confidence": s.confidence,
        "bootstrap": "percentile; faithful and unfaithful rows resampled separately (stratified); the same resamples for every scorer on a dataset",
        "mean_ci": "joint bootstrap: datasets resampled independently, macro mean of per-dataset AUCs per resample",
        "ar_trials": s.ar_trials,
        "ar_test": "paired approximate randomization on rank-normalised scores, two-sided, p = (count+1)/(trials+1)",
        "significance_level": P_THRESHOLD,
        "threshold_from": None if s.threshold_from is None else list(s.threshold_from),
        "threshold_mode": "dev_split" if s.threshold_from else "cross_fit (2 folds, stratified by label, seeded)",
        "cache_dir": s.cache_dir,
    }
    results: dict[str, dict[str, DatasetScorerBlock]] = {}
    for ds in result.datasets:
        results[ds.name] = {name: _dataset_block(result.results[(ds.name, name)]) for name in result.scorer_names}
    threshold_fits: dict[str, dict[str, Any]] = {}
    for (name, reported), fit in result.threshold_fits.items():
        runs = [r for r in result.threshold_runs.get(name, []) if r.dataset in fit.fit_datasets]
        threshold_fits.setdefault(name, {})[reported] = {
            "threshold": fit.threshold,
            "fit_datasets": list(fit.fit_datasets),
            "fit_n": fit.fit_n,
            "rule": fit.rule,
            "scores": [{"dataset": r.dataset, "id": i, "label": int(y), "score": float(v)}
                       for r in runs for i, y, v in zip(r.ids, r.labels, r.scores)],
        }
    return {
        "schema_version": SCHEMA_VERSION,
        "veridic_version": veridic_version(),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": command,
        "settings": settings,
        "metrics": METRIC_DEFINITIONS,
        "scorers": {name: dict(desc) for name, desc in result.scorers.items()},
        "datasets": {ds.name: {"path": ds.path, "n": ds.n, "n_pos": ds.n_pos, "data_hash": ds.data_hash,
                            "renamed_ids": list(ds.renamed_ids),
                            "skipped": {"n": len(ds.skipped), "rows": list(ds.skipped)}} for ds in result.datasets},
        "results": results,
        "mean": {
            name: {"datasets": list(m.datasets), "auc": _num(m.auc), "auc_ci_low": _num(m.auc_ci_low), "auc_ci_high": _num(m.auc_ci_high),
                   "pr_auc": _num(m.pr_auc), "balanced_accuracy": _num(m.balanced_accuracy), "seconds_per_example": _num(m.seconds_per_example, 9)}
            for name, m in result.means.items()
        },
        "comparisons": [
            {"a": c.a, "b": c.b, "dataset": c.dataset, "diff": _num(c.diff), "diff_ci_low": _num(c.diff_ci_low), "diff_ci_high": _num(c.diff_ci_high),
             "p_value": _num(c.p_value), "trials": c.trials, "significant": bool(c.p_value <= P_THRESHOLD)}
            for c in result.comparisons
        ],
        "threshold_fits": threshold_fits,
        "cost": _cost_rows(result),
        "figures": dict(figures or {}),
    }


def _cost_rows(result: BenchResult) -> list[dict[str, Any]]:
    rows = []
    for name, desc in result.scorers.items():
        m = result.means[name]
        timings = {result.results[(ds.name, name)].run.timing for ds in result.datasets}
        rows.append({
            "scorer": name,
            "parameters": desc.get("parameters"),
            "model_calls_per_example": desc.get("model_calls_per_example"),
            "seconds_per_example": _num(m.seconds_per_example, 9),
            "timing": sorted(timings),
        })
    return rows


# ---------------------------------------------------------------------------
# Markdown


def _marks(result: BenchResult) -> tuple[dict[tuple[str, str], str], list[str]]:
    """Marks per (dataset, scorer) cell and the legend lines, one symbol per compared pair."""
    pairs: list[tuple[str, str]] = []
    for c in result.comparisons:
        if (c.a, c.b) not in pairs:
            pairs.append((c.a, c.b))
    marks: dict[tuple[str, str], str] = {}
    legend = []
    for k, (a, b) in enumerate(pairs):
        sym = SIGNIFICANCE_MARKS[k % len(SIGNIFICANCE_MARKS)] * (1 + k // len(SIGNIFICANCE_MARKS))
        trials = next(c.trials for c in result.comparisons if (c.a, c.b) == (a, b))
        legend.append(f"{sym} on a cell of `{a}`: significantly better than `{b}`; on a cell of `{b}`: significantly better than `{a}` "
                      f"(p ≤ {P_THRESHOLD}, paired approximate randomization, {trials} trials).")
        for c in result.comparisons:
            if (c.a, c.b) == (a, b) and c.p_value <= P_THRESHOLD and c.diff != 0:
                winner = a if c.diff > 0 else b
                marks[(c.dataset, winner)] = marks.get((c.dataset, winner), "") + sym
    return marks, legend


def _fmt_params(p: Any) -> str:
    if p is None:
        return "–"
    if isinstance(p, (int, float)):
        return f"{p / 1e6:,.0f}" if p >= 1e6 else (f"{p / 1e6:.2f}" if p else "0")
    return str(p)


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "–"
    return f"{s:.3g}"


def render_markdown(*, result: BenchResult, command: str) -> str:
    """Paper-004-style tables: AUC with CIs and marks, threshold metrics, cost."""
    names = result.scorer_names
    marks, legend = _marks(result)
    s = result.settings
    lines = [
        "# veridic bench report",
        "",
        f"`{command}` · veridic {veridic_version()} · {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"## ROC AUC × 100 (small numbers: {int(s.confidence * 100)}% bootstrap CI, {s.n_resamples} stratified resamples, seed {s.seed})",
        "",
        "| Dataset | n (faithful) | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|---:|" + "---:|" * len(names),
    ]
    for ds in result.datasets:
        cells = []
        for n in names:
            r = result.results[(ds.name, n)]
            mark = marks.get((ds.name, n), "")
            cells.append(f"{100 * r.auc:.1f}{f'<sup>{mark}</sup>' if mark else ''} <sub>{100 * r.auc_ci.low:.1f}–{100 * r.auc_ci.high:.1f}</sub>")
        lines.append(f"| {ds.name} | {ds.n} ({ds.n_pos}) | " + " | ".join(cells) + " |")
    cells = []
    for n in names:
        m = result.means[n]
        mark = marks.get(("mean", n), "")
        cells.append(f"**{100 * m.auc:.1f}**{f'<sup>{mark}</sup>' if mark else ''} <sub>{100 * m.auc_ci_low:.1f}–{100 * m.auc_ci_high:.1f}</sub>")
    lines.append(f"| **Mean** ({len(result.datasets)} datasets, macro) | {sum(d.n for d in result.datasets)} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(legend or ["No significance tests were requested (use `--compare A B`)."])

    if s.threshold_from:
        how = (f"Thresholds fitted per scorer and per dataset on the declared dev split {', '.join(s.threshold_from)}, each dataset on the "
               "dev rows of the same name (never on reported rows).")
    else:
        how = ("Thresholds cross-fitted within each dataset (2 label-stratified folds, seed "
               f"{s.seed}): each row is classified with the threshold fitted on the other fold; t is the mean of the two fold thresholds.")
    lines += [
        "",
        "## Balanced accuracy × 100 at the fitted threshold t (faithful iff score ≥ t)",
        "",
        how,
        "",
        "| Dataset | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for ds in result.datasets:
        cells = [f"{100 * r.balanced_accuracy:.1f} <sub>t={r.threshold.threshold:.3g}</sub>"
                 for r in (result.results[(ds.name, n)] for n in names)]
        lines.append(f"| {ds.name} | " + " | ".join(cells) + " |")
    lines.append("| **Mean** | " + " | ".join(f"**{100 * result.means[n].balanced_accuracy:.1f}**" for n in names) + " |")

    if result.comparisons:
        lines += ["", "## Significance tests (AUC(a) − AUC(b))", "",
                  "| a | b | Dataset | Δ AUC × 100 | 95% CI | p |", "|---|---|---|---:|---:|---:|"]
        for c in result.comparisons:
            lines.append(f"| `{c.a}` | `{c.b}` | {c.dataset} | {100 * c.diff:+.1f} | {100 * c.diff_ci_low:+.1f} – {100 * c.diff_ci_high:+.1f} | {c.p_value:.4f} |")

    lines += ["", "## Cost (like paper 004's Table 4)", "",
              "| Scorer | Mean AUC × 100 | Params × 10⁶ | Model calls / example | Seconds / example | Timing |",
              "|---|---:|---:|---:|---:|---|"]
    for row in _cost_rows(result):
        n = row["scorer"]
        calls = row["model_calls_per_example"]
        lines.append(f"| `{n}` | {100 * result.means[n].auc:.1f} | {_fmt_params(row['parameters'])} | "
                     f"{'–' if calls is None else calls} | {_fmt_seconds(row['seconds_per_example'])} | {', '.join(row['timing'])} |")
    lines += ["", "Seconds are wall-clock on the machine that first scored the rows (cached runs reuse that timing).", ""]
    skipped = [ds for ds in result.datasets if ds.skipped]
    if skipped:
        lines += ["## Rows left out (--on-invalid skip)", "", "| Dataset | rows skipped | ids (first 10) | first reason |", "|---|---:|---|---|"]
        for ds in skipped:
            ids = ", ".join(str(r["id"] if r["id"] is not None else f"row {r['row']}") for r in ds.skipped[:10])
            lines.append(f"| {ds.name} | {len(ds.skipped)} | {ids}{' …' if len(ds.skipped) > 10 else ''} | {ds.skipped[0]['reason']} |")
        lines.append("")
    return "\n".join(lines)


def write_scores_table(*, result: BenchResult, path: str | Path) -> Path:
    """Per-example scores: one row per reported example (id, dataset, label), one column per scorer (CSV)."""
    import csv

    from veridic.io._atomic import atomic_open

    names = result.scorer_names
    path = Path(path)
    with atomic_open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "dataset", "label", *names])
        for ds in result.datasets:
            runs = [result.results[(ds.name, n)].run for n in names]
            by_id = [dict(zip(r.ids, r.scores)) for r in runs]
            for ex in ds.examples:
                w.writerow([ex.id, ds.name, ex.label, *(repr(float(b[ex.id])) for b in by_id)])
    return path


# ---------------------------------------------------------------------------
# figures


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def plot_roc_curves(*, result: BenchResult, out_dir: str | Path) -> dict[str, str]:
    """One PNG per dataset with one ROC curve per scorer; returns dataset → file name."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependencyError("matplotlib", extra="bench", purpose="Plotting ROC curves") from None
    matplotlib.use("Agg")  # headless: no display on servers and CI
    import matplotlib.pyplot as plt
    from sklearn.metrics import roc_curve

    out_dir = Path(out_dir)
    figures = {}
    for ds in result.datasets:
        fig, ax = plt.subplots(figsize=(4.8, 4.5), dpi=120)
        for name in result.scorer_names:
            r = result.results[(ds.name, name)]
            fpr, tpr, _ = roc_curve(r.run.labels, r.run.scores)
            ax.plot(fpr, tpr, label=f"{name} (AUC {r.auc:.3f})", linewidth=1.4)
        ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=1)
        ax.set_xlabel("false positive rate (unfaithful rated faithful)")
        ax.set_ylabel("true positive rate (faithful rated faithful)")
        ax.set_title(f"{ds.name} (n={ds.n}, faithful={ds.n_pos})", fontsize=10)
        ax.legend(loc="lower right", fontsize=8)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        fig.tight_layout()
        fname = f"roc_{_safe(ds.name)}.png"
        fig.savefig(out_dir / fname)
        plt.close(fig)
        figures[ds.name] = fname
    return figures


def write_report(*, result: BenchResult, out_dir: str | Path, command: str, figures: bool = True) -> dict[str, Path]:
    """Write report.json, report.md and the ROC PNGs; return their paths by kind."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = plot_roc_curves(result=result, out_dir=out_dir) if figures else {}
    report = build_report(result=result, command=command, figures=figs)
    json_path = out_dir / "report.json"
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(json_path, json.dumps(report, indent=1, ensure_ascii=False, allow_nan=False))
    md_path = out_dir / "report.md"
    atomic_write_text(md_path, render_markdown(result=result, command=command))
    paths = {"json": json_path, "markdown": md_path, "scores": write_scores_table(result=result, path=out_dir / "scores.csv")}
    for ds_name, fname in figs.items():
        paths[f"roc:{ds_name}"] = out_dir / fname
    return paths
