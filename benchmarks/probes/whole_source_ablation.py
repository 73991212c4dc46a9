"""What the whole-source pair buys: AUC and model work of the sentence-level scorers with and without it.

Every claim sentence of the sentence-level scorer is judged against windows
of two consecutive source sentences and, when the whole source fits the
model, against the whole source too (``whole_source``). This scores a seeded
sample of benchmark rows with both settings (and a smaller ``max_windows``)
through one prediction cache, so the NLI work shared by the settings is done
once, and prints per setting: AUC of e-c and of hybrid (with the shipped
weights, fitted on the whole-source setting), pairs, and premise+hypothesis
tokens (the model's work).

    OMP_NUM_THREADS=2 nice -n 5 python benchmarks/probes/whole_source_ablation.py \\
        --data ../shared/data/bench/frank_test.jsonl --n 200 --seed 0
"""

from __future__ import annotations

import argparse
import json
import random

from sklearn.metrics import roc_auc_score

from veridic import build_scorer
from veridic.config import ScorerConfig
from veridic.io import read_records, record_to_pair
from veridic.nli import CachedBackend, load_backend


class _Counting:
    """Counts the pairs and tokens a scorer asks for (cache hits included: the work an uncached run does)."""

    def __init__(self, inner):
        self.inner = inner
        self.pairs = 0
        self.tokens = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def predict(self, premises, hypotheses, **kw):
        self.pairs += len(premises)
        tok = self.inner.tokenizer
        self.tokens += sum(min(len(x), self.inner.max_length) for x in tok(list(premises), list(hypotheses), truncation=True,
                                                                           max_length=self.inner.max_length)["input_ids"])
        return self.inner.predict(premises, hypotheses, **kw)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, action="append")
    ap.add_argument("--n", type=int, default=200, help="rows sampled per data file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    cached = CachedBackend(load_backend(args.model, dtype="float32"))
    settings = {
        "whole_source=True, max_windows=8 (before)": {"whole_source": True, "max_windows": 8},
        "whole_source=False, max_windows=8": {"whole_source": False, "max_windows": 8},
        "whole_source=False, max_windows=4": {"whole_source": False, "max_windows": 4},
        "whole_source=True, max_windows=4": {"whole_source": True, "max_windows": 4},
    }
    for path in args.data:
        rows = [r for r in read_records(path)]
        random.Random(args.seed).shuffle(rows)
        pairs = [record_to_pair(r) for r in rows[: args.n]]
        srcs, clms, labels = [p.source for p in pairs], [p.claim for p in pairs], [int(r["label"]) for r in rows[: args.n]]
        for name, opts in settings.items():
            counting = _Counting(cached)
            out = {"data": path, "n": len(pairs), "setting": name}
            for method in ("e-c", "hybrid"):
                counting.pairs = counting.tokens = 0
                scorer = build_scorer(ScorerConfig(method=method, **opts), backend=counting)
                scores = [v.score for v in scorer.score(sources=srcs, claims=clms)]
                out[f"auc_{method}"] = round(100 * roc_auc_score(labels, scores), 2)
            out["pairs"] = counting.pairs
            out["tokens"] = counting.tokens
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
