"""Scoring time and peak memory against source length, up to the source-length guard.

Each length runs in a fresh subprocess (so peak RSS is that length's own): the embedded model scores
one one-sentence claim against a source of N characters of ordinary English (the bench sources,
repeated). A length past the guard (``VERIDIC_MAX_SOURCE_CHARS``, default 2,000,000) is refused
before any model call; that refusal is timed too. Each run is bounded by ``--limit-s``.

    OMP_NUM_THREADS=1 nice -n 5 .venv/bin/python benchmarks/probes/source_length.py --lengths 10000 40000 160000 320000 --out /tmp/len.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))

CHILD = r"""
import json, resource, sys, time
from veridic.io import check_text_length
from veridic import ScorerConfig, build_scorer
from veridic.nli import load_backend
n, data, method = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rows = [json.loads(l) for l in open(data, encoding="utf-8") if l.strip()]
text = " ".join(r["source"] for r in rows)
while len(text) < n:
    text += " " + text
source = text[:n]
claim = rows[0]["claim"].split(". ")[0].rstrip(".") + "."
t0 = time.perf_counter()
try:
    check_text_length(source, what="source")
except Exception as exc:
    print(json.dumps({"chars": n, "refused": str(exc)[:200], "seconds": round(time.perf_counter() - t0, 4),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
    sys.exit(0)
scorer = build_scorer(ScorerConfig(method=method, structure_check=False), backend=load_backend(None, kind="torch"))
scorer.score(sources=["A cat sat on the mat."], claims=["A cat sat."])  # load and warm up
base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter()
v = scorer.score(sources=[source], claims=[claim])[0]
dt = time.perf_counter() - t0
print(json.dumps({"chars": n, "seconds": round(dt, 2), "score": round(v.score, 4), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "rss_after_load_mb": round(base_rss)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, nargs="+", default=[10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 2_000_001])
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "summac_factcc.jsonl")
    ap.add_argument("--method", default="e-c")
    ap.add_argument("--limit-s", type=float, default=300)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    results = []
    for n in a.lengths:
        try:
            p = subprocess.run([sys.executable, "-c", CHILD, str(n), str(a.data), a.method], cwd=REPO, capture_output=True, text=True, timeout=a.limit_s,
                               env=dict(os.environ, PYTHONPATH=str(REPO)))
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else json.dumps({"chars": n, "error": p.stderr[-300:]})
            r = json.loads(line)
        except subprocess.TimeoutExpired:
            r = {"chars": n, "seconds": f"> {a.limit_s:g} (stopped)"}
        results.append(r)
        print(json.dumps(r), flush=True)
    if a.out:
        a.out.write_text(json.dumps({"data": str(a.data), "method": a.method, "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
