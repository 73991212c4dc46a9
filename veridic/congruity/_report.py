"""T / M per class, split by familiarity with significance, as JSON, Markdown and bar charts.

:func:`build_report` turns per-item scores (:class:`~veridic.congruity._ranking.ItemScores`,
from an LM, any scorer, or generation precision) into a
:class:`CongruityReport`: overall T and M per class (appendix C), the same
for familiar and unfamiliar items, and for every (metric, class) a
:class:`~veridic.congruity._metrics.GroupComparison` (permutation and
Mann–Whitney p, Cohen's d, rank-biserial). Items with unknown familiarity
count in the overall numbers only. For generation scores (precision
against each reference) the mean precision per class is compared too
(the paper's Figure 4).

:func:`write_report` writes ``report.json`` (every number, the model and
config that produced it, the veridic version), ``report.md`` and one PNG
per figure (``t_m.png`` like Figures 5–6: bars per class, familiar vs
unfamiliar, significance stars; ``precision.png`` like Figure 4).

``report.json`` keys: ``schema_version``, ``probe`` (``"congruity"``),
``veridic_version``, ``task`` (``claim``, ``description`` or
``generation-<metric>``), ``classes``, ``n_items``, ``metrics`` (what T / M
mean and their direction), ``overall[metric][class]``,
``overall_ci[metric][class]`` (95 % percentile bootstrap over items,
``n_bootstrap`` resamples, seeded),
``groups[familiar|unfamiliar]`` (``n`` and ``[metric][class]``),
``tests[metric][class]`` (a :class:`GroupComparison` as a dict),
``familiarity`` (method, threshold, counts), ``model`` (the backend's
``describe()``), ``config`` (normalisation, context, permutations, seed),
``build`` (item-construction stats), ``seconds``, ``command``, ``figures``,
``generated_at``. Proportions are in [0, 1]; the Markdown shows them ×100.

>>> from veridic.congruity._ranking import ItemScores
>>> rows = [ItemScores(id=str(i), task="claim", scores={"accurate": float(i % 3), "nonfactual": 1.0}) for i in range(8)]
>>> rep = build_report(scores=rows, familiar=[i < 4 for i in range(8)], n_permutations=200)
>>> rep.overall["T"]["accurate"], rep.groups["familiar"]["n"]
(0.4375, 4)
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from veridic.congruity._metrics import GroupComparison, compare_groups, per_item_rr, per_item_top
from veridic.congruity._ranking import ItemScores
from veridic.errors import InputError, MissingDependencyError

__all__ = ["CongruityReport", "bootstrap_ci", "build_report", "plot_report", "render_markdown", "write_report"]

SCHEMA_VERSION = "1.0"


def _stars(p: float | None) -> str:
    if p is None or math.isnan(p):
        return ""
    return "***" if p < 0.005 else "**" if p < 0.01 else "*" if p < 0.05 else ""


@dataclass
class CongruityReport:
    """Everything a run produced (see the module docstring); ``to_dict`` is the JSON schema."""

    task: str
    classes: list[str]
    n_items: int
    overall: dict[str, dict[str, float]]
    groups: dict[str, dict[str, Any]]
    tests: dict[str, dict[str, GroupComparison]]
    familiarity: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    overall_ci: dict[str, dict[str, list[float]]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from veridic.bench._cache import veridic_version

        return {
            "schema_version": SCHEMA_VERSION,
            "probe": "congruity",
            "veridic_version": veridic_version(),
            "task": self.task,
            "classes": self.classes,
            "n_items": self.n_items,
            "metrics": {"T": "top-rank frequency (appendix C eq. 1/3)", "M": "mean reciprocal rank (eq. 2/4)",
                        "direction": "higher = the class is preferred more often; for distractor classes higher = more errors of that kind"},
            "overall": self.overall,
            "overall_ci": self.overall_ci,
            "groups": self.groups,
            "tests": {m: {c: g.to_dict() for c, g in d.items()} for m, d in self.tests.items()},
            "familiarity": self.familiarity,
            "model": self.model,
            "config": self.config,
            "build": self.build,
            "seconds": self.seconds,
        }


def _metric_arrays(scores: Sequence[ItemScores], generation: bool) -> dict[str, dict[str, np.ndarray]]:
    s = [x.scores for x in scores]
    out = {"T": per_item_top(s), "M": per_item_rr(s)}
    if generation:
        out["precision"] = {c: np.array([x[c] for x in s], dtype=float) for c in s[0]}
    return out


def bootstrap_ci(values: np.ndarray, *, n_bootstrap: int = 1000, seed: int = 0, level: float = 0.95) -> list[float]:
    """Percentile bootstrap interval of the mean over items (NaNs left out).

    >>> bootstrap_ci(np.array([0.0, 1.0] * 50), n_bootstrap=500)[0] < 0.5 < bootstrap_ci(np.array([0.0, 1.0] * 50), n_bootstrap=500)[1]
    True
    """
    v = values[~np.isnan(values)]
    if v.size == 0:
        return [float("nan"), float("nan")]
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n_bootstrap, v.size))].mean(axis=1)
    a = (1 - level) / 2
    return [float(np.quantile(means, a)), float(np.quantile(means, 1 - a))]


def build_report(
    *,
    scores: Sequence[ItemScores],
    familiar: Sequence[bool | None] | None = None,
    familiarity: dict[str, Any] | None = None,
    model: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    build: dict[str, Any] | None = None,
    n_permutations: int = 10000,
    seed: int = 0,
    seconds: float | None = None,
    n_bootstrap: int = 1000,
) -> CongruityReport:
    """Aggregate per-item scores into a :class:`CongruityReport` (``familiar`` defaults to each item's own)."""
    if not scores:
        raise InputError("No item scores to report on.")
    fam = list(familiar) if familiar is not None else [x.familiar for x in scores]
    if len(fam) != len(scores):
        raise InputError(f"familiar has {len(fam)} values for {len(scores)} items.")
    task = scores[0].task
    generation = task.startswith("generation")
    arrays = _metric_arrays(scores, generation)
    classes = list(scores[0].scores)
    overall = {m: {c: float(np.nanmean(v)) for c, v in d.items()} for m, d in arrays.items()}
    overall_ci = {m: {c: bootstrap_ci(v, n_bootstrap=n_bootstrap, seed=seed) for c, v in d.items()} for m, d in arrays.items()}
    known = np.array([f is not None for f in fam])
    fmask = np.array([bool(f) for f in fam])
    groups: dict[str, dict[str, Any]] = {}
    tests: dict[str, dict[str, GroupComparison]] = {}
    for name, mask in (("familiar", known & fmask), ("unfamiliar", known & ~fmask)):
        groups[name] = {"n": int(mask.sum()), **{m: {c: (float(np.nanmean(v[mask])) if mask.any() else None) for c, v in d.items()} for m, d in arrays.items()}}
    if (known & fmask).any() and (known & ~fmask).any():
        for m, d in arrays.items():
            tests[m] = {}
            for c, v in d.items():
                ok = known & ~np.isnan(v)
                tests[m][c] = compare_groups(values=v[ok], familiar=fmask[ok], n_permutations=n_permutations, seed=seed)
    return CongruityReport(
        task=task, classes=classes, n_items=len(scores), overall=overall, groups=groups, tests=tests,
        familiarity={**(familiarity or {}), "n_familiar": groups["familiar"]["n"], "n_unfamiliar": groups["unfamiliar"]["n"], "n_unknown": int((~known).sum())},
        model=model or {}, config=config or {}, build=build or {}, seconds=seconds, overall_ci=overall_ci,
    )


def _fmt(x: float | None, pct: bool = True) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.3f}"


def render_markdown(report: CongruityReport, *, command: str | None = None) -> str:
    """The report as Markdown: overall table, familiar/unfamiliar table with tests, provenance."""
    r = report
    fam = r.familiarity
    lines = [f"# Factual vs contextual errors: {r.task} ({r.n_items} items)", ""]
    if command:
        lines += ["```", command, "```", ""]
    who = r.model.get("model") or r.model.get("model_id") or r.model.get("backend") or "scorer"
    lines += [f"Model: `{who}`; familiarity: **{fam.get('method', 'given')}**"
              + (f" (threshold {fam['threshold']:g})" if fam.get("threshold") is not None else "")
              + f"; {fam.get('n_familiar', 0)} familiar, {fam.get('n_unfamiliar', 0)} unfamiliar, {fam.get('n_unknown', 0)} unknown.", ""]
    metrics = [m for m in ("T", "M", "precision") if m in r.overall]
    lines += ["| class | " + " | ".join(f"{m} (all) [95 % CI]" for m in metrics) + " |", "|---|" + "---|" * len(metrics)]

    def cell(m: str, c: str) -> str:
        ci = r.overall_ci.get(m, {}).get(c)
        return _fmt(r.overall[m][c]) + (f" [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "")

    for c in r.classes:
        lines.append(f"| {c} | " + " | ".join(cell(m, c) for m in metrics) + " |")
    lines.append("")
    if r.tests:
        lines += [
            (
                f"Familiar (F) vs unfamiliar (U), ×100; Δ = F − U; p = two-sided permutation test ({r.config.get('n_permutations', 10000)} permutations) "
                "/ Mann–Whitney U; d = Cohen's d; stars: * p<0.05, ** p<0.01, *** p<0.005 (permutation)."
            ),
            "",
            "| metric | class | F | U | Δ | p (perm.) | p (MWU) | d |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for m in metrics:
            for c in r.classes:
                g = r.tests[m][c]
                lines.append(
                    f"| {m} | {c} | {_fmt(g.mean_familiar)} | {_fmt(g.mean_unfamiliar)} | {100 * g.difference:+.1f}{_stars(g.p_permutation)} "
                    f"| {g.p_permutation:.3g} | {g.p_mannwhitney:.3g} | {_fmt(g.cohens_d, pct=False)} |"
                )
        lines.append("")
    if r.build:
        lines += [f"Items built from {r.build.get('n_examples')} examples; skipped: {r.build.get('skipped')}; distractor sources: {r.build.get('sources')}.", ""]
    lines += [f"veridic {r.to_dict()['veridic_version']}; config: `{json.dumps(r.config, sort_keys=True)}`"
              + (f"; {r.seconds:.0f} s" if r.seconds else ""), ""]
    return "\n".join(lines)


def plot_report(report: CongruityReport, *, out_dir: str | Path) -> dict[str, str]:
    """Bar charts like the paper's Figures 4–6; returns {figure name: file name}."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependencyError("matplotlib", extra="congruity", purpose="Plotting the congruity report") from None
    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    r = report
    if not r.tests:
        return files
    panels = [("t_m.png", [m for m in ("T", "M") if m in r.tests])]
    if "precision" in r.tests:
        panels.append(("precision.png", ["precision"]))
    for fname, metrics in panels:
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.6), squeeze=False)
        x = np.arange(len(r.classes))
        for ax, m in zip(axes[0], metrics):
            f = [r.tests[m][c].mean_familiar for c in r.classes]
            u = [r.tests[m][c].mean_unfamiliar for c in r.classes]
            ax.bar(x - 0.2, f, 0.4, label=f"familiar (n={r.familiarity.get('n_familiar')})", color="#4c72b0")
            ax.bar(x + 0.2, u, 0.4, label=f"unfamiliar (n={r.familiarity.get('n_unfamiliar')})", color="#dd8452")
            for i, c in enumerate(r.classes):
                s = _stars(r.tests[m][c].p_permutation)
                if s:
                    ax.text(i, max(f[i], u[i]) * 1.02 + 0.005, s, ha="center", va="bottom")
            ax.set_xticks(x, r.classes, rotation=15)
            ax.set_title({"T": "T (top-rank frequency)", "M": "M (mean reciprocal rank)", "precision": "precision vs reference"}[m])
            ax.set_ylim(0, max(max(f), max(u)) * 1.2 + 0.02)
        axes[0][0].legend(fontsize=8)
        fig.suptitle(f"{r.task}: {r.model.get('model') or 'scorer'}, familiarity = {r.familiarity.get('method', 'given')}", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / fname, dpi=120)
        plt.close(fig)
        files[fname.removesuffix(".png")] = fname
    return files


def write_report(report: CongruityReport, *, out_dir: str | Path, command: str | None = None, figures: bool = True) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and the PNG figures into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = plot_report(report, out_dir=out) if figures else {}
    payload = report.to_dict()
    payload["command"] = command
    payload["figures"] = figs
    payload["generated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    paths = {"json": out / "report.json", "markdown": out / "report.md"}
    from veridic.io._atomic import atomic_write_text

    atomic_write_text(paths["json"], json.dumps(payload, indent=2) + "\n")
    md = render_markdown(report, command=command)
    if figs:
        md += "\n" + "\n".join(f"![{k}]({v})" for k, v in figs.items()) + "\n"
    atomic_write_text(paths["markdown"], md)
    for k, v in figs.items():
        paths[k] = out / v
    return paths
