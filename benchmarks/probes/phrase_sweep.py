"""Sweep the detector's phrase-mode settings on WiCE and the contrast suite, scoring every NLI pair once.

The detector's two goals pull against each other: phrase mode finds WiCE's unsupported phrases in sentences
paraphrase safety let through, and the same search flags correct suite passages. This script runs the
detector under each (``phrase_max_e``, ``phrase_min_gain``) setting of a grid and prints, per setting, the
WiCE token-F1 margin over marking every token and the suite's false-flag rate (with their 95 % intervals).
The scorer is wrapped in a memo keyed by (source, claim), so the NLI runs once per distinct pair whatever
the grid size (the detector's inputs do not depend on the swept settings until phrase search, and phrase
search only asks for pairs it asked for under a looser setting).

    python benchmarks/probes/phrase_sweep.py --split dev --max-e 1.0 --max-e 0.3 --min-gain 0 --min-gain 0.2 \
        --out runs/s10/phrase_sweep_dev.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path
from typing import Any


class MemoScorer:
    """Delegates to ``inner``; ``score`` answers each (source, claim) pair from a memo after its first call."""

    def __init__(self, inner: Any):
        self._inner = inner
        self._memo: dict[tuple[str, str], Any] = {}
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def score(self, *, sources: list[str], claims: list[str], progress: bool = False) -> list[Any]:
        keys = list(zip(sources, claims))
        todo = list(dict.fromkeys(k for k in keys if k not in self._memo))
        if todo:
            self.calls += len(todo)
            got = self._inner.score(sources=[k[0] for k in todo], claims=[k[1] for k in todo], progress=progress)
            self._memo.update(zip(todo, got))
        return [self._memo[k] for k in keys]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="dev", help="WiCE split (dev or test).")
    ap.add_argument("--wice", type=Path, default=Path("../shared/data/spans/wice_non_supported_tokens"))
    ap.add_argument("--max-e", type=float, action="append", required=True)
    ap.add_argument("--min-gain", type=float, action="append", required=True)
    ap.add_argument("--no-suite", action="store_true", help="WiCE only.")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()

    from veridic.detect._benchmark import load_contrast_suite, load_wice_spans, run_suite_benchmark, wice_span_f1
    from veridic.detect.cli import build_detector
    from veridic.io._atomic import atomic_write_text

    det = build_detector(phrase_spans=True)
    det.scorer = MemoScorer(det.scorer)
    rows = load_wice_spans(a.wice / f"{a.split}.jsonl")
    suite = load_contrast_suite(None)
    results = []
    # Loosest setting first: later (stricter) settings ask only for pairs already scored.
    for max_e, min_gain in itertools.product(sorted(a.max_e, reverse=True), sorted(a.min_gain)):
        det.phrase_max_e, det.phrase_min_gain = max_e, min_gain
        t0 = time.time()
        w = wice_span_f1(detector=det, rows=rows)
        r = {"phrase_max_e": max_e, "phrase_min_gain": min_gain, "wice_split": a.split, "wice_f1": w["f1"],
             "wice_baseline": w["baseline_all_tokens"]["f1"], "wice_margin": w["f1"] - w["baseline_all_tokens"]["f1"],
             "wice_margin_ci95": w["margin_over_baseline_ci95"], "wice_precision": w.get("precision"), "wice_recall": w.get("recall")}
        if not a.no_suite:
            s = run_suite_benchmark(detector=det, examples=suite)
            ff = s["false_flags"]
            r.update({"suite_false_flag_rate": ff["rate"], "suite_false_flags": ff["flagged"], "suite_correct": ff["correct_passages"],
                      "suite_false_flag_ci95": ff.get("rate_ci95"),
                      "suite_entity_f1": s["per_type"]["entity"]["f1"], "suite_relation_f1": s["per_type"]["relation"]["f1"]})
        r["seconds"] = round(time.time() - t0, 1)
        r["nli_pairs_scored_so_far"] = det.scorer.calls
        results.append(r)
        print(json.dumps(r), flush=True)
    atomic_write_text(a.out, json.dumps({"detector": det.describe(), "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
