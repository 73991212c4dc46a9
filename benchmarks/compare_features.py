"""Paired comparison of two models' dev features (from benchmarks/fit_hybrid.py) on the rows both scored.

    python benchmarks/compare_features.py --a runs/eval/hybrid-v1-s400 --b runs/eval/hybrid-v2 \
        --feature ec_mean --feature overlap_bigram --out runs/eval/compare-v1-v2.json

Per dataset: ROC AUC of each feature for A and B with a 95 % paired bootstrap interval of B − A, and the
mean over datasets with its interval (rows resampled within each dataset, the same resample for A and B).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score


def _load(folder: Path) -> dict[str, dict]:
    return {r["id"] + "\x1f" + r["dataset"]: r for r in map(json.loads, (folder / "features.jsonl").open())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, type=Path)
    ap.add_argument("--b", required=True, type=Path)
    ap.add_argument("--feature", action="append", required=True)
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    a, b = _load(args.a), _load(args.b)
    keys = sorted(set(a) & set(b))
    datasets = sorted({a[k]["dataset"] for k in keys})
    rng = np.random.default_rng(args.seed)
    out: dict = {"n": len(keys), "datasets": {}, "mean": {}}
    for feat in args.feature:
        sign = -1.0 if feat.startswith(("novel", "c_max")) else 1.0
        per_a, per_b, boots = [], [], []
        for d in datasets:
            ks = [k for k in keys if a[k]["dataset"] == d]
            y = np.array([a[k]["label"] for k in ks])
            xa = sign * np.array([a[k][feat] for k in ks])
            xb = sign * np.array([b[k][feat] for k in ks])
            per_a.append(roc_auc_score(y, xa))
            per_b.append(roc_auc_score(y, xb))
            diffs = []
            for _ in range(args.n_resamples):
                i = rng.integers(0, len(ks), len(ks))
                if y[i].min() == y[i].max():
                    continue
                diffs.append(roc_auc_score(y[i], xb[i]) - roc_auc_score(y[i], xa[i]))
            boots.append(np.array(diffs))
            # per-dataset interval too: "no significant loss on the dialogue sets" is a per-set claim
            dlo, dhi = np.percentile(boots[-1], [2.5, 97.5])
            out["datasets"].setdefault(d, {"n": len(ks)})[feat] = {"a": per_a[-1], "b": per_b[-1], "b_minus_a": per_b[-1] - per_a[-1],
                                                                    "ci95": [float(dlo), float(dhi)]}
        m = min(len(x) for x in boots)
        mean_diff = np.mean([x[:m] for x in boots], axis=0)
        lo, hi = np.percentile(mean_diff, [2.5, 97.5])
        out["mean"][feat] = {"a": float(np.mean(per_a)), "b": float(np.mean(per_b)), "b_minus_a": float(np.mean(per_b) - np.mean(per_a)),
                             "ci95": [float(lo), float(hi)]}
        print(f"{feat}: A {100 * np.mean(per_a):.1f}  B {100 * np.mean(per_b):.1f}  B-A {100 * (np.mean(per_b) - np.mean(per_a)):+.1f} "
              f"[{100 * lo:+.1f}, {100 * hi:+.1f}] over {len(datasets)} datasets, {len(keys)} rows")
        for d, pa, pb in zip(datasets, per_a, per_b):
            lo_d, hi_d = out["datasets"][d][feat]["ci95"]
            print(f"   {d:18s} A {100 * pa:.1f}  B {100 * pb:.1f}  B-A {100 * (pb - pa):+.1f} [{100 * lo_d:+.1f}, {100 * hi_d:+.1f}]")
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
