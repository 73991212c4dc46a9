"""Determinism of veridic's scores: across runs, processes, backend batch sizes, torch thread counts,
and one call per pair vs one call for all pairs. Reports the max abs difference of each comparison.

    .venv/bin/python benchmarks/probes/determinism.py --rows 100 --out /tmp/determinism.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))


def _scores(data: Path, rows: int, *, batch_size: int, threads: int | None, one_by_one: bool, method: str) -> list[float]:
    import torch

    from veridic.io import read_records, record_to_pair
    from veridic.service import load_service_scorer

    if threads:
        torch.set_num_threads(threads)
    pairs = [record_to_pair(r) for r in list(read_records(data))[:rows]]
    sc = load_service_scorer(method=method, batch_size=batch_size)
    if one_by_one:
        return [sc.score(sources=[p.source], claims=[p.claim])[0].score for p in pairs]
    return [v.score for v in sc.score(sources=[p.source for p in pairs], claims=[p.claim for p in pairs])]


def _digest(xs: list[float]) -> str:
    return hashlib.sha256(json.dumps(xs).encode()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "dialfact_small.jsonl")
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    if a.child:  # a separate process: print the scores' digest and the scores
        xs = _scores(a.data, a.rows, batch_size=32, threads=None, one_by_one=False, method=a.method)
        print(json.dumps({"digest": _digest(xs), "scores": xs}))
        return
    ref = _scores(a.data, a.rows, batch_size=32, threads=None, one_by_one=False, method=a.method)
    res = {"data": str(a.data), "rows": a.rows, "method": a.method, "reference": "batch_size=32, default threads, one call for all pairs"}
    again = _scores(a.data, a.rows, batch_size=32, threads=None, one_by_one=False, method=a.method)
    res["same process, second run"] = max(abs(x - y) for x, y in zip(ref, again))
    procs = [json.loads(subprocess.run([sys.executable, __file__, "--child", "1", "--rows", str(a.rows), "--data", str(a.data), "--method", a.method],
                                       capture_output=True, text=True, check=True, cwd=REPO).stdout.strip().splitlines()[-1]) for _ in range(2)]
    res["two other processes: digests"] = [p["digest"] for p in procs] + [_digest(ref)]
    res["other process"] = max(abs(x - y) for x, y in zip(ref, procs[0]["scores"]))
    for bs in (1, 8, 64):
        xs = _scores(a.data, a.rows, batch_size=bs, threads=None, one_by_one=False, method=a.method)
        res[f"batch_size={bs}"] = max(abs(x - y) for x, y in zip(ref, xs))
    xs = _scores(a.data, a.rows, batch_size=32, threads=None, one_by_one=True, method=a.method)
    res["one call per pair (= one service request each)"] = max(abs(x - y) for x, y in zip(ref, xs))
    xs = _scores(a.data, a.rows, batch_size=32, threads=1, one_by_one=False, method=a.method)
    res["torch threads=1"] = max(abs(x - y) for x, y in zip(ref, xs))
    print(json.dumps(res, indent=2))
    if a.out:
        a.out.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
