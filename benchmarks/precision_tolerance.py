"""How far a shipped model's compact forms move its scores: packed int8 rows, bf16, ONNX int8, against fp32.

    python benchmarks/precision_tolerance.py --model veridic-nli-mpnet-base \
        --fp32 ~/.cache/veridic/train/nli-base-l12s-v2/final --out runs/precision.json

On the premise/hypothesis pairs of the contrast suite (652 short pairs; ``--limit`` for fewer), each form's
probabilities are compared with the full-precision weights (``--fp32``, the training run's export; left out:
the packed weights dequantised to fp32 stand in for them): the largest and the mean absolute difference of any
class probability and of e − c, and how often the argmax class changes. The model card states these figures as
the tolerance its tests hold the forms to.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from veridic.nli._models import ACCURATE_MODEL_NAME

#: Each compact form: the backend and dtype that run it.
FORMS = {"packed-fp32": ("torch", "float32"), "packed-bf16": ("torch", "bfloat16"), "onnx-int8": ("onnx", "int8")}


def _pairs(limit: int | None) -> tuple[list[str], list[str]]:
    from veridic.bench import load_datasets

    (ds,) = load_datasets(specs=["contrast"])
    ex = list(ds.examples)[:limit]
    return [e.pair.source for e in ex], [e.pair.claim for e in ex]


def compare(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    ec_a, ec_b = a[:, 0] - a[:, 2], b[:, 0] - b[:, 2]
    return {"max_abs_prob": float(np.abs(a - b).max()), "mean_abs_prob": float(np.abs(a - b).mean()),
            "max_abs_ec": float(np.abs(ec_a - ec_b).max()), "mean_abs_ec": float(np.abs(ec_a - ec_b).mean()),
            "argmax_changed": float((a.argmax(1) != b.argmax(1)).mean())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=ACCURATE_MODEL_NAME)
    ap.add_argument("--fp32", default=None, help="the full-precision export the packed weights were made from")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--forms", default=",".join(FORMS), help="comma-separated, from " + ",".join(FORMS)
                    + " (onnx-int8 exports an ONNX copy first: minutes for a base-size model)")
    args = ap.parse_args(argv)
    wanted = [f.strip() for f in args.forms.split(",") if f.strip()]
    if not wanted or any(f not in FORMS for f in wanted):
        ap.error(f"--forms takes a comma-separated subset of {','.join(FORMS)}; got {args.forms!r}")
    from veridic.nli import load_backend

    premises, hypotheses = _pairs(args.limit)
    ref_name = "fp32" if args.fp32 else "packed-fp32"
    ref = load_backend(args.fp32 or args.model, kind="torch", dtype="float32").predict(premises, hypotheses)
    out: dict = {"model": args.model, "reference": ref_name, "pairs": len(premises)}
    for name, (kind, dtype) in FORMS.items():
        if name == ref_name or name not in wanted:
            continue
        got = load_backend(args.model, kind=kind, dtype=dtype).predict(premises, hypotheses)
        out[name] = compare(ref, got)
        print(name, json.dumps({k: round(v, 4) for k, v in out[name].items()}), file=sys.stderr, flush=True)
    emit(out, args.out)
    return 0


def emit(out: dict, path: Path | None) -> None:
    """Print ``out`` as one JSON line, and write it to ``path`` too when one is given."""
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
