"""The minimal-edit span corpus (scripts/build_edit_corpus.py): which NLI pairs count as an edit, and what is marked."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from build_edit_corpus import build, edit_spans  # noqa: E402


def test_a_replaced_word_is_the_span_and_adjacent_edits_merge():
    edited = "A man is wearing a dark green shirt"
    (span,) = edit_spans("A man is wearing a blue shirt", edited)
    assert edited[span[0]:span[1]] == "dark green"
    added = "The man is working on a house for himself."
    (span,) = edit_spans("The man is working on a house.", added)
    assert added[span[0]:span[1]] == "for himself"


def test_no_edit_a_deletion_only_and_a_rewrite_are_not_minimal_edits():
    assert edit_spans("A dog runs.", "a dog runs.") is None                       # case only: nothing changed
    assert edit_spans("A dog runs in the park.", "A dog runs.") is None           # only deletes: nothing to mark
    assert edit_spans("A dog runs in the park.", "Two cats sleep on a sofa.") is None  # a new sentence, not an edit


def _nli(path: Path, rows: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def test_build_pairs_an_edit_with_its_entailed_original_on_the_same_premise(tmp_path):
    p = "A woman in a red coat is walking a brown dog through the park."
    _nli(tmp_path / "snli.jsonl.gz", [
        {"premise": p, "hypothesis": "A woman is walking a dog.", "label": "entailment"},
        {"premise": p, "hypothesis": "A woman is walking a cat.", "label": "contradiction"},
        {"premise": p, "hypothesis": "A woman is walking a dog to the vet.", "label": "neutral"},
        {"premise": p, "hypothesis": "Nobody is outside.", "label": "contradiction"},   # no original it edits
        {"premise": "Another premise.", "hypothesis": "A woman is walking a cat.", "label": "contradiction"},
    ])
    rows, kinds = build(tmp_path, max_pairs=100, seed=0, sets=("snli",))
    assert kinds == {"snli": 2}
    originals = [r for r in rows if r["label"] == 1]
    edits = {r["claim"]: [s["text"] for s in r["spans"]] for r in rows if r["label"] == 0}
    assert [r["claim"] for r in originals] == ["A woman is walking a dog."]   # listed once for its two edits
    assert originals[0]["spans"] == []
    assert edits == {"A woman is walking a cat.": ["cat"], "A woman is walking a dog to the vet.": ["to the vet"]}
    assert {r["dataset"] for r in rows} == {"synthetic"}   # never taken for the human rows the thresholds are fitted on
    for r in rows:
        for s in r["spans"]:
            assert r["claim"][s["start"]:s["end"]] == s["text"]
