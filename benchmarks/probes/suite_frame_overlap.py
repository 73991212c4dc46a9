"""Contrast-suite accuracy split by whether an item's predicate appears in the frame tables.

Frame pairs (veridic.synth._frames) are templated; some hand-written suite items use the same
predicates ("met", "merged with"). A model trained on frames could score those by memory
rather than by reading structure, so this prints accuracy per rule group on items whose
text contains a trained frame predicate, on items containing only a held-back frame
predicate, and on the rest.

    python benchmarks/probes/suite_frame_overlap.py --scores runs/eval/contrast-v3/scores.csv --scorer e-c --threshold 0 \
        --frames runs/contrast/frames.jsonl.gz

Reads the suite from veridic/bench/data/contrast_suite.jsonl; prints a Markdown table.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
from collections import defaultdict
from pathlib import Path

from veridic.bench._contrast import TARGET_GROUPS as GROUPS
from veridic.bench._contrast import wilson as wilson_interval


def _predicate_words(pred: str) -> list[str]:
    """The fixed words of a frame predicate ("{A} sold {X} to {B}" -> ["sold", "to"])."""
    return [w for w in re.sub(r"\{[A-Z]\}", " ", pred).split() if w]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scores", required=True, type=Path, help="scores.csv written by `veridic bench --data contrast`")
    ap.add_argument("--scorer", action="append", required=True, help="column(s) of scores.csv")
    ap.add_argument("--threshold", action="append", type=float, required=True, help="one per --scorer")
    ap.add_argument("--frames", required=True, type=Path, help="the frame corpus the model was trained with")
    ap.add_argument("--suite", type=Path, default=Path(__file__).resolve().parents[2] / "veridic/bench/data/contrast_suite.jsonl")
    args = ap.parse_args()
    if len(args.scorer) != len(args.threshold):
        ap.error("give one --threshold per --scorer")
    splits = defaultdict(set)
    with gzip.open(args.frames, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            splits[r["split"]].add(r["meta"]["predicate"])
    trained = {p: _predicate_words(p) for p in splits["train"]}
    held = {p: _predicate_words(p) for p in splits["held_back"] - splits["train"]}

    def has(words: list[str], text: str) -> bool:
        return bool(words) and re.search(r"\b" + r"\b.*\b".join(map(re.escape, words)) + r"\b", text) is not None

    suite = {json.loads(line)["id"]: json.loads(line) for line in args.suite.read_text().splitlines() if line.strip()}
    scores = {r["id"]: r for r in csv.DictReader(args.scores.open())}
    cells: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for sid, item in suite.items():
        text = f"{item['source']} {item['claim']}"
        where = ("trained predicate" if any(has(w, text) for w in trained.values())
                 else "held-back predicate" if any(has(w, text) for w in held.values()) else "no frame predicate")
        rule = item["meta"]["rule"]
        group = next((g for g, rules in GROUPS.items() if rule in rules), None)
        for col, thr in zip(args.scorer, args.threshold):
            ok = int((float(scores[sid][col]) > thr) == bool(item["label"]))
            for g in filter(None, (group, rule)):
                cells[(col, g, where)].append(ok)
    wheres = ["trained predicate", "held-back predicate", "no frame predicate"]
    print("| scorer | rule / group | " + " | ".join(wheres) + " |")
    print("|---|---|" + "---:|" * len(wheres))
    for col in args.scorer:
        for g in [*GROUPS, *sorted({k[1] for k in cells if k[1] not in GROUPS})]:
            row = []
            for w in wheres:
                v = cells.get((col, g, w), [])
                if v:
                    lo, hi = wilson_interval(sum(v), len(v))
                    row.append(f"{100 * sum(v) / len(v):.1f} <sub>{100 * lo:.0f}–{100 * hi:.0f}</sub> (n={len(v)})")
                else:
                    row.append("–")
            print(f"| {col} | {g} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
