"""What AdamW's fused kernel saves per training step on this CPU: MPNet-base (or any backbone) as a 3-way classifier,
one fixed batch, each kernel timed over the same steps (forward + backward, then the optimiser step on its own).

    python benchmarks/probes/optimizer_kernel.py                       # MPNet-base, batch 32 x 96 tokens, 8 steps each
    python benchmarks/probes/optimizer_kernel.py --backbone backbone:all-minilm-l6-v2 --steps 20

Prints one row per kernel: median seconds per whole step, of which the optimiser step, and the parameters updated.
Run it with the cores to itself: the figures are wall times, and beside another process using the same cores (a
training stage) both processes' threads spin against each other and every figure is several times too large.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backbone", default="backbone:all-mpnet-base-v2")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=96)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fused-first", action="store_true", help="time the fused kernel first (order effects)")
    a = ap.parse_args(argv)

    import torch
    from transformers import AutoModelForSequenceClassification

    from veridic.device import cpu_supports_bf16
    from veridic.train._backbones import resolve_backbone_ref

    torch.set_num_threads(a.threads)
    path = resolve_backbone_ref(a.backbone) or a.backbone
    bf16 = cpu_supports_bf16()
    gen = torch.Generator().manual_seed(0)
    rows = []
    for fused in ((True, False) if a.fused_first else (False, True)):
        torch.manual_seed(0)
        model = AutoModelForSequenceClassification.from_pretrained(path, num_labels=3).train()
        ids = torch.randint(1000, model.config.vocab_size - 1, (a.batch, a.tokens), generator=gen)
        labels = torch.randint(0, 3, (a.batch,), generator=gen)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01, fused=fused)
        whole, step = [], []
        for i in range(a.steps + 2):  # the first two warm the allocator and the kernels
            t0 = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                loss = torch.nn.functional.cross_entropy(model(input_ids=ids).logits.float(), labels)
            loss.backward()
            t1 = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            t2 = time.perf_counter()
            if i >= 2:
                whole.append(t2 - t0)
                step.append(t2 - t1)
        rows.append({"kernel": "fused" if fused else "per-tensor loop", "s_per_step": round(statistics.median(whole), 3),
                     "optimiser_s": round(statistics.median(step), 3),
                     "parameters": sum(p.numel() for p in model.parameters()), "bf16": bf16})
    print("| AdamW kernel | s per step (median) | of which the optimiser step |")
    print("|---|---:|---:|")
    for r in rows:
        print(f"| {r['kernel']} | {r['s_per_step']:.3f} | {r['optimiser_s']:.3f} |")
    print(json.dumps({"backbone": a.backbone, "batch": a.batch, "tokens": a.tokens, "steps": a.steps, "rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
