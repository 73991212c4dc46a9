"""The contrast suite: hand-checked pairs that ask whether a scorer reads structure, not words.

``veridic bench --data contrast`` scores the suite like any dataset (ROC AUC with CIs) and adds
accuracy per rule (role swaps, bag-of-words swaps, faithful passives, ...) at each scorer's own
decision threshold. Baselines without a natural threshold (word overlap) get the threshold that
maximises their balanced accuracy on the whole suite: an oracle that flatters them.

>>> rows = [{"id": "a", "label": 0, "rule": "role_swap"}, {"id": "b", "label": 1, "rule": "passive_keep_roles"}]
>>> acc = rule_accuracy(rows=rows, scores={"a": -0.3, "b": 0.4}, threshold=0.0)
>>> acc["role_swap"]["accuracy"], acc["passive_keep_roles"]["accuracy"], acc["_all"]["balanced_accuracy"]
(1.0, 1.0, 1.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import InputError

__all__ = ["CONTRAST_SUITE", "load_suite_rules", "rule_accuracy", "oracle_threshold", "wilson", "TARGET_GROUPS"]

CONTRAST_SUITE = Path(__file__).resolve().parent / "data" / "contrast_suite.jsonl"

#: Groups the issue's targets are stated for (rule names from veridic.synth._contrast).
TARGET_GROUPS: dict[str, tuple[str, ...]] = {
    "argument swaps": ("role_swap", "voice_role_change"),
    "bag-of-words swaps": ("bow_swap",),
    "faithful counterparts": ("passive_keep_roles", "symmetric_swap", "coord_swap", "converse", "clause_reorder",
                              "compression", "synonym"),
}


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a proportion ``k / n`` (sensible at 0 and 1, unlike the normal one)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    # At k = 0 or k = n the bound is exactly 0 or 1; rounding would put p itself outside its interval.
    return (0.0 if k == 0 else max(0.0, c - h), 1.0 if k == n else min(1.0, c + h))


def load_suite_rules(path: str | Path = CONTRAST_SUITE) -> list[dict[str, Any]]:
    """``[{"id", "label", "rule"}]`` of a suite file (benchmark schema with ``meta.rule``)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"contrast suite not found: {path}")
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            rule = (r.get("meta") or {}).get("rule")
            if not rule:
                raise InputError(f"{path}:{i}: contrast rows need meta.rule")
            out.append({"id": str(r["id"]), "label": int(r["label"]), "rule": rule})
    return out


def rule_accuracy(*, rows: Sequence[Mapping[str, Any]], scores: Mapping[str, float], threshold: float
                  ) -> dict[str, dict[str, Any]]:
    """Accuracy per rule (score > threshold means "entailed"), with Wilson CIs, plus ``_all`` and target groups."""
    per: dict[str, list[bool]] = {}
    pos: list[bool] = []
    neg: list[bool] = []
    for r in rows:
        if r["id"] not in scores:
            raise InputError(f"no score for contrast row {r['id']!r}")
        s = scores[r["id"]]
        if s is None or (isinstance(s, float) and math.isnan(s)):
            raise InputError(f"contrast row {r['id']!r} has no usable score ({s!r})")
        ok = (s > threshold) == bool(r["label"])
        per.setdefault(r["rule"], []).append(ok)
        (pos if r["label"] else neg).append(ok)
    out: dict[str, dict[str, Any]] = {}
    for rule, v in sorted(per.items()):
        out[rule] = {"n": len(v), "accuracy": sum(v) / len(v), "ci95": wilson(sum(v), len(v))}
    for group, rules in TARGET_GROUPS.items():
        v = [x for rule in rules for x in per.get(rule, [])]
        if v:
            out["group:" + group] = {"n": len(v), "accuracy": sum(v) / len(v), "ci95": wilson(sum(v), len(v))}
    bal = ((sum(pos) / len(pos) if pos else 0.0) + (sum(neg) / len(neg) if neg else 0.0)) / (2 if pos and neg else 1)
    allv = pos + neg
    out["_all"] = {"n": len(allv), "accuracy": sum(allv) / max(1, len(allv)), "balanced_accuracy": bal,
                   "threshold": threshold}
    return out


def oracle_threshold(*, rows: Sequence[Mapping[str, Any]], scores: Mapping[str, float]) -> float:
    """The threshold with the best balanced accuracy on ``rows`` (for baselines with no threshold of their own)."""
    vals = sorted({float(scores[r["id"]]) for r in rows})
    if not vals:
        raise InputError("no scores to choose a threshold from")
    # "score > t" splits a from b for any a <= t < b; the midpoint reads best, but for adjacent floats it
    # rounds onto b and splits nothing, so fall back to a itself.
    cands = [vals[0] - 1.0] + [m if (m := (a + b) / 2) < b else a for a, b in zip(vals, vals[1:])] + [vals[-1] + 1.0]
    return max(cands, key=lambda t: (rule_accuracy(rows=rows, scores=scores, threshold=t)["_all"]["balanced_accuracy"], -abs(t)))


def format_rule_table(results: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """Markdown: one row per rule/group, one column per scorer (accuracy % [CI])."""
    scorers = list(results)
    keys = sorted({k for r in results.values() for k in r if k != "_all"}, key=lambda k: (k.startswith("group:"), k))
    lines = ["| rule | n | " + " | ".join(scorers) + " |", "|---|---:|" + "---:|" * len(scorers)]
    for k in keys:
        n = next(r[k]["n"] for r in results.values() if k in r)
        cells = []
        for s in scorers:
            m = results[s].get(k)
            cells.append("—" if m is None else f"{100 * m['accuracy']:.1f} <sub>{100 * m['ci95'][0]:.0f}–{100 * m['ci95'][1]:.0f}</sub>")
        label = f"**{k[6:]}**" if k.startswith("group:") else f"`{k}`"
        lines.append(f"| {label} | {n} | " + " | ".join(cells) + " |")
    lines.append("| balanced accuracy (all) | | " + " | ".join(f"{100 * results[s]['_all']['balanced_accuracy']:.1f}" for s in scorers) + " |")
    lines.append("| threshold | | " + " | ".join(f"{results[s]['_all']['threshold']:.3g}" for s in scorers) + " |")
    return "\n".join(lines)


def write_contrast_report(*, result: Any, scorers: Sequence[Any], out_dir: str | Path) -> dict[str, Path]:
    """Per-rule accuracy for every contrast-suite dataset of a benchmark run (``contrast.md`` / ``contrast.json``).

    A scorer built from a :class:`~veridic.config.ScorerConfig` is judged at its own decision
    threshold; scorers without one (word overlap, score files) at their oracle threshold.
    Returns the written paths (empty when the run held no contrast data).
    """
    from veridic.io._atomic import atomic_write_text

    suites = [ds for ds in result.datasets if _is_suite(ds)]
    if not suites:
        return {}
    by_name = {getattr(s, "name", None): s for s in scorers}
    report: dict[str, Any] = {}
    md = ["# Contrast suite: accuracy per rule", "",
          "Accuracy (%) with 95 % Wilson intervals; a pair counts as judged entailed when the score is above the "
          "threshold. Scorers with their own decision threshold use it; the others (word overlap) get the threshold "
          "with the best balanced accuracy on the whole suite, an oracle that flatters them.", ""]
    for ds in suites:
        ids = {e.id for e in ds.examples}
        rows = [r for r in load_suite_rules(ds.path) if r["id"] in ids]
        per: dict[str, Any] = {}
        for name in result.scorer_names:
            run = result.results[(ds.name, name)].run
            scores = {i: float(s) for i, s in zip(run.ids, run.scores)}
            sc = by_name.get(name)
            cfg = getattr(sc, "config", None)
            # Only calibrated methods (e, e-c, hybrid) have a meaningful threshold of their own.
            natural = cfg is not None and getattr(cfg, "spec", None) is not None and cfg.spec.calibrated and getattr(sc, "threshold", None) is not None
            thr = float(sc.threshold) if natural else oracle_threshold(rows=rows, scores=scores)
            per[name] = rule_accuracy(rows=rows, scores=scores, threshold=thr)
            per[name]["_all"]["threshold_kind"] = "own" if natural else "oracle"
        report[ds.name] = per
        md += [f"## {ds.name} ({len(rows)} pairs, `{ds.path}`)", "", format_rule_table(per), ""]
    out_dir = Path(out_dir)
    paths = {"contrast_json": out_dir / "contrast.json", "contrast_markdown": out_dir / "contrast.md"}
    atomic_write_text(paths["contrast_json"], json.dumps(report, indent=1, allow_nan=False))
    atomic_write_text(paths["contrast_markdown"], "\n".join(md) + "\n")
    return paths


def _is_suite(ds: Any) -> bool:
    """A dataset whose file rows carry ``meta.rule`` (the shipped suite or one in its format)."""
    if ds.name == "contrast":
        return True
    try:
        with open(ds.path, encoding="utf-8") as fh:
            first = json.loads(fh.readline() or "{}")
    except (OSError, ValueError):
        return False
    return bool((first.get("meta") or {}).get("rule"))
