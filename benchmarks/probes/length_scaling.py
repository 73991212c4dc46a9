"""Scoring time against source length: windows must be built in linear time.

One claim sentence against sources of 10k to 1M characters, with the
embedded model's tokenizer and the default sentence-level e-c scorer
(``max_windows`` caps the model calls, so the time is the text work:
sentence splitting, tokenising, building and ranking windows). Prints one
JSON line per length: seconds, and seconds per 100k characters (flat =
linear).

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/probes/length_scaling.py --lengths 10000,40000,160000,640000,1000000
"""

from __future__ import annotations

import argparse
import json
import time

from veridic import ScorerConfig, build_scorer
from veridic.nli import load_backend


def source_of(n_chars: int) -> str:
    parts, i, size = [], 0, 0
    while size < n_chars:
        s = f"Report {i} says the plant in town {i % 97} made {i * 7 % 1000} parts in week {i % 52}. "
        parts.append(s)
        size += len(s)
        i += 1
    return "".join(parts)[:n_chars]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lengths", default="10000,40000,160000,640000,1000000")
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    scorer = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=load_backend(dtype="float32"))
    claim = "The plant in town 5 made 35 parts in week 5."
    scorer.score(sources=[source_of(2000)], claims=[claim])  # warm-up
    import veridic

    print(json.dumps({"veridic": veridic.__file__}), flush=True)
    for n in map(int, args.lengths.split(",")):
        src = source_of(n)
        best, best_cpu, windows_cpu = float("inf"), float("inf"), float("inf")
        for _ in range(args.repeats):
            c = time.process_time()
            scorer._units([src], [claim])  # the text work alone: splitting, tokenising, windows
            windows_cpu = min(windows_cpu, time.process_time() - c)
            t, c = time.perf_counter(), time.process_time()
            v = scorer.score(sources=[src], claims=[claim])[0]
            best, best_cpu = min(best, time.perf_counter() - t), min(best_cpu, time.process_time() - c)
        print(json.dumps({"chars": n, "wall_s": round(best, 3), "cpu_s": round(best_cpu, 3), "windows_cpu_s": round(windows_cpu, 3),
                          "windows_cpu_s_per_100k_chars": round(windows_cpu / n * 1e5, 3), "score": round(v.score, 4)}), flush=True)


if __name__ == "__main__":
    main()
