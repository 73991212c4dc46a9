"""Cost of a training backbone on this CPU: inference pairs/s and training examples/s.

Every batch is ``--batch`` NLI pairs (MNLI premises/hypotheses) padded or cut to exactly
``--tokens`` tokens, so figures do not depend on the length mix. The 3-way head is new
(random), which does not change the cost. Prints one JSON line per measurement with wall
time and process CPU time (user + system): on a shared machine the wall figure says what
this run got, ``pairs_per_cpu_s`` what the work itself costs.

Usage:
    OMP_NUM_THREADS=2 nice -n 5 python benchmarks/probes/backbone_cost.py --backbone all-mpnet-base-v2 \
        --threads 2 --batch 16 --tokens 128 --infer-batches 4 --train-steps 3
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import time
from pathlib import Path


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _pairs(data: Path, n: int) -> tuple[list[str], list[str]]:
    prem, hyp = [], []
    with gzip.open(data, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            prem.append(r["premise"])
            hyp.append(r["hypothesis"])
            if len(prem) == n:
                break
    # Long enough premises to fill the token budget: join neighbours.
    prem = [" ".join(prem[i:] + prem[:i])[:2000] for i in range(len(prem))]
    return prem, hyp


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backbone", default="all-mpnet-base-v2")
    ap.add_argument("--data", default=os.environ.get("VERIDIC_DATA", "../shared/data") + "/nli/mnli.jsonl.gz")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--infer-batches", type=int, default=4)
    ap.add_argument("--train-steps", type=int, default=3)
    ap.add_argument("--train-dtypes", default="auto",
                    help="comma-separated float32,bfloat16; auto: float32, plus bfloat16 on CPUs with native bf16")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from veridic.train._backbones import backbone_dir
    from veridic.train._loop import cpu_supports_bf16

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    path = backbone_dir(args.backbone)
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True, num_labels=3)
    n = args.batch * (1 + max(args.infer_batches, args.train_steps + 1))
    prem, hyp = _pairs(Path(args.data), n)
    enc = tok(prem, hyp, truncation="only_first", max_length=args.tokens, padding="max_length", return_tensors="pt")
    enc = {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask")}
    batches = [{k: v[s: s + args.batch] for k, v in enc.items()} for s in range(0, n, args.batch)]
    base = {"backbone": args.backbone, "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
            "threads": args.threads, "batch": args.batch, "tokens": args.tokens,
            "cpu_bf16": cpu_supports_bf16()}

    def report(kind: str, dtype: str, n_items: int, wall: float, cpu: float) -> None:
        print(json.dumps({**base, "measure": kind, "dtype": dtype, "items": n_items,
                          "per_s_wall": round(n_items / wall, 2), "per_cpu_s": round(n_items / cpu, 2),
                          "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                          "loadavg_1m": round(os.getloadavg()[0], 1)}), flush=True)

    model.eval()
    with torch.inference_mode():
        model(**batches[0])  # warm-up
        w, c = time.perf_counter(), _cpu()
        for b in batches[1: 1 + args.infer_batches]:
            model(**b)
        report("inference", "float32", args.batch * args.infer_batches, time.perf_counter() - w, _cpu() - c)

    labels = torch.arange(args.batch) % 3
    dtypes = args.train_dtypes
    if dtypes == "auto":
        dtypes = "float32,bfloat16" if cpu_supports_bf16() else "float32"  # emulated bf16 is slower than fp32
    for dtype in [d for d in dtypes.split(",") if d]:
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5)

        def step(b, dtype=dtype, opt=opt):
            if dtype == "bfloat16":
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    logits = model(**b).logits
            else:
                logits = model(**b).logits
            torch.nn.functional.cross_entropy(logits.float(), labels).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        step(batches[0])  # warm-up (allocates the optimizer state)
        w, c = time.perf_counter(), _cpu()
        for b in batches[1: 1 + args.train_steps]:
            step(b)
        report("train", dtype, args.batch * args.train_steps, time.perf_counter() - w, _cpu() - c)


if __name__ == "__main__":
    main()
