"""Data card of the contrast corpus (docs/contrast-data.md) and candidates for the hand-checked suite.

    python benchmarks/contrast_card.py --corpus runs/contrast/contrast.jsonl.gz --summary runs/contrast/summary.json \
        --card docs/contrast-data.md --candidates runs/contrast/suite_candidates.jsonl --per-rule 45

Candidates come only from the held-back documents (never trained on); each is then read by hand and
kept, fixed or dropped before it enters veridic/bench/data/contrast_suite.jsonl.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

from veridic.synth._contrast import RULE_LABELS, RULES
from veridic.synth._corpus import read_contrast_corpus

_DESCRIPTIONS = {
    "role_swap": "subject and object of a non-symmetric verb exchanged (active or passive)",
    "voice_role_change": "active to passive with the roles exchanged",
    "bow_swap": "two same-type named entities exchanged (same bag of words)",
    "relation_reversal": "a reversible relation word flipped (before/after, bought/sold, won/lost, started/ended)",
    "entity_substitution": "a named entity replaced by another of the same type from the same document",
    "number_change": "a number, date or unit amount changed",
    "negation": "the main verb negated, or its negation removed",
    "quantifier": "a quantifier changed (all/some, many/few)",
    "passive_keep_roles": "active to passive keeping the roles",
    "symmetric_swap": "arguments of a symmetric predicate exchanged (meet, marry, border, ...)",
    "coord_swap": "the conjuncts of 'X and Y' exchanged",
    "converse": "'A bought X from B' to 'B sold X to A'",
    "clause_reorder": "a fronted adverbial moved to the end, or a final time/place phrase fronted",
    "compression": "parentheticals, appositives and non-restrictive clauses dropped",
    "synonym": "a word replaced by a synonym from a conservative list",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--card", required=True)
    ap.add_argument("--candidates")
    ap.add_argument("--per-rule", type=int, default=45)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rows = read_contrast_corpus(args.corpus)
    summary = json.loads(Path(args.summary).read_text())
    by = defaultdict(lambda: defaultdict(list))
    for r in rows:
        by[r["rule"]][r["split"]].append(r)
    rng = random.Random(args.seed)
    lines = [
        "# Data card: the contrast corpus", "",
        "Pairs made by `veridic.synth._contrast` from non-benchmark text (see `veridic/synth/_corpus.py` for the sources:",
        "PoMo sentence triples, FNC-1 bodies, ConTRoL passages, premises of MultiNLI, SNLI, LingNLI, ANLI and the Wikipedia",
        "part of semiauto_nli). Premise = a 1–3 sentence window that contains the rewritten sentence. A document is held",
        "back for every rule by a hash of its id (3 %); held-back pairs are never trained on.",
        "",
        f"Built by `veridic synth contrast --out runs/contrast/contrast.jsonl.gz` (seed 13): {summary['documents']:,} documents, "
        f"{summary['sentences']:,} sentences, **{summary['pairs']:,} pairs**, {summary.get('seconds', 0) / 60:.0f} min of spaCy "
        "(`en_core_web_sm` 3.8) on 2 CPU cores.",
        "",
        "| rule | label | what changes | train | held back |",
        "|---|---|---|---:|---:|",
    ]
    for rule in RULES:
        n_tr, n_hb = len(by[rule]["train"]), len(by[rule]["held_back"])
        lines.append(f"| `{rule}` | {RULE_LABELS[rule]} | {_DESCRIPTIONS[rule]} | {n_tr:,} | {n_hb:,} |")
    lines += ["", "## Two examples per rule (held-back documents)", ""]
    for rule in RULES:
        pool = sorted(by[rule]["held_back"] or by[rule]["train"], key=lambda r: (len(r["original"]), r["hypothesis"]))
        picks = rng.sample(pool, min(2, len(pool))) if pool else []
        lines.append(f"**{rule}** ({RULE_LABELS[rule]})")
        lines.append("")
        for r in picks:
            lines.append(f"- original: {r['original']}")
            lines.append(f"  rewritten: {r['hypothesis']}")
        lines.append("")
    Path(args.card).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.candidates:
        with open(args.candidates, "w", encoding="utf-8") as fh:
            for rule in RULES:
                pool = sorted(by[rule]["held_back"], key=lambda r: (r["doc_id"], r["hypothesis"]))
                rng.shuffle(pool)
                for r in pool[: args.per_rule]:
                    fh.write(json.dumps({k: r[k] for k in ("premise", "hypothesis", "label", "rule", "original", "doc_id")},
                                        ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
