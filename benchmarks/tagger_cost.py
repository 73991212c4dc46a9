"""Cost of the span tagger beside the default scorer, per passage, on 2 cores (docs/preregistration/span-tagger.md).

    python benchmarks/tagger_cost.py --tagger ~/.cache/veridic/train/span-tagger-v1/final [--rows 200] [--repeats 3]
    python benchmarks/tagger_cost.py --tagger veridic-tagger-mpnet-base --also-model veridic-nli-mpnet-base

Both models are loaded first; then the same seeded sample of the span evaluation rows (seed 0, pooled over the
three sets) goes through the tagger and through ``veridic.load_scorer()`` (``hybrid`` on the embedded model,
backend ``auto``) in alternating runs in one process, so both meet the same load. Prints the median seconds per
passage of each and their ratio as JSON. ``--also-model NAME`` (repeatable) times the same scorer on another model
in the same alternation (a base-size tagger's cost beside the accurate tier's, say); its ratio is
``tagger_over[NAME]``. ``--detector`` also times the whole detector (``veridic.load_detector()``: parse, tagger, rules
and judge) on the same rows, on the default judge, without a tagger (``load_detector(tagger=None)``, the rules and the
judge alone) and on each ``--also-model`` (``load_detector(model=NAME)``); its ratios to the default scorer are
``detector_over_scorer``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tagger", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--also-model", action="append", default=[], metavar="NAME",
                    help="also time the scorer on this model (a shipped name or a folder); repeatable")
    ap.add_argument("--detector", action="store_true",
                    help="also time the whole detector with the shipped tagger, judged by the default model and each --also-model")
    args = ap.parse_args()

    import veridic
    from veridic.detect._spans import SPAN_DATASETS, load_span_rows
    from veridic.detect._tagger import SpanTagger

    rows = [r for name in SPAN_DATASETS for r in load_span_rows(dataset=name, split="test" if name == "entfa_xsum" else None)]
    random.Random(args.seed).shuffle(rows)
    rows = rows[: args.rows]
    sources, claims = [r.source for r in rows], [r.claim for r in rows]
    tagger = SpanTagger(args.tagger)
    scorers = {"scorer": veridic.load_scorer(), **{m: veridic.load_scorer(model=m) for m in args.also_model}}
    tagger.predict(sources=sources[:4], claims=claims[:4])  # warm-up: first calls allocate
    for sc in scorers.values():
        sc.score(sources=sources[:4], claims=claims[:4])
    runs = {"tagger": lambda: tagger.predict(sources=sources, claims=claims),
            **{k: (lambda sc=sc: sc.score(sources=sources, claims=claims)) for k, sc in scorers.items()}}
    detectors = {}
    if args.detector:
        detectors = {"detector": veridic.load_detector(), "detector-without-tagger": veridic.load_detector(tagger=None),
                     **{f"detector@{m}": veridic.load_detector(model=m) for m in args.also_model}}
        for name, det in detectors.items():
            det.detect_many(passages=claims[:4], evidences=sources[:4])
            runs[name] = lambda det=det: det.detect_many(passages=claims, evidences=sources)
    taggers = [tagger, *(d.tagger for d in detectors.values() if getattr(d, "tagger", None) is not None)]
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.repeats):
        for name, run in runs.items():
            for kept in taggers:
                kept.forget()  # each repeat tags every pair again, not from the tagger's kept probabilities
            t = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - t) / len(rows))
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {"rows": len(rows), "repeats": args.repeats, "seconds_per_passage": med, "runs": times,
           "tagger_over_scorer": med["tagger"] / med["scorer"], "scorer": scorers["scorer"].describe().get("name")}
    if args.also_model:
        out["tagger_over"] = {m: med["tagger"] / med[m] for m in args.also_model}
    if detectors:
        out["detector_over_scorer"] = {k: med[k] / med["scorer"] for k in detectors}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
