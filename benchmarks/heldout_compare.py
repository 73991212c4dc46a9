"""Score any NLI model on a training config's held-back slices (real NLI, and contrast pairs per rule).

    python benchmarks/heldout_compare.py --config configs/nli-minilm-v2.yaml --run runs/nli-v2 \
        --model runs/nli-v1/final --model veridic-nli-mpnet-base --out runs/eval/heldout.json

The slices are rebuilt exactly as the trainer builds them (hash-selected rows, never trained on), so
models trained with different recipes are compared on the same rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--run", required=True, type=Path, help="run folder holding the contrast corpus")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args()
    from transformers import AutoTokenizer

    from veridic.nli._backend import load_sequence_classifier
    from veridic.nli._models import resolve_model_path
    from veridic.train._evaluate import evaluate_nli
    from veridic.train._loop import Trainer, load_config

    cfg = load_config(args.config)
    t = Trainer(config=cfg, output_dir=args.run)
    t._prepare_data()
    out = {}
    for m in args.model:
        # A name (veridic-nli-mpnet-base), folder or hub id; packed int8 folders are dequantised as the backend does.
        path, _ = resolve_model_path(m)
        model = load_sequence_classifier(Path(path) if Path(str(path)).is_dir() else path).eval()
        tok = AutoTokenizer.from_pretrained(str(path))
        kw = dict(model=model, tokenizer=tok, batch_size=64, max_length=cfg.model.max_length)
        real = evaluate_nli(examples=t.held_out, **kw)
        con = {rule: evaluate_nli(examples=exs, **kw)["accuracy_2way"] for rule, exs in sorted(t.held_out_contrast.items())}
        out[m] = {"real": {k: real[k] for k in ("n", "accuracy_3way", "n_3way", "accuracy_2way", "per_source")},
                  "contrast_2way": con, "contrast_n": {r: len(e) for r, e in t.held_out_contrast.items()}}
        print(m, f"3-way {real['accuracy_3way']:.3f}  2-way {real['accuracy_2way']:.3f}", json.dumps({k: round(v, 3) for k, v in con.items()}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
