"""Whole-process throughput of the default method on FRANK rows, and a naive transformers pipeline loop beside it.

    python benchmarks/frank_speed.py --n 100                 # veridic.score, default method and options
    python benchmarks/frank_speed.py --n 100 --naive         # transformers.pipeline, one truncated pair per row
    python benchmarks/frank_speed.py --n 100 --dtype int8    # a backend option (--backend, --dtype) passed to veridic.score

Run each as a whole process (imports and model load included) under a
timer (``/usr/bin/time -f "%e %U %S"``); prints examples/s of the scoring call
alone, the process's CPU seconds so far and a digest of the scores (equal
digests: identical scores).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "bench" / "frank_test.jsonl"))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--naive", action="store_true")
    ap.add_argument("--backend", default=None, help="veridic.score(backend=...); left out: the default")
    ap.add_argument("--dtype", default=None, help="veridic.score(dtype=...); left out: the default")
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.data, encoding="utf-8")][: args.n]
    srcs, clms = [r["source"] for r in rows], [r["claim"] for r in rows]
    t = time.perf_counter()
    if args.naive:
        from transformers import pipeline

        from veridic.nli._backend import embedded_model_path

        clf = pipeline("text-classification", model=str(embedded_model_path()), top_k=None, truncation=True)
        out = [clf({"text": s, "text_pair": c}) for s, c in zip(srcs, clms)]
    else:
        import veridic

        opts = {k: v for k, v in (("backend", args.backend), ("dtype", args.dtype)) if v is not None}
        out = veridic.score(sources=srcs, claims=clms, **opts)
    dt = time.perf_counter() - t
    ru = resource.getrusage(resource.RUSAGE_SELF)
    scores = [round(float(v.score), 6) for v in out] if not args.naive else [round(float(o[0]["score"]), 6) for o in out]
    digest = hashlib.sha256(json.dumps(scores).encode()).hexdigest()[:12]
    print(json.dumps({"n": len(out), "scoring_s": round(dt, 2), "examples_per_s": round(len(out) / dt, 3),
                      "process_cpu_s": round(ru.ru_utime + ru.ru_stime, 2), "scores_sha256": digest}))


if __name__ == "__main__":
    main()
