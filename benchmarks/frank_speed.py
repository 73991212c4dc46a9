"""Whole-process throughput of the default method on FRANK rows, and a naive transformers pipeline loop beside it.

    python benchmarks/frank_speed.py --n 100                 # veridic.score, default method and options
    python benchmarks/frank_speed.py --n 100 --naive         # transformers.pipeline, one truncated pair per row

Run each as a whole process (imports and model load included) under a
timer; prints examples/s of the scoring call alone too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "bench" / "frank_test.jsonl"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--naive", action="store_true")
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")][: args.n]
    srcs, clms = [r["source"] for r in rows], [r["claim"] for r in rows]
    t = time.perf_counter()
    if args.naive:
        from transformers import pipeline

        from veridic.nli.backend import embedded_model_path

        clf = pipeline("text-classification", model=str(embedded_model_path()), top_k=None, truncation=True)
        out = [clf({"text": s, "text_pair": c}) for s, c in zip(srcs, clms)]
    else:
        import veridic

        out = veridic.score(sources=srcs, claims=clms)
    dt = time.perf_counter() - t
    print(json.dumps({"n": len(out), "scoring_s": round(dt, 2), "examples_per_s": round(len(out) / dt, 3)}))


if __name__ == "__main__":
    main()
