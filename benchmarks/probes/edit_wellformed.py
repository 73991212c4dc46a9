"""Do the detector's deleting edits leave sentences? Counted on WiCE and the contrast suite.

Edits should never break a sentence. A deleting edit (an ``unverifiable``, ``invented``,
``contradictory`` or ``subjective`` span) leaves a sentence when the range it removes is a whole sentence
of the passage or one of that sentence's optional constituents (:func:`veridic.detect._localise.deletable_phrases`:
modifiers, adjuncts, conjuncts with their coordinator, appositions, relative clauses). This script runs the
detector (phrase mode by default) and counts, over every deleting span, how often

* ``span``: removing the marked span itself would leave a sentence (what the edit did before ``edit_range``), and
* ``edit``: removing the range the edit actually removes (``edit_range`` when set) leaves a sentence.

The parse-based check is the same one that defines deletable phrases, so it is a consistency check of the
edits against the parser, not a human grammaticality judgement; the script also prints examples of each
kind for reading.

    python benchmarks/probes/edit_wellformed.py --split dev --out runs/s11/edit_wellformed_dev.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _well_formed(pdoc: Any, a: int, b: int) -> bool:
    """Is passage range [a, b) a whole sentence (or run of sentences) or an optional constituent of one?"""
    from veridic.detect._localise import deletable_phrases

    sents = list(pdoc.sents)
    starts = {s.start_char for s in sents}
    ends = {s.end_char for s in sents} | {len(pdoc.text.rstrip())}
    if a in starts and (b in ends or pdoc.text[b:].strip() == ""):
        return True
    for s in sents:
        if s.start_char <= a and b <= s.end_char:
            return any((s.doc[x:y].start_char, s.doc[x:y].end_char) == (a, b) for x, y in deletable_phrases(s))
    return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="dev", help="WiCE split (dev or test).")
    ap.add_argument("--wice", type=Path, default=Path("../shared/data/spans/wice_non_supported_tokens"))
    ap.add_argument("--sentence-mode", action="store_true", help="Judge the detector without phrase spans.")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()

    from veridic.detect._benchmark import load_contrast_suite, load_wice_spans
    from veridic.detect._taxonomy import TAXONOMY
    from veridic.detect.cli import build_detector
    from veridic.io._atomic import atomic_write_text

    det = build_detector(phrase_spans=not a.sentence_mode)
    rows = load_wice_spans(a.wice / f"{a.split}.jsonl")
    suite = load_contrast_suite(None)
    sets = {
        f"wice_{a.split}": ([r["claim"] for r in rows], ["\n".join(r["evidence"]) for r in rows]),
        "suite": ([e.passage for e in suite], [e.evidence for e in suite]),
    }
    report: dict[str, Any] = {"detector": det.describe(), "sets": {}}
    for name, (passages, evidences) in sets.items():
        results = det.detect_many(passages=passages, evidences=evidences, progress=True)
        pdocs = list(det.nlp.pipe(passages))
        n = span_ok = edit_ok = 0
        broken_before, broken_after = [], []
        for p, doc, r in zip(passages, pdocs, results):
            for s in r.spans:
                if TAXONOMY[s.type].edit != "delete":
                    continue
                n += 1
                ea, eb = s.edit_range if s.edit_range is not None else (s.start, s.end)
                ok_span, ok_edit = _well_formed(doc, s.start, s.end), _well_formed(doc, ea, eb)
                span_ok += ok_span
                edit_ok += ok_edit
                if not ok_span and len(broken_before) < 8:
                    broken_before.append({"passage": p, "span": s.text, "edited": r.edited})
                if not ok_edit and len(broken_after) < 8:
                    broken_after.append({"passage": p, "span": s.text, "removed": p[ea:eb], "edited": r.edited})
        report["sets"][name] = {
            "deleting_spans": n,
            "span_alone_leaves_a_sentence": span_ok, "span_alone_share": span_ok / n if n else None,
            "edit_leaves_a_sentence": edit_ok, "edit_share": edit_ok / n if n else None,
            "examples_span_alone_broken": broken_before, "examples_edit_broken": broken_after,
        }
        print(name, json.dumps({k: v for k, v in report["sets"][name].items() if not k.startswith("examples")}), flush=True)
    atomic_write_text(a.out, json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
