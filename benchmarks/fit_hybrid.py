"""Fit the hybrid scorer's weights on labelled benchmark rows, validated leave-one-dataset-out and leave-one-task-out.

Usage:
    python benchmarks/fit_hybrid.py --model DIR --data dev --out runs/hybrid [--weights-out DIR/hybrid.json]
        [--max-rows-per-dataset 500] [--select]

1. One sentence-level e−c NLI pass over every row (features cached in OUT/features.jsonl).
   ``--max-rows-per-dataset`` scores a seeded random sample of each dataset (CPU budget).
2. For each dataset D: fit on all other datasets, report ROC AUC on D (honest: D never
   informs its own weights), next to each single feature's AUC. Then the same with whole
   tasks held out (summarization / dialogue / claim): weights that never saw the task.
3. ``--select`` tries a few feature sets and keeps the one with the best LODO mean, but
   never one whose LODO mean is below its own best single feature's mean AUC (then that
   single feature is shipped alone; ``--no-single-fallback`` keeps the named combination, for a
   registered comparison that reads the candidate it names).
4. Fit on all rows and write the weights (with the LODO / LOTO figures in their ``meta``).

``--companion MODEL`` runs the same pass with a second model (cached in OUT/companion/) and joins its NLI
features to each row under the suffix ``@companion`` (``ec_mean@companion``), so a combination reading both
models can be validated the same way (pair P1 in docs/preregistration/nli-base.md).

``--objective ranking`` (ablation, not shipped) fits the same linear form to within-dataset
positive−negative differences, i.e. it maximises each dataset's AUC rather than pooled
likelihood. Measured on the dev pool (development log, "A ranking objective for the combiner"): +0.9 LODO on the dev pool, bought by leaning harder on
bigram overlap (−2.7 AUC on the held-back NLI pairs, ``--probe-task pairs``), so the pooled fit stays.
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from veridic import build_scorer
from veridic.bench._datasets import load_datasets
from veridic.config import ScorerConfig
from veridic.nli import CachedBackend, load_backend
from veridic.nli._hybrid import ALL_FEATURES, COMPANION, NLI_FEATURES, HybridWeights, features_from_verdict, fit_hybrid

CANDIDATE_SETS = (
    ("ec_mean",),
    ("ec_mean", "overlap_bigram"),
    ("ec_mean", "e_min", "overlap_bigram"),
    ("ec_mean", "ec_min", "c_max", "overlap_bigram"),
    ("ec_mean", "e_min", "overlap_bigram", "novel_numbers", "novel_names"),
)


def _sample(examples: list, *, name: str, k: int | None, seed: int) -> list:
    if k is None or len(examples) <= k:
        return examples
    import random

    # A seeded shuffle cut at k: a smaller sample is a subset of a larger one (paired comparisons).
    order = list(range(len(examples)))
    random.Random(f"{seed}:{name}").shuffle(order)
    return [examples[i] for i in sorted(order[:k])]


def _tasks(specs: list[str]) -> dict[str, str]:
    """dataset name -> task (summarization / dialogue / claim), read from the files' ``task`` column."""
    from veridic.bench._datasets import resolve_data_spec

    out: dict[str, str] = {}
    for spec in specs:
        for path in resolve_data_spec(spec):
            if path.suffix == ".jsonl":
                with path.open(encoding="utf-8") as fh:
                    for line in fh:
                        r = json.loads(line)
                        out.setdefault(r.get("dataset") or path.stem, r.get("task") or "unknown")
    return out


def compute_features(*, model: str | None, specs: list[str], out: Path, batch: int = 64,
                     max_rows: int | None = None, seed: int = 0, window_sentences: int | None = None,
                     max_windows: int | None = None, structure_check: bool = True, verbatim_support: bool = True,
                     source_aggregation: str = "max") -> list[dict]:
    path = out / "features.jsonl"
    if path.exists():
        rows = [json.loads(line) for line in path.open()]
        missing = sorted(set(ALL_FEATURES) - set(rows[0])) if rows else []
        if missing:
            raise SystemExit(f"{path} was written before the features {missing} existed; delete it (or pick a new --out) "
                             "and run again: the model answers come back from the prediction cache.")
        return rows
    from veridic.bench._cache import default_cache_dir, nli_cache_path

    # The same on-disk prediction cache as `veridic bench`, so the bench run that follows reuses this pass.
    backend = CachedBackend(load_backend(model), path=nli_cache_path(score_dir=default_cache_dir()))
    # Pooling does not matter here: the features read the per-sentence verdicts.
    # The window settings default to ScorerConfig's (what the shipped scorer runs); others are for ablations.
    cfg = ScorerConfig(method="e-c", granularity="sentence", claim_aggregation="min",
                       **({"window_sentences": window_sentences} if window_sentences else {}),
                       **({"max_windows": max_windows} if max_windows else {}),
                       structure_check=structure_check, verbatim_support=verbatim_support, source_aggregation=source_aggregation)
    scorer = build_scorer(cfg, backend=backend)  # the one path from a config to a scorer (and its structure check)
    tasks = _tasks(specs)
    rows = []
    for ds in load_datasets(specs=specs):
        t = time.perf_counter()
        ex = _sample(list(ds.examples), name=ds.name, k=max_rows, seed=seed)
        for i in range(0, len(ex), batch):
            chunk = ex[i : i + batch]
            vs = scorer.score(sources=[e.pair.source for e in chunk], claims=[e.pair.claim for e in chunk], contexts=[e.pair.context for e in chunk])
            for e, v in zip(chunk, vs):
                rows.append({"id": e.id, "dataset": ds.name, "task": tasks.get(ds.name, "unknown"), "label": e.label,
                             **features_from_verdict(v, source=e.pair.source, claim=e.pair.claim)})
        print(f"{ds.name}: {len(ex)} rows in {time.perf_counter() - t:.0f}s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return rows


def join_companion(rows: list[dict], companion: list[dict]) -> list[dict]:
    """``rows`` with the companion model's NLI features added under ``<name>@companion``, matched by (dataset, id).

    Both passes must have read the same rows: a row missing from either side is an error, not a silent drop,
    because the comparison with each model's own combination is only fair on identical rows.
    """
    by_key = {(r["dataset"], r["id"]): r for r in companion}
    if len(by_key) != len(companion):
        raise ValueError("companion features hold duplicate (dataset, id) keys")
    keys = {(r["dataset"], r["id"]) for r in rows}
    if keys != set(by_key):
        raise ValueError(f"the two models' feature passes read different rows: {len(keys - set(by_key))} only in the "
                         f"first, {len(set(by_key) - keys)} only in the companion; delete OUT/ and run again")
    out = []
    for r in rows:
        c = by_key[(r["dataset"], r["id"])]
        if c["label"] != r["label"]:
            raise ValueError(f"row {r['dataset']}/{r['id']}: label {r['label']} against the companion's {c['label']}")
        out.append({**r, **{n + COMPANION: c[n] for n in NLI_FEATURES}})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--companion", default=None,
                    help="a second model whose NLI features join each row as <feature>@companion (see module doc)")
    ap.add_argument("--data", nargs="+", default=["dev"])
    ap.add_argument("--out", required=True, type=Path)
    # The shipped choice (docs/benchmarks.md compares it with richer sets, which overfit the dataset mix).
    ap.add_argument("--features", default="ec_mean,overlap_bigram", help=f"comma-separated, from {','.join(ALL_FEATURES)}")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--weights-out", type=Path, default=None)
    ap.add_argument("--max-rows-per-dataset", type=int, default=None)
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--select", action="store_true", help="choose among CANDIDATE_SETS by LODO mean (see module doc)")
    ap.add_argument("--objective", choices=("pooled", "ranking"), default="pooled",
                    help="pooled: the shipped logistic fit; ranking: within-dataset pairwise fit (ablation, see module doc)")
    ap.add_argument("--probe-task", default=None,
                    help="rows of this task are not fitted on, only scored by the final fit (e.g. 'pairs')")
    ap.add_argument("--window-sentences", type=int, default=None, help="scorer windows (default: ScorerConfig's)")
    ap.add_argument("--max-windows", type=int, default=None, help="windows kept per claim sentence (default: ScorerConfig's)")
    ap.add_argument("--no-structure-check", action="store_true", help="features without the parse-based structure check (ablation)")
    ap.add_argument("--no-verbatim-support", action="store_true", help="features without the verbatim-copy rule (ablation)")
    ap.add_argument("--source-aggregation", default="max", help="how a claim sentence's windows give its verdict (max, uncontradicted)")
    ap.add_argument("--companion-source-aggregation", default=None,
                    help="read the companion pass with this aggregation; without --companion the companion is the same model")
    ap.add_argument("--no-single-fallback", action="store_true",
                    help="keep the named features' combination even when one feature alone beats it held out "
                         "(a registered comparison reads the candidate it names)")
    args = ap.parse_args()
    # One reading of the rows for every model (the companion's pass reads them the same way).
    features = functools.partial(compute_features, specs=args.data, max_rows=args.max_rows_per_dataset, seed=args.sample_seed,
                                 window_sentences=args.window_sentences, max_windows=args.max_windows,
                                 structure_check=not args.no_structure_check, verbatim_support=not args.no_verbatim_support,
                                 source_aggregation=args.source_aggregation)
    rows = features(model=args.model, out=args.out)
    if args.companion or args.companion_source_aggregation:
        # The same model read another way is a companion too: its features join under the same suffix.
        rows = join_companion(rows, features(model=args.companion or args.model, out=args.out / "companion",
                                             source_aggregation=args.companion_source_aggregation or args.source_aggregation))
    candidates = CANDIDATE_SETS if args.select else (tuple(args.features.split(",")),)
    if args.objective == "ranking" and args.weights_out:
        ap.error("--objective ranking is an ablation; it does not write shippable weights (drop --weights-out)")
    probe = [r for r in rows if args.probe_task and r.get("task") == args.probe_task]
    rows = [r for r in rows if not (args.probe_task and r.get("task") == args.probe_task)]
    results = [evaluate(rows, list(c), C=args.C, objective=args.objective, probe=probe) for c in candidates]
    if args.companion:
        # Each model's own combination on the same rows: the baselines a pair must beat.
        for names in (["ec_mean", "overlap_bigram"], ["ec_mean" + COMPANION, "overlap_bigram"]):
            b = evaluate(rows, names, C=args.C, objective=args.objective)
            print(f"baseline {','.join(names)}: LODO mean {100 * b['mean']['hybrid_lodo']:.1f}, LOTO mean "
                  f"{100 * b['loto_mean']:.1f}; per set LODO " + ", ".join(
                      f"{d} {100 * b['table'][d]['hybrid_lodo']:.1f}" for d in sorted(b["table"])))
    for r in results:
        print(f"features {','.join(r['names'])}: LODO mean {100 * r['mean']['hybrid_lodo']:.1f}, "
              f"LOTO mean {100 * r['loto_mean']:.1f}, best single feature {r['best_single']} {100 * r['mean'][r['best_single']]:.1f}"
              + (f", held-back NLI pairs {100 * r['pairs_auc']:.1f}" if r["pairs_auc"] is not None else ""))
    best = max(results, key=lambda r: r["mean"]["hybrid_lodo"])
    if best["mean"]["hybrid_lodo"] < best["mean"][best["best_single"]] and not args.no_single_fallback:
        print(f"LODO mean below the best single feature: shipping {best['best_single']} alone")
        best = evaluate(rows, [best["best_single"]], C=args.C, objective=args.objective, probe=probe)
    names, table, mean = best["names"], best["table"], best["mean"]
    datasets = sorted(table)
    cols = ["hybrid_lodo", "hybrid_loto"] + names
    print("| dataset | task | n | " + " | ".join(cols) + " |")
    print("|---|---|---:|" + "---:|" * len(cols))
    for d in datasets:
        print(f"| {d} | {table[d]['task']} | {table[d]['n']} | " + " | ".join(f"{100 * table[d][c]:.1f}" for c in cols) + " |")
    print("| **mean** | | | " + " | ".join(f"**{100 * mean[c]:.1f}**" for c in cols) + " |")
    x = np.array([[r[n] for n in names] for r in rows])
    y = np.array([r["label"] for r in rows])
    final = fit_hybrid(
        features=x, labels=y, names=names, C=args.C,
        meta={"fitted_on": datasets, "n": len(y), "C": args.C, "lodo_auc": {d: table[d]["hybrid_lodo"] for d in datasets},
              "lodo_auc_mean": mean["hybrid_lodo"], "loto_auc": {d: table[d]["hybrid_loto"] for d in datasets},
              "loto_auc_mean": mean["hybrid_loto"], "max_rows_per_dataset": args.max_rows_per_dataset,
              "candidates": {",".join(r["names"]): r["mean"]["hybrid_lodo"] for r in results},
              "model": args.model, "companion": args.companion,
              "source_aggregation": args.source_aggregation, "command": "python benchmarks/fit_hybrid.py " + " ".join(f"--data {d}" for d in args.data)
              + (f" --companion {args.companion}" if args.companion else "")
              + (f" --companion-source-aggregation {args.companion_source_aggregation}" if args.companion_source_aggregation else "")
              + (f" --max-rows-per-dataset {args.max_rows_per_dataset}" if args.max_rows_per_dataset else "")
              + (f" --source-aggregation {args.source_aggregation}" if args.source_aggregation != "max" else "")
              + (" --select" if args.select else f" --features {args.features}")},
    )
    # Per-example out-of-dataset scores, for `veridic bench --scores` (honest CIs and tests).
    with (args.out / "hybrid_lodo.csv").open("w") as fh:
        fh.write("id,hybrid_lodo,hybrid_loto\n")
        for r, v, w in zip(rows, best["lodo_scores"], best["loto_scores"]):
            fh.write(f"{r['id']},{v:.6f},{w:.6f}\n")
    (args.out / "lodo.json").write_text(json.dumps({"table": table, "mean": mean, "names": names,
                                                    "candidates": [{k: v for k, v in r.items() if not k.endswith("_scores")}
                                                                   for r in results]}, indent=2))
    print("weights:", json.dumps(dict(zip(names, [round(c, 3) for c in final.coef]))))
    if args.weights_out:
        final.save(args.weights_out)
        print("wrote", args.weights_out)


def _auc(y, s, name):
    return roc_auc_score(y, -s if name.startswith(("novel", "c_max")) else s)


def _fit_ranking(x: np.ndarray, y: np.ndarray, g: np.ndarray, names: list[str], *, C: float, pairs_per_group: int = 4000,
                 seed: int = 0) -> HybridWeights:
    """Linear weights from within-group positive−negative feature differences (a RankSVM-style logistic fit).

    Each group contributes the same number of sampled pairs, so no dataset dominates; the intercept is 0
    because only the order within a dataset is fitted.
    """
    from sklearn.linear_model import LogisticRegression

    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    rng = np.random.default_rng(seed)
    diffs = []
    for grp in sorted(set(g)):
        pos, neg = np.flatnonzero((g == grp) & (y == 1)), np.flatnonzero((g == grp) & (y == 0))
        if len(pos) and len(neg):
            diffs.append(z[rng.choice(pos, pairs_per_group)] - z[rng.choice(neg, pairs_per_group)])
    d = np.vstack(diffs)
    lr = LogisticRegression(C=C, fit_intercept=False, max_iter=2000).fit(np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))])
    return HybridWeights(tuple(names), tuple(map(float, mean)), tuple(map(float, scale)), tuple(map(float, lr.coef_[0])), 0.0, {})


def evaluate(rows: list[dict], names: list[str], *, C: float, objective: str = "pooled", probe: list[dict] = ()) -> dict:
    """LODO and LOTO AUCs of a logistic combination of ``names`` (and of each feature alone).

    ``probe`` rows (``--probe-task``, e.g. the held-back NLI pairs of ``make_pair_dev.py``) are never fitted on;
    they only get the all-rows fit's AUC (``pairs_auc``): the check that overlap-blind data does not collapse.
    """
    x = np.array([[r[n] for n in names] for r in rows])
    y = np.array([r["label"] for r in rows])
    g = np.array([r["dataset"] for r in rows])
    task = np.array([r.get("task", "unknown") for r in rows])
    datasets = sorted(set(g))
    table: dict = {}
    lodo, loto = np.zeros(len(y)), np.zeros(len(y))
    def fit(tr):
        if objective == "ranking":
            return _fit_ranking(x[tr], y[tr], g[tr], names, C=C)
        return fit_hybrid(features=x[tr], labels=y[tr], names=names, C=C)

    for d in datasets:
        tr, te = g != d, g == d
        lodo[te] = fit(tr).logit(x[te])
    for t in sorted(set(task)):
        tr, te = task != t, task == t
        loto[te] = fit(tr).logit(x[te])
    for d in datasets:
        te = g == d
        table[d] = {"n": int(te.sum()), "task": str(task[te][0]), "hybrid_lodo": roc_auc_score(y[te], lodo[te]),
                    "hybrid_loto": roc_auc_score(y[te], loto[te])}
        for j, n in enumerate(names):
            table[d][n] = _auc(y[te], x[te, j], n)
        for n in ALL_FEATURES:
            table[d].setdefault("single:" + n, _auc(y[te], np.array([r[n] for r, m in zip(rows, te) if m]), n))
    cols = ["hybrid_lodo", "hybrid_loto"] + names
    mean = {c: float(np.mean([table[d][c] for d in datasets])) for c in cols}
    best_single = max(names, key=lambda n: mean[n])
    pairs_auc = None
    if probe:
        xp = np.array([[r[n] for n in names] for r in probe])
        pairs_auc = float(roc_auc_score([r["label"] for r in probe], fit(np.ones(len(y), bool)).logit(xp)))
    return {"names": names, "table": table, "mean": mean, "loto_mean": mean["hybrid_loto"], "best_single": best_single,
            "pairs_auc": pairs_auc, "lodo_scores": lodo, "loto_scores": loto}


if __name__ == "__main__":
    main()
