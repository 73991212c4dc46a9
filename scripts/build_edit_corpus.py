"""Build a span corpus from human minimal edits in the NLI data: a hypothesis the premise entails, and an edit of
it (a few words changed) that the premise does not entail, the changed words marked as the unsupported span.

Why: every earlier tagger corpus inserted its errors by veridic's own rules (`veridic synth`), and the human span sets
the tagger is judged on (BUMP above all) mark the words a person changed in a faithful summary. NLI sets hold many
such edits written by people (counterfactual revisions, crowd-written contradictions that reuse the entailed
hypothesis' words), each beside its faithful original: the same words with a different meaning, and the words that
carry the difference. Both halves of a pair go into the corpus (the original with no span), so the tagger sees the
contrast, not only the error.

Rules, fixed in docs/preregistration/span-tagger.md (eighth recipe):
- sets: tier A and B of shared/data/nli (MANIFEST.md, MANIFEST-2.md), minus the table sets (``infotabs``,
  ``tabfact``), the sets with no 3-way premise-hypothesis text of their own (``qnli``) and semiauto_nli's Gigaword
  subsets; tier C (recast, templated, automatic) is left out;
- a pair: the same premise; one hypothesis labelled entailment, one labelled neutral, contradiction or
  not_entailment; at word level (lower-cased) the edit changes between 1 word and 30 % of the edited hypothesis'
  words, their similarity (difflib ratio) is at least 0.7, and it inserts or replaces at least one word (an edit that
  only deletes words leaves nothing to mark). The first entailed hypothesis in file order that qualifies is the
  partner;
- neither hypothesis may be in the NLI held-back slice (``is_held_out`` at 2 %, the slice every NLI model holds back);
- the span: the edited hypothesis' inserted and replaced words, adjacent ones merged, as character offsets;
- a seeded shuffle of all pairs, cut at ``--max-pairs``; each original is listed once however many edits it has.

Usage:
    python scripts/build_edit_corpus.py --out ~/.cache/veridic/train/span-tagger-v8/edit-spans.jsonl.gz \
        [--data ../shared/data/nli] [--max-pairs 11000] [--seed 0]
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import hashlib
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from veridic.errors import InputError
from veridic.io._atomic import atomic_write_bytes, check_output_path
from veridic.train._data import is_held_out, read_nli_file

SETS = ("mnli", "snli", "anli", "xnli_en", "sick", "rte", "rte_pascal", "cad_snli", "taxinli", "scitail",
        "commitment_bank", "mpe", "control", "negation_nli", "nope", "ambient", "climate_fever", "healthver", "scifact",
        "nli4ct", "conjnli", "joci_snli", "lingnli", "semiauto_nli",
        "add_one_rte", "fracas", "med", "monli", "breaking_nli", "nan_nli", "folio", "covidfact", "fnc1", "averitec",
        "wanli_sample", "politihop")
EXCLUDED_SUBSETS = {"base_news", "sim_news"}  # semiauto_nli's Gigaword text, excluded as in every NLI config
HELD_OUT_FRACTION = 0.02
_WORD = re.compile(r"\w+|[^\w\s]")


def words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


def edit_spans(original: str, edited: str, *, max_share: float = 0.3, min_ratio: float = 0.7) -> list[tuple[int, int]] | None:
    """Character spans of ``edited`` that replace or insert words of ``original``; None when the two are no minimal edit.

    >>> edit_spans("A man is wearing a blue shirt", "A man is wearing a black shirt")
    [(19, 24)]
    >>> edit_spans("A dog runs.", "A dog runs.") is None   # nothing changed
    True
    """
    a, b = words(original), words(edited)
    sm = difflib.SequenceMatcher(a=[w.lower() for w, _, _ in a], b=[w.lower() for w, _, _ in b], autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    if not ops or changed > max(1, max_share * len(b)) or sm.ratio() < min_ratio:
        return None
    spans: list[tuple[int, int]] = []
    for op, _, _, j1, j2 in ops:
        if op in ("replace", "insert") and j2 > j1:
            s, e = b[j1][1], b[j2 - 1][2]
            if spans and not edited[spans[-1][1]:s].strip():
                spans[-1] = (spans[-1][0], e)  # adjacent edits: one span
            else:
                spans.append((s, e))
    return spans or None


def _rid(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:12]


def build(data: Path, *, max_pairs: int, seed: int, sets: tuple[str, ...] = SETS) -> tuple[list[dict], Counter]:
    """The corpus rows (originals once, then their edits) and the number of edits per set."""
    pairs = []
    for name in sets:
        path = data / f"{name}.jsonl.gz"
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing; pass --data with the folder of NLI sets (../shared/data/nli).")
        by_premise: dict[str, list[dict]] = defaultdict(list)
        for r in read_nli_file(path):  # the trainer's reader: a malformed row is an error, not a skip
            if r.get("subset") in EXCLUDED_SUBSETS or is_held_out(r["premise"], r["hypothesis"], fraction=HELD_OUT_FRACTION):
                continue
            by_premise[r["premise"]].append(r)
        for premise, rows in by_premise.items():
            ents = [r["hypothesis"] for r in rows if r["label"] == "entailment"]
            for r in rows:
                if r["label"] not in ("neutral", "contradiction", "not_entailment"):
                    continue
                for h in ents:
                    spans = edit_spans(h, r["hypothesis"])
                    if spans:
                        pairs.append((name, premise, h, r["hypothesis"], r["label"], spans))
                        break
    random.Random(seed).shuffle(pairs)
    pairs = pairs[:max_pairs]
    out, seen, kinds = [], set(), Counter()
    for name, premise, h, edited, label, spans in pairs:
        if (premise, h) not in seen:
            seen.add((premise, h))
            out.append({"id": "edit-" + _rid(premise, h), "dataset": "synthetic", "task": "claim", "source": premise,
                        "context": None, "claim": h, "label": 1, "spans": [], "split": "train",
                        "meta": {"kind": "edit_original", "nli_set": name}})
        kind = "edit_contradiction" if label == "contradiction" else "edit_unsupported"
        kinds[name] += 1
        out.append({"id": "edit-" + _rid(premise, edited), "dataset": "synthetic", "task": "claim", "source": premise,
                    "context": None, "claim": edited, "label": 0,
                    "spans": [{"start": s, "end": e, "text": edited[s:e], "type": kind} for s, e in spans],
                    "split": "train", "meta": {"kind": kind, "nli_set": name}})
    return out, kinds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/nli"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--max-pairs", type=int, default=11000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    try:
        check_output_path(args.out, what="corpus")  # before the build, not after it
    except InputError as exc:
        raise SystemExit(f"error: {exc}") from None
    rows, kinds = build(args.data, max_pairs=args.max_pairs, seed=args.seed)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    atomic_write_bytes(args.out, gzip.compress(text))  # a killed build leaves no half corpus behind
    digest = hashlib.sha256(text).hexdigest()[:16]
    edited = sum(1 for r in rows if r["label"] == 0)
    print(f"wrote {len(rows)} rows ({edited} edited, {len(rows) - edited} originals), content {digest}, to {args.out}",
          file=sys.stderr)
    print("edits per set: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()), file=sys.stderr)


if __name__ == "__main__":
    main()
