"""Ray path vs single process on the same file: identical outputs and throughput with 2 actors.

Writes the first --rows rows of a benchmark file to a temporary JSONL, scores it with
`score_file` in this process and with `score_file_ray` on a local Ray instance (2 actors), with the
same chunking (chunk_rows = score_file's batch_rows), and compares every verdict column.

    .venv/bin/python benchmarks/probes/ray_vs_local.py --rows 200 --out /tmp/ray_vs_local.json
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))
COLS = ("score", "e", "n", "c", "uncertainty", "label_pred", "label", "sentences", "method", "model")


def _compare(ref: list[dict], got: list[dict]) -> dict:
    got = [{k: v for k, v in r.items() if k != "row_id"} for r in got]
    same_rows = sum(a == b for a, b in zip(ref, got))
    diff = max(abs(a["score"] - b["score"]) for a, b in zip(ref, got))
    sent = max((abs(x["score"] - y["score"]) for a, b in zip(ref, got) for x, y in zip(a["sentences"], b["sentences"])), default=0.0)
    labels = sum(a.get("label_pred") == b.get("label_pred") for a, b in zip(ref, got))
    return {"rows": len(ref), "rows_identical": same_rows, "max_abs_score_diff": diff, "max_abs_sentence_score_diff": sent, "labels_equal": labels}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA / "bench" / "summac_factcc.jsonl")
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--chunk-rows", type=int, default=25)
    ap.add_argument("--method", default="hybrid")
    ap.add_argument("--skip-threads1", action="store_true", help="Skip the 1-thread-per-actor run.")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()

    import torch

    from veridic.io import read_records, write_records
    from veridic.scale import score_file_ray
    from veridic.scoring_files import score_file
    from veridic.service import load_service_scorer

    tmp = Path(tempfile.mkdtemp(prefix="veridic-ray-bench-"))
    inp = tmp / "in.jsonl"
    write_records(inp, list(read_records(a.data))[: a.rows])
    out = {"data": str(a.data), "rows": a.rows, "chunk_rows": a.chunk_rows, "method": a.method, "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads()}

    scorer = load_service_scorer(method=a.method)
    t0 = time.perf_counter()
    score_file(scorer=scorer, input=inp, output=tmp / "local.jsonl", batch_rows=a.chunk_rows)
    out["local"] = {"seconds": round(time.perf_counter() - t0, 2)}
    out["local"]["rows_per_s"] = round(a.rows / out["local"]["seconds"], 3)
    ref = list(read_records(tmp / "local.jsonl"))
    print(json.dumps(out), flush=True)

    runs = [("ray_2actors_threads_as_local", None)] + ([] if a.skip_threads1 else [("ray_2actors_1thread", 1)])
    for name, threads in runs:
        o = tmp / f"{name}.jsonl"
        rep = score_file_ray(input=inp, output=o, method=a.method, actors=2, chunk_rows=a.chunk_rows, torch_threads=threads)
        res = {"seconds": rep.seconds, "rows_per_s": round(a.rows / rep.seconds, 3), "torch_threads_per_actor": threads or torch.get_num_threads(),
               **_compare(ref, list(read_records(o)))}
        out[name] = res
        print(json.dumps({name: res}), flush=True)
    if a.out:
        a.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
