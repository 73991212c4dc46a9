"""What the model reads in the window the scorer picks for each claim sentence, on the dev pool.

    python benchmarks/chosen_windows.py [--model veridic-nli-minilm-l6] [--data ../shared/data/bench] [-o FILE.json]

For each dev set and each row label, the share of claim sentences whose chosen window (the shipped ``max`` reading)
the model reads as contradicting (c > 0.5), neutral (n > 0.5) or entailing (e > 0.5), and the set's ROC AUC with the
two single scores read from the same windows: ``e-c`` and entailment alone (``e``). A reading that ranks better by
dropping the contradiction, or windows rarely read as contradicting, say where the model's contradiction matters.
Model answers go through the on-disk prediction cache (`veridic bench` and the other benchmark scripts share it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reading_variants import _backend, _datasets  # noqa: E402

from veridic.config import ScorerConfig  # noqa: E402
from veridic.factory import build_scorer  # noqa: E402


def chosen_windows(*, model: str, data: str) -> dict:
    sc = build_scorer(ScorerConfig(method="e-c"), backend=_backend(model))
    out: dict = {}
    for ds in _datasets(data):
        verdicts = sc.score(sources=[e.pair.source for e in ds.examples], claims=[e.pair.claim for e in ds.examples],
                            contexts=[e.pair.context for e in ds.examples])
        y = np.asarray(ds.labels, dtype=int)
        ec = np.array([v.score for v in verdicts])
        e = np.array([np.mean([s.e for s in v.sentences]) if v.sentences else v.e for v in verdicts])
        row: dict = {"auc_e-c": float(roc_auc_score(y, ec)), "auc_e": float(roc_auc_score(y, e))}
        for lab, name in ((1, "faithful"), (0, "unfaithful")):
            probs = np.array([(s.e, s.n, s.c) for v, t in zip(verdicts, y) if t == lab for s in v.sentences]).reshape(-1, 3)
            row[name] = {"sentences": len(probs), **{k: float(np.mean(probs[:, i] > 0.5)) if len(probs) else None
                                                    for i, k in enumerate(("entailing", "neutral", "contradicting"))}}
        out[ds.name] = row
        print(f"{ds.name}: e-c {100 * row['auc_e-c']:.1f}, e {100 * row['auc_e']:.1f}; chosen window contradicting "
              f"{100 * row['faithful']['contradicting']:.0f} % of faithful and {100 * row['unfaithful']['contradicting']:.0f} % "
              "of unfaithful claim sentences", file=sys.stderr, flush=True)
    out["mean"] = {k: float(np.mean([r[k] for r in out.values()])) for k in ("auc_e-c", "auc_e")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="veridic-nli-minilm-l6")
    ap.add_argument("--data", default=os.environ.get("VERIDIC_DATA", "../shared/data") + "/bench")
    ap.add_argument("-o", "--out", type=Path, default=None)
    args = ap.parse_args()
    res = chosen_windows(model=args.model, data=args.data)
    text = json.dumps(res, indent=2)
    if args.out:
        from veridic.io import atomic_write_text

        atomic_write_text(args.out, text + "\n")
    print(text)


if __name__ == "__main__":
    main()
