"""Fit the hybrid scorer's weights on labelled benchmark rows, validated leave-one-dataset-out.

Usage:
    python benchmarks/fit_hybrid.py --model DIR --data dev --out runs/hybrid [--weights-out DIR/hybrid.json]

1. One sentence-level e−c NLI pass over every row (features cached in OUT/features.jsonl).
2. For each dataset D: fit on all other datasets, report ROC AUC on D (honest: D never
   informs its own weights), next to each single feature's AUC.
3. Fit on all rows and write the weights (with the LODO figures in their ``meta``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from veridic.bench.datasets import load_datasets
from veridic.nli import CachedBackend, NLIScorer, load_backend
from veridic.nli.hybrid import ALL_FEATURES, features_from_verdict, fit_hybrid


def compute_features(*, model: str | None, specs: list[str], out: Path, batch: int = 64) -> list[dict]:
    path = out / "features.jsonl"
    if path.exists():
        return [json.loads(line) for line in path.open()]
    from veridic.bench.cache import default_cache_dir, nli_cache_path

    # The same on-disk prediction cache as `veridic bench`, so the bench run that follows reuses this pass.
    backend = CachedBackend(load_backend(model), path=nli_cache_path(score_dir=default_cache_dir()))
    # Pooling does not matter here: the features read the per-sentence verdicts.
    scorer = NLIScorer(backend=backend, method="e-c", granularity="sentence", claim_aggregation="min")
    rows = []
    for ds in load_datasets(specs=specs):
        t = time.perf_counter()
        ex = list(ds.examples)
        for i in range(0, len(ex), batch):
            chunk = ex[i : i + batch]
            vs = scorer.score(sources=[e.pair.source for e in chunk], claims=[e.pair.claim for e in chunk], contexts=[e.pair.context for e in chunk])
            for e, v in zip(chunk, vs):
                rows.append({"id": e.id, "dataset": ds.name, "label": e.label, **features_from_verdict(v, source=e.pair.source, claim=e.pair.claim)})
        print(f"{ds.name}: {len(ex)} rows in {time.perf_counter() - t:.0f}s", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--data", nargs="+", default=["dev"])
    ap.add_argument("--out", required=True, type=Path)
    # The shipped choice (docs/benchmarks.md compares it with richer sets, which overfit the dataset mix).
    ap.add_argument("--features", default="ec_mean,overlap_bigram", help=f"comma-separated, from {','.join(ALL_FEATURES)}")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--weights-out", type=Path, default=None)
    args = ap.parse_args()
    names = args.features.split(",")
    rows = compute_features(model=args.model, specs=args.data, out=args.out)
    datasets = sorted({r["dataset"] for r in rows})
    x = np.array([[r[n] for n in names] for r in rows])
    y = np.array([r["label"] for r in rows])
    g = np.array([r["dataset"] for r in rows])
    table = {}
    lodo_scores = np.zeros(len(y))
    for d in datasets:
        tr, te = g != d, g == d
        w = fit_hybrid(features=x[tr], labels=y[tr], names=names, C=args.C)
        lodo_scores[te] = w.logit(x[te])
        table[d] = {"n": int(te.sum()), "hybrid_lodo": roc_auc_score(y[te], w.logit(x[te]))}
        for j, n in enumerate(names):
            table[d][n] = roc_auc_score(y[te], x[te, j] if not n.startswith(("novel", "c_max")) else -x[te, j])
    cols = ["hybrid_lodo"] + names
    mean = {c: float(np.mean([table[d][c] for d in datasets])) for c in cols}
    print("| dataset | n | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for d in datasets:
        print(f"| {d} | {table[d]['n']} | " + " | ".join(f"{100 * table[d][c]:.1f}" for c in cols) + " |")
    print("| **mean** | | " + " | ".join(f"**{100 * mean[c]:.1f}**" for c in cols) + " |")
    final = fit_hybrid(
        features=x, labels=y, names=names, C=args.C,
        meta={"fitted_on": datasets, "n": len(y), "C": args.C, "lodo_auc": {d: table[d]["hybrid_lodo"] for d in datasets},
              "lodo_auc_mean": mean["hybrid_lodo"], "model": args.model, "command": "python benchmarks/fit_hybrid.py " + " ".join(f"--data {d}" for d in args.data)},
    )
    # Per-example out-of-dataset scores, for `veridic bench --scores` (honest CIs and tests).
    with (args.out / "hybrid_lodo.csv").open("w") as fh:
        fh.write("id,hybrid_lodo\n")
        for r, v in zip(rows, lodo_scores):
            fh.write(f"{r['id']},{v:.6f}\n")
    (args.out / "lodo.json").write_text(json.dumps({"table": table, "mean": mean}, indent=2))
    print("weights:", json.dumps(dict(zip(names, [round(c, 3) for c in final.coef]))))
    if args.weights_out:
        final.save(args.weights_out)
        print("wrote", args.weights_out)


if __name__ == "__main__":
    main()
