"""Apply detected hallucinations as edits: replace phrase errors, delete the rest.

FAVA's editing rule (paper 002, §3.1): ``entity`` and ``relation`` errors are
fixed by a minimal replacement taken from the evidence; ``contradictory``,
``invented``, ``subjective`` and ``unverifiable`` spans are removed. A phrase
error without a suggestion is flagged but left as it is: veridic never
invents a replacement the evidence does not hold.

>>> from veridic.detect._result import HallucinationSpan
>>> p = "Messi was born on June 12, 1987. He is the best player ever. He plays for Inter Miami."
>>> spans = [HallucinationSpan(start=23, end=25, text="12", type="entity", confidence=0.9, evidence=None, suggestion="24"),
...          HallucinationSpan(start=33, end=60, text="He is the best player ever.", type="subjective",
...                            confidence=0.8, evidence=None, suggestion=None)]
>>> apply_edits(passage=p, spans=spans)
'Messi was born on June 24, 1987. He plays for Inter Miami.'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from veridic.detect._localise import entailed
from veridic.detect._result import HallucinationSpan
from veridic.detect._taxonomy import TAXONOMY
from veridic.errors import InputError

__all__ = ["apply_edits", "validate_spans", "replacement", "edited_sentences", "withhold_unentailed_fixes"]


def validate_spans(*, passage: str, spans: Sequence[HallucinationSpan]) -> list[HallucinationSpan]:
    """Return ``spans`` sorted by offset; raise :class:`InputError` if one is out of range, mislabelled or overlapping."""
    out = sorted(spans, key=lambda s: (s.start, s.end))
    prev_end = 0
    for s in out:
        if s.end > len(passage):
            raise InputError(f"Span [{s.start}, {s.end}) runs past the end of the passage ({len(passage)} characters).")
        if passage[s.start : s.end] != s.text:
            raise InputError(f"Span [{s.start}, {s.end}) says {s.text!r} but the passage holds {passage[s.start:s.end]!r} there.")
        if s.edit_range is not None and s.edit_range[1] > len(passage):
            raise InputError(f"Span [{s.start}, {s.end}) has edit_range {s.edit_range}, past the end of the passage ({len(passage)} characters).")
        if s.start < prev_end:
            raise InputError(f"Spans overlap at [{s.start}, {s.end}); an edit needs non-overlapping spans.")
        prev_end = s.end
    return out


def replacement(span: HallucinationSpan) -> str:
    """The text a span becomes in the edited passage."""
    if TAXONOMY[span.type].edit == "delete":
        return ""
    return span.text if span.suggestion is None else span.suggestion


def _operations(spans: Sequence[HallucinationSpan]) -> list[tuple[int, int, str]]:
    """(start, end, new text) per edit, in order and disjoint. A deleting span with an ``edit_range`` removes that
    range; ranges that meet merge, and an edit inside a removed range goes with it (three marked words of one
    unsupported sentence remove the sentence once)."""
    ops: list[tuple[int, int, str]] = []
    for s in spans:
        new = replacement(s)
        a, b = s.edit_range if new == "" and s.edit_range is not None else (s.start, s.end)
        ops.append((a, b, new))
    ops.sort(key=lambda o: (o[0], -o[1]))
    out: list[tuple[int, int, str]] = []
    for a, b, new in ops:
        if out and a < out[-1][1]:
            # Overlap only arises with a removal range; the union is removed.
            out[-1] = (out[-1][0], max(out[-1][1], b), "")
            continue
        out.append((a, b, new))
    return out


def apply_edits(*, passage: str, spans: Sequence[HallucinationSpan]) -> str:
    """The passage with every span's edit applied (see the module docstring)."""
    out: list[str] = []
    pos = 0
    for start, end, new in _operations(validate_spans(passage=passage, spans=spans)):
        if new == "":
            # A removed span must not leave a double space or a space before
            # punctuation: eat the whitespace after it, or before it at the end.
            after = end
            while after < len(passage) and passage[after] in " \t":
                after += 1
            if after > end and (start == 0 or passage[start - 1].isspace()):
                end = after
            elif (after == len(passage) or passage[after] in ".,;:!?\n") and start > pos:
                while start > pos and passage[start - 1] in " \t":
                    start -= 1
        out.append(passage[pos:start])
        out.append(new)
        pos = end
    out.append(passage[pos:])
    edited = "".join(out)
    # Deleting the last sentences must not leave whitespace the passage did not end with.
    if passage[-1:] not in (" ", "\t"):
        edited = edited.rstrip(" \t")
    if passage[:1] not in (" ", "\t"):
        edited = edited.lstrip(" \t")
    return edited


def edited_sentences(*, passage: str, doc: Any, spans: Sequence[HallucinationSpan]) -> list[tuple[tuple[int, int], str, list[HallucinationSpan]]]:
    """For each sentence of ``doc`` (the parsed ``passage``) that a replacement touches: its range, its text with every
    edit of the sentence applied (empty when they delete it all) and the replacing spans. What a reader of the edited
    passage sees of that sentence, for checking that a fix reads as true."""
    by_sentence: dict[tuple[int, int], list[HallucinationSpan]] = {}
    for sp in spans:
        sent = next((x for x in doc.sents if x.start_char <= sp.start < x.end_char), None)
        if sent is not None:
            by_sentence.setdefault((sent.start_char, sent.end_char), []).append(sp)
    out = []
    for (a, b), group in by_sentence.items():
        swaps = [sp for sp in group if replacement(sp) not in ("", sp.text)]
        if not swaps:
            continue
        inside = [replace(sp, start=sp.start - a, end=sp.end - a,
                          edit_range=None if sp.edit_range is None else (max(0, sp.edit_range[0] - a), min(b - a, sp.edit_range[1] - a)))
                  for sp in group if sp.end <= b]
        out.append(((a, b), apply_edits(passage=passage[a:b], spans=inside).strip(), swaps))
    return out



def withhold_unentailed_fixes(*, scorer: Any, passages: Sequence[str], docs: Sequence[Any], evidences: Sequence[str],
                              found: dict[int, list[HallucinationSpan]],
                              checked: dict[tuple[str, str], bool] | None = None) -> dict[int, list[HallucinationSpan]]:
    """``found`` (passage index -> spans) with the fix of every replacement whose edited sentence ``scorer`` does not
    entail taken away: the span stays marked, with no suggestion. No edit is better than a wrong one.

    Each sentence is judged as a reader of the edited passage sees it (every edit of that sentence applied).
    ``checked`` maps (evidence, edited sentence) to the verdict; sentences already in it are not scored again,
    and new verdicts are added, so a second pass over the same passages scores only what changed.
    """
    checked = {} if checked is None else checked
    jobs = [(i, edited, swaps) for i, spans in found.items()
            for _, edited, swaps in edited_sentences(passage=passages[i], doc=docs[i], spans=spans) if edited]
    todo = list(dict.fromkeys((evidences[i], edited) for i, edited, _ in jobs if (evidences[i], edited) not in checked))
    if todo:
        verdicts = scorer.score(sources=[ev for ev, _ in todo], claims=[claim for _, claim in todo])
        checked.update({key: entailed(v.e, v.n, v.c) for key, v in zip(todo, verdicts)})
    withheld = {(i, sp.start) for i, edited, swaps in jobs if not checked[(evidences[i], edited)] for sp in swaps}
    if not withheld:
        return found
    return {i: [replace(sp, suggestion=None, reason=f"{sp.reason or 'rule'}; fix withheld: the edited sentence is not entailed")
                if (i, sp.start) in withheld else sp for sp in spans] for i, spans in found.items()}
