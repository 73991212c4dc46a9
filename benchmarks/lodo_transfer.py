"""Leave-one-dataset-out AUC of hybrid weights fitted on one feature run and applied to another.

When the scorer's features change (a new rule, not a new model) the question is whether the shipped
weights still serve, without refitting them. For each dataset D this fits the weights on the *other*
datasets of ``--fit`` (the features the weights were made from) and scores D's rows from ``--apply``
(the new features), so D never informs the weights that judge it. Rows are matched by (dataset, id).

    python benchmarks/lodo_transfer.py --fit runs/eval/hybrid-soupv4v5-s400 --apply runs/s12/hybrid-sv-s400 \
        [--features ec_mean,overlap_bigram]

Each folder holds a ``features.jsonl`` from benchmarks/fit_hybrid.py. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from veridic.nli._hybrid import fit_hybrid


def _rows(folder: Path) -> list[dict]:
    with (folder / "features.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", type=Path, required=True, help="features the weights are fitted on")
    ap.add_argument("--apply", type=Path, required=True, help="features the held-out dataset is scored with")
    ap.add_argument("--features", default="ec_mean,overlap_bigram")
    ap.add_argument("--C", type=float, default=1.0)
    args = ap.parse_args()
    names = args.features.split(",")
    fit_rows, new = _rows(args.fit), {(r["dataset"], r["id"]): r for r in _rows(args.apply)}
    missing = [k for k in ((r["dataset"], r["id"]) for r in fit_rows) if k not in new]
    if missing:
        raise SystemExit(f"{len(missing)} rows of --fit are not in --apply (first: {missing[0]}); score the same rows in both")
    print("| dataset | n | LODO, fitted features | LODO, applied features |")
    print("|---|---:|---:|---:|")
    out = []
    for d in sorted({r["dataset"] for r in fit_rows}):
        train = [r for r in fit_rows if r["dataset"] != d]
        w = fit_hybrid(features=np.array([[r[n] for n in names] for r in train]), labels=np.array([r["label"] for r in train]),
                       names=names, C=args.C)
        test_old = [r for r in fit_rows if r["dataset"] == d]
        test_new = [new[(d, r["id"])] for r in test_old]
        y = [r["label"] for r in test_old]
        a = roc_auc_score(y, w.logit(np.array([[r[n] for n in names] for r in test_old])))
        b = roc_auc_score(y, w.logit(np.array([[r[n] for n in names] for r in test_new])))
        out.append((a, b))
        print(f"| {d} | {len(y)} | {100 * a:.1f} | {100 * b:.1f} |")
    print(f"| **mean** | | **{100 * np.mean([a for a, _ in out]):.2f}** | **{100 * np.mean([b for _, b in out]):.2f}** |")


if __name__ == "__main__":
    main()
