"""Write a seeded sample of each benchmark file (same rows as ``probes/whole_source_ablation.py --n N --seed S``).

    python benchmarks/sample_rows.py --n 100 --seed 0 --out /tmp/dev100 ../shared/data/bench/*.jsonl
    veridic bench --data /tmp/dev100 --scorer hybrid --dtype int8 --no-cache -o /tmp/report-int8

Paired comparisons of settings (dtype, backend, windows) then score identical rows.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--n", type=int, default=100, help="rows per file (all when the file has fewer)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="folder for the sampled files (same names)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for f in args.files:
        rows = [line for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
        random.Random(args.seed).shuffle(rows)
        (args.out / f.name).write_text("\n".join(rows[: args.n]) + "\n", encoding="utf-8")
        print(f"{f.name}: {min(args.n, len(rows))} of {len(rows)} rows")


if __name__ == "__main__":
    main()
