"""A sentence-pair dev set for the hybrid's combiner, from NLI pairs no model of ours was trained on.

Why: the eight dev sets are summaries, dialogues and claims, where word overlap with the source is a strong
signal; the sealed TRUE suite also holds PAWS (word-order paraphrases), where overlap says nothing and only
the NLI model can decide. A combiner fitted on the eight sets alone learns to lean on overlap. This set adds a
fourth task ("pairs") so leave-one-task-out shows what the combination does where overlap is uninformative.

Rows come from the tier-A held-back slice (``veridic.train._data.is_held_out`` at the 2 % every NLI config
uses): no stage of the embedded model trained on them. Labels are 2-way: 1 = entailment (faithful), 0 =
neutral / contradiction / not_entailment. The sample is seeded and stratified by set.

Usage:
    python benchmarks/make_pair_dev.py --out runs/eval/pairs_dev.jsonl [--per-set 60] [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

from veridic.io._atomic import atomic_write_text
from veridic.train._data import LABEL_IDS, is_held_out, read_nli_file

#: sentence-pair NLI sets (short premises); long-document sets would duplicate the summarization task.
SETS = ("mnli", "lingnli", "snli", "anli", "rte", "rte_pascal", "xnli_en", "sick", "cad_snli", "scitail", "semiauto_nli",
        "negation_nli", "taxinli")
HELD_OUT_FRACTION = 0.02  # the same slice as configs/nli-minilm*.yaml
#: semiauto_nli's subsets that quote LDC Gigaword, excluded as in every config
EXCLUDED_SUBSETS = {"base_news", "sim_news"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data/nli"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-set", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for name in SETS:
        path = args.data / f"{name}.jsonl.gz"
        if not path.is_file():
            raise SystemExit(f"error: {path} is missing; pass --data with the folder of NLI sets (../shared/data/nli).")
        # the trainer's own reader (validated rows, label ids) and its hash split
        held = [r for r in read_nli_file(path) if r.get("subset") not in EXCLUDED_SUBSETS
                and is_held_out(r["premise"], r["hypothesis"], fraction=HELD_OUT_FRACTION)]
        rng = random.Random(f"{args.seed}:{name}")
        rng.shuffle(held)
        for r in held[: args.per_set]:
            rid = hashlib.sha1(f"{r['premise']}\x1f{r['hypothesis']}".encode()).hexdigest()[:12]
            rows.append({"id": rid, "dataset": "nli_pairs_heldout", "task": "pairs", "source": r["premise"],
                         "claim": r["hypothesis"], "label": int(r["label_id"] == LABEL_IDS["entailment"]), "nli_set": name})
    atomic_write_text(args.out, "".join(json.dumps(r) + "\n" for r in rows))
    pos = sum(r["label"] for r in rows)
    print(f"wrote {len(rows)} pairs ({pos} entailed) from {len(SETS)} sets to {args.out}")


if __name__ == "__main__":
    main()
