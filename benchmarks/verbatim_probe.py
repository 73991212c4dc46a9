"""How an NLI model judges claim sentences that repeat a source sentence word for word.

A copy is entailed by definition; a model that calls copies contradictions punishes extractive
summaries. For each dev set this finds claim sentences whose words (case and punctuation aside,
three words or more) equal a source sentence's, scores (source sentence, copy) with the model and
prints the mean e−c, the share with e−c < 0, and the labels of the rows the copies come from.

    python benchmarks/verbatim_probe.py [--model DIR] [--backend onnx] [--per-dataset 150]

Reads ../shared/data/bench/*.jsonl (or --data FILES).
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

import numpy as np

from veridic.nli import load_backend
from veridic.nli._scorer import _words_key
from veridic.text import split_sentences


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="model folder (default: the embedded model)")
    ap.add_argument("--backend", default="onnx", help="torch or onnx (the default scorer's)")
    ap.add_argument("--per-dataset", type=int, default=150, help="copies scored per dataset (the first ones found)")
    ap.add_argument("--data", nargs="*", type=Path, default=None)
    args = ap.parse_args()
    files = args.data or sorted((Path(__file__).resolve().parents[2] / "shared" / "data" / "bench").glob("*.jsonl"))
    if not files:
        raise SystemExit("no dev files found: pass --data FILES (the dev sets live in ../shared/data/bench)")
    backend = load_backend(args.model, kind=args.backend)
    print("| dataset | rows | copies scored | mean e−c | share e−c < 0 | copies from faithful / unfaithful rows |")
    print("|---|---:|---:|---:|---:|---:|")
    for f in files:
        rows = [json.loads(line) for line in f.open(encoding="utf-8")]
        pairs = []
        for r in rows:
            index = {_words_key(s.text): s.text for s in split_sentences(r["source"])}
            for c in split_sentences(r["claim"]):
                key = _words_key(c.text)
                if key and key in index:
                    pairs.append((index[key], c.text, r["label"]))
        pairs = pairs[: args.per_dataset]
        if not pairs:
            print(f"| {f.stem} | {len(rows)} | 0 | | | |")
            continue
        enc = backend.predict([p for p, _, _ in pairs], [h for _, h, _ in pairs])
        ec = enc[:, 0] - enc[:, 2]
        labels = collections.Counter(lab for *_, lab in pairs)
        print(f"| {f.stem} | {len(rows)} | {len(pairs)} | {float(np.mean(ec)):+.3f} | {100 * float(np.mean(ec < 0)):.0f} % "
              f"| {labels.get(1, 0)} / {labels.get(0, 0)} |")


if __name__ == "__main__":
    main()
