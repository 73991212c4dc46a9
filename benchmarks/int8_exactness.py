"""Does this CPU compute the int8 model's products exactly, and what does exactness cost here?

    python benchmarks/int8_exactness.py [--model veridic-nli-minilm-l6] [--limit 256] [--out runs/int8-exactness.json]

x86 CPUs without VNNI sum int8 products in pairs into 16 bits, which saturate; veridic's ONNX sessions ask ONNX
Runtime for exact products (``session.x64quantprecision``, :func:`veridic.nli._backend.ort_session_options`), so
one int8 file scores alike on every CPU. On the contrast suite's premise/hypothesis pairs this compares the int8
model with and without that option against the full-precision weights (largest and mean probability difference,
argmax changes) and times both (median of 3 alternating runs). On a CPU with VNNI the two int8 rows are identical.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="veridic-nli-minilm-l6")
    ap.add_argument("--limit", type=int, default=256)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    import onnxruntime as ort
    from precision_tolerance import _pairs, compare, emit

    from veridic.nli import load_backend
    from veridic.nli._backend import ort_session_options

    premises, hypotheses = _pairs(args.limit)
    exact = load_backend(args.model, kind="onnx", dtype="int8")
    saturating = load_backend(args.model, kind="onnx", dtype="int8")
    opts = ort_session_options(threads=exact.session.get_session_options().intra_op_num_threads or None)
    opts.add_session_config_entry("session.x64quantprecision", "0")  # ONNX Runtime's default
    saturating.session = ort.InferenceSession(str(exact.file), sess_options=opts, providers=["CPUExecutionProvider"])
    ref = load_backend(args.model, kind="torch", dtype="float32").predict(premises, hypotheses)
    flags = Path("/proc/cpuinfo").read_text().split("flags")[1].split("\n")[0].split() if Path("/proc/cpuinfo").exists() else []
    out: dict = {"model": args.model, "pairs": len(premises), "onnxruntime": ort.__version__,
                 "cpu_int8": "vnni" if any("vnni" in f for f in flags) else ("avx2, no vnni" if "avx2" in flags else "other")}
    times: dict[str, list[float]] = {"int8 exact": [], "int8 saturating": []}
    for rep in range(3):
        for name, backend in (("int8 exact", exact), ("int8 saturating", saturating)):
            t = time.perf_counter()
            got = backend.predict(premises, hypotheses)
            times[name].append(time.perf_counter() - t)
            if rep == 0:
                out[name] = compare(ref, got)
    for name, ts in times.items():
        out[name]["seconds_per_pair"] = statistics.median(ts) / len(premises)
        print(name, json.dumps({k: round(v, 4) for k, v in out[name].items()}), file=sys.stderr, flush=True)
    emit(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
