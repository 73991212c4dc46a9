"""The AIS report: per-system Flag / Int / AIS with significance, agreement per stage, paper comparison.

Report JSON keys (all percentages in [0, 100], agreement in [-1, 1], higher is better):

* ``dataset``: released dataset name or None; ``source``: what was read;
* ``systems``: one :class:`~veridic.ais._stats.SystemScores` dict per system,
  plus ``int_lower`` / ``ais_lower`` (significantly lower than the best
  system at ``significance.alpha_level``, the paper's asterisks);
* ``agreement``: ``{"int": Agreement, "ais": Agreement}`` dicts;
* ``significance``: ``{"int": Significance, "ais": Significance}`` dicts;
* ``ties``: items without a majority per stage;
* ``paper`` (released datasets only): the paper's row next to ours and the
  absolute differences, in points (Tables 3-6) and in alpha units (Table 7);
* ``settings``: sampled, n_resamples, seed.

>>> from veridic.ais._stats import ItemVotes
>>> votes = [ItemVotes(item=str(i), system="s", int_yes=3, int_no=2, ais_yes=3) for i in range(4)]
>>> r = build_report(votes, n_resamples=10)
>>> r["systems"][0]["int_pct"], r["agreement"]["ais"]["alpha"]
(100.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from veridic.ais._paper import PAPER_AGREEMENT, PAPER_SYSTEMS, PAPER_TABLE
from veridic.ais._stats import ItemVotes, agreement, consensus, significance, system_scores

__all__ = ["build_report", "format_report"]


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(abs(a - b), 4)


def build_report(
    votes: Iterable[ItemVotes],
    *,
    dataset: str | None = None,
    pair_key: Mapping[str, str] | None = None,
    sampled: int | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
    source: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything the paper reports about one study, as a JSON-ready dict (keys in the module docstring)."""
    votes = list(votes)
    cons = consensus(votes)
    rows = system_scores(cons, sampled=sampled)
    sig = {m: significance(cons, metric=m, pair_key=pair_key, n_resamples=n_resamples, seed=seed) for m in ("int", "ais")}
    systems = []
    for r in rows:
        d = r.to_dict()
        d["int_lower"] = sig["int"].significant(r.system)
        d["ais_lower"] = sig["ais"].significant(r.system)
        systems.append(d)
    report: dict[str, Any] = {
        "dataset": dataset,
        "source": source,
        "n_items": len(cons),
        "systems": systems,
        "agreement": {s: agreement(votes, stage=s).to_dict() for s in ("int", "ais")},
        "significance": {m: s.to_dict() for m, s in sig.items()},
        "ties": {"int": sum(c.int_tie for c in cons), "ais": sum(c.ais_tie for c in cons)},
        "settings": {"sampled": sampled, "n_resamples": n_resamples, "seed": seed, "consensus": "majority; ties reported, not broken"},
    }
    if dataset in PAPER_SYSTEMS:
        report["paper"] = _paper_comparison(dataset, systems, report["agreement"])
    if extra:
        report.update(extra)
    return report


def _paper_comparison(dataset: str, systems: Sequence[Mapping[str, Any]], agree: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    ours = {s["system"]: s for s in systems}
    rows = []
    for name, p in PAPER_SYSTEMS[dataset].items():
        o = ours.get(name, {})
        row = {"system": name, "paper_label": p["label"]}
        for k, ok in (("flag", "flag_pct"), ("int", "int_pct"), ("ais", "ais_pct")):
            row[f"paper_{k}"] = p[k]
            row[f"ours_{k}"] = None if o.get(ok) is None else round(o[ok], 1)
            row[f"diff_{k}"] = _diff(p[k], o.get(ok))
        rows.append(row)
    diffs = [r[f"diff_{k}"] for r in rows for k in ("flag", "int", "ais") if r[f"diff_{k}"] is not None]
    table7 = {}
    for stage in ("int", "ais"):
        p = PAPER_AGREEMENT[dataset][stage]
        table7[stage] = {m: {"paper": p[m], "ours": None if agree[stage][m] is None else round(agree[stage][m], 3), "diff": _diff(p[m], agree[stage][m])}
                         for m in ("f1", "pairwise", "alpha")}
    return {"table": PAPER_TABLE[dataset], "systems": rows, "max_diff_points": max(diffs) if diffs else None, "table7": table7}


def format_report(report: Mapping[str, Any]) -> str:
    """A plain-text rendering of :func:`build_report`'s dict (what ``veridic ais report`` prints without --json)."""

    def f(x: float | None, nd: int = 1) -> str:
        return "-" if x is None else f"{x:.{nd}f}"

    lines = [f"AIS report: {report.get('source') or report.get('dataset') or ''} ({report['n_items']} items)", ""]
    lines.append(f"{'system':28s} {'n':>5s} {'Flag':>6s} {'Int':>7s} {'AIS':>7s}")
    for s in report["systems"]:
        lines.append(
            f"{s['system']:28s} {s['n']:5d} {f(s['flag_pct']):>6s} {f(s['int_pct']) + ('*' if s['int_lower'] else ' '):>7s} "
            f"{f(s['ais_pct']) + ('*' if s['ais_lower'] else ' '):>7s}"
        )
    lvl = report["significance"]["int"]["alpha_level"]
    lines.append(f"* significantly lower than the best system (permutation test, p < {lvl})")
    lines.append("")
    lines.append(f"{'stage':6s} {'F1':>6s} {'PA':>6s} {'alpha':>6s} {'kappa':>6s} {'items':>6s}")
    for st, a in report["agreement"].items():
        lines.append(f"{st:6s} {f(a['f1'], 3):>6s} {f(a['pairwise'], 3):>6s} {f(a['alpha'], 3):>6s} {f(a['kappa'], 3):>6s} {a['n_items']:6d}")
    if "paper" in report:
        p = report["paper"]
        lines += ["", f"vs paper 003 {p['table']} (largest difference {f(p['max_diff_points'])} points):"]
        for r in p["systems"]:
            lines.append(f"  {r['paper_label']:30s} Int {f(r['paper_int'])} / ours {f(r['ours_int'])}   AIS {f(r['paper_ais'])} / ours {f(r['ours_ais'])}")
        for st, m in p["table7"].items():
            lines.append(f"  Table 7 {st}: alpha {f(m['alpha']['paper'], 2)} / ours {f(m['alpha']['ours'], 3)}")
    return "\n".join(lines)
