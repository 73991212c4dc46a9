"""Scoring throughput on 2 CPU cores: veridic's torch and ONNX int8 backends
against a naive per-pair transformers ``pipeline`` loop on the same weights.

Usage:
    python benchmarks/probes/throughput.py --model DIR --data ../shared/data/bench/frank_test.jsonl --n 300 [--onnx DIR]

Prints a JSON line per configuration: pairs/s for raw NLI pairs (source
truncated to the model's length, one call per example, as a naive user would)
and examples/s for the end-to-end sentence-level scorer.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from veridic import ScorerConfig, build_scorer
from veridic.io import read_records, record_to_pair
from veridic.nli import load_backend


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--onnx", default=None, help="folder with model.int8.onnx (default: skip)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--skip-naive", action="store_true")
    ap.add_argument("--dtypes", default="auto", help="comma-separated torch dtypes to time (auto, float32, bfloat16)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pairs = [record_to_pair(r) for r in read_records(args.data)][: args.n]
    srcs, clms = [p.source for p in pairs], [p.claim for p in pairs]
    results = []

    for dtype in args.dtypes.split(","):
        b = load_backend(args.model, kind="torch", dtype=dtype, batch_size=16)
        b.predict(srcs[:8], clms[:8])  # warm-up
        _, dt = _timed(lambda b=b: b.predict(srcs, clms))
        dtype = b.dtype  # what "auto" resolved to on this CPU
        results.append({"config": f"veridic torch {dtype}, raw pairs (truncated to {b.max_length})", "n": len(srcs), "seconds": round(dt, 2), "pairs_per_s": round(len(srcs) / dt, 2)})
        print(json.dumps(results[-1]), flush=True)
        sc = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b)
        _, dt = _timed(lambda sc=sc: sc.score(sources=srcs, claims=clms))
        results.append({"config": f"veridic torch {dtype}, sentence-level e-c scorer", "n": len(srcs), "seconds": round(dt, 2), "examples_per_s": round(len(srcs) / dt, 2)})
        print(json.dumps(results[-1]), flush=True)

    if args.onnx:
        b = load_backend(args.onnx, kind="onnx", batch_size=16, threads=args.threads)
        b.predict(srcs[:8], clms[:8])
        _, dt = _timed(lambda: b.predict(srcs, clms))
        results.append({"config": "veridic onnx int8, raw pairs", "n": len(srcs), "seconds": round(dt, 2), "pairs_per_s": round(len(srcs) / dt, 2)})
        print(json.dumps(results[-1]), flush=True)
        sc = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=b)
        _, dt = _timed(lambda: sc.score(sources=srcs, claims=clms))
        results.append({"config": "veridic onnx int8, sentence-level e-c scorer", "n": len(srcs), "seconds": round(dt, 2), "examples_per_s": round(len(srcs) / dt, 2)})
        print(json.dumps(results[-1]), flush=True)

    if not args.skip_naive:
        from transformers import pipeline

        from veridic.nli import resolve_model_path

        ref, _ = resolve_model_path(args.model)
        pipe = pipeline("text-classification", model=str(ref), device=-1, top_k=None)
        pipe({"text": srcs[0], "text_pair": clms[0]}, truncation=True)

        def loop():
            return [pipe({"text": s, "text_pair": c}, truncation=True) for s, c in zip(srcs, clms)]

        _, dt = _timed(loop)
        results.append({"config": "naive transformers pipeline loop (fp32, one pair per call)", "n": len(srcs), "seconds": round(dt, 2), "pairs_per_s": round(len(srcs) / dt, 2)})
        print(json.dumps(results[-1]), flush=True)


if __name__ == "__main__":
    main()
