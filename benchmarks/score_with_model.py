"""Per-example scores of another NLI model on benchmark sets, as a `veridic bench --scores` file.

Used for model ablations (paper 004's Table 2: a model trained without the
dialogue augmentation against the shipped one): the file's columns enter
`veridic bench` next to the shipped model's scorers, so both are tested on
the same rows with the same paired statistics.

    python benchmarks/score_with_model.py --model runs/nli-noaug/final --suffix noaug \
        --scorer e --scorer e-c --data dev --out runs/eval/noaug_scores.csv
    veridic bench --data dev --scorer e --scorer e-c --scores runs/eval/noaug_scores.csv \
        --compare e-c e-c@noaug --out runs/eval/bench-aug-ablation

Scores go through the benchmark score cache, so re-running is cheap.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from veridic.bench._cache import ScoreCache, default_cache_dir, nli_cache_path
from veridic.bench._datasets import load_datasets
from veridic.bench._runner import score_dataset
from veridic.factory import build_scorer
from veridic.nli import CachedBackend, load_backend


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="NLI model directory (or package / hub id).")
    ap.add_argument("--suffix", required=True, help="Column names become SCORER@SUFFIX.")
    ap.add_argument("--scorer", action="append", default=None, help="Registered scorer name (repeat); default e, e-c.")
    ap.add_argument("--data", action="append", default=None, help="Dataset file, folder or group (repeat); default dev.")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--backend", default="torch")
    args = ap.parse_args()
    scorer_names = args.scorer or ["e", "e-c"]
    cache = ScoreCache(directory=default_cache_dir())
    # e and e-c share every NLI call; the on-disk prediction cache (the one `veridic bench` uses) keeps them across runs.
    backend = CachedBackend(load_backend(args.model, kind=args.backend), path=nli_cache_path(score_dir=cache.directory))
    scorers = [build_scorer(n, backend=backend) for n in scorer_names]
    rows: dict[str, dict[str, float]] = {}
    for ds in load_datasets(specs=args.data or ["dev"]):
        for name, sc in zip(scorer_names, scorers):
            run = score_dataset(scorer=sc, dataset=ds, cache=cache, progress=True)
            for i, s in zip(run.ids, run.scores):
                rows.setdefault(i, {})[f"{name}@{args.suffix}"] = float(s)
            print(f"{ds.name}: {name} done ({run.timing})", flush=True)
    cols = [f"{n}@{args.suffix}" for n in scorer_names]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", *cols])
        for i, r in rows.items():
            w.writerow([i, *(f"{r[c]:.6f}" for c in cols)])
    print(f"wrote {len(rows)} rows x {len(cols)} scores to {args.out}")


if __name__ == "__main__":
    main()
