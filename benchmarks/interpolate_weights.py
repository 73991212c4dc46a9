"""Interpolate two fine-tuned checkpoints of one architecture (WiSE-FT, Wortsman et al., 2022).

    python benchmarks/interpolate_weights.py --a runs/nli-v1/final --b runs/nli-v2/final --alpha 0.5 --out runs/nli-soup50

Writes ``(1 - alpha) * A + alpha * B`` with A's config and tokenizer. Robust fine-tuning: the weights of a
model fine-tuned from A, averaged with A's, often keep what A generalised and part of what the fine-tune added.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, type=Path)
    ap.add_argument("--b", required=True, type=Path)
    ap.add_argument("--alpha", required=True, type=float)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    from safetensors.torch import load_file, save_file

    wa, wb = load_file(str(args.a / "model.safetensors")), load_file(str(args.b / "model.safetensors"))
    if wa.keys() != wb.keys() or any(wa[k].shape != wb[k].shape for k in wa):
        raise SystemExit("the two checkpoints do not share one architecture")
    out = {k: ((1 - args.alpha) * wa[k].float() + args.alpha * wb[k].float()).to(wa[k].dtype).contiguous() for k in wa}
    args.out.mkdir(parents=True, exist_ok=True)
    for f in args.a.iterdir():
        if f.is_file() and f.name != "model.safetensors" and f.name != "hybrid.json":
            shutil.copy(f, args.out / f.name)
    save_file(out, str(args.out / "model.safetensors"), metadata={"format": "pt", "interpolated": f"(1-{args.alpha})*{args.a} + {args.alpha}*{args.b}"})
    print("wrote", args.out)


if __name__ == "__main__":
    main()
