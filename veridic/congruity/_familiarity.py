"""Which entities count as *familiar* (paper 000, §3), and proxies where the paper's signal is missing.

* :func:`summary_familiar`, the paper's heuristic (after Siddharthan et al.,
  2011): an entity is familiar when it appears in the article's summary and
  *every* mention there carries no description (no appositive ``Name ,
  the …``/``Name , who``, no parenthesis, no lower-case pre-modifier such
  as ``poet Name``). Mentions match on full, first or last name. A
  regular-expression approximation of the paper's parser-based extraction.
* PoMo ships no summaries, so two documented proxies:
  ``claims``: the entity has at least ``threshold`` Wikidata claims in
  PoMo's dump (better-known people have richer entries);
  ``recurrence``: the entity is described in at least ``threshold`` PoMo
  rows of the split (news keeps coming back to well-known people).
  The default threshold is the median over the examples, so the split
  is close to half/half; it is recorded in the report.
* ``column``: a user-supplied ``familiar`` value on each example/item.

>>> summary_familiar(entity="Barack Obama", summary="Obama met the pope on Tuesday.")
True
>>> summary_familiar(entity="Jane Roe", summary="Roe , a nurse from Ohio , won.")
False
>>> summary_familiar(entity="Jane Roe", summary="Someone else won.")
False
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from typing import Literal

from veridic.errors import ConfigError, InputError
from veridic.ling.lexical import _STOP

__all__ = ["FAMILIARITY_METHODS", "assign_familiarity", "summary_familiar"]

FamiliarityMethod = Literal["summary", "claims", "recurrence", "column"]
FAMILIARITY_METHODS = ("summary", "claims", "recurrence", "column")
_TITLES = {"mr", "mrs", "ms", "dr", "sir", "lord", "lady", "prof", "president", "senator", "sen", "rep", "gov", "judge", "king", "queen", "pope", "st"}


def _mentions(entity: str, summary: str) -> list[re.Match]:
    parts = [p for p in re.findall(r"[\w'.-]+", entity) if len(p) > 1 and not p.endswith(".")]
    names = [entity] + ([parts[0], parts[-1]] if len(parts) > 1 else [])
    pattern = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    return list(re.finditer(rf"\b(?:{pattern})\b", summary)) if pattern else []


def summary_familiar(*, entity: str, summary: str) -> bool:
    """The paper's heuristic on one article summary (see the module docstring)."""
    if not entity.strip():
        raise InputError("entity must be non-empty text.")
    found = _mentions(entity, summary or "")
    if not found:
        return False
    for m in found:
        after = summary[m.end() :].lstrip()
        described = after.startswith("(") or re.match(r",\s*(?:the|a|an|who|whose|which|[a-z][\w-]*\s+of|\d+\b|[a-z][\w-]*)\b", after)
        # an appositive / relative clause / parenthesis is a description; a coordination or a verb is not
        if described and not re.match(r",\s*(?:and|but|or|said|says|was|is|had|has|he|she|they|who said)\b", after):
            return False
        before = re.findall(r"[\w'-]+", summary[: m.start()])[-2:] if m.start() else []
        if before and before[-1].lower() in _TITLES:
            before = before[:-1]  # "senator Jane Roe" is title + name; "former senator Jane Roe" is not
        elif before:
            before = before[-1:]
        if before and before[-1][:1].islower() and before[-1].lower() not in _STOP and before[-1].lower() not in _TITLES and not before[-1].endswith(("ed", "ly")):
            return False  # a lower-case pre-modifier ("poet Jane Roe", "former senator Jane Roe")
    return True


def assign_familiarity(
    *,
    method: FamiliarityMethod,
    n_claims: Sequence[int | None] | None = None,
    n_mentions: Sequence[int | None] | None = None,
    column: Sequence[bool | None] | None = None,
    summaries: Sequence[tuple[str, str | None]] | None = None,
    threshold: float | None = None,
) -> tuple[list[bool | None], float | None]:
    """Familiarity of each item by ``method``; returns (labels, threshold used). ``None`` = unknown.

    >>> assign_familiarity(method="claims", n_claims=[3, 10, 30, 50])
    ([False, False, True, True], 20.0)
    """
    if method not in FAMILIARITY_METHODS:
        raise ConfigError(f"familiarity method must be one of {FAMILIARITY_METHODS}; got {method!r}.")
    if method == "column":
        if column is None:
            raise InputError("familiarity 'column' needs a familiar value on each item (the 'familiar' field of the input rows).")
        return [None if c is None else bool(c) for c in column], None
    if method == "summary":
        if summaries is None:
            raise InputError("familiarity 'summary' needs (entity, summary) pairs; PoMo has no summaries, use 'claims' or 'recurrence'.")
        return [None if s is None else summary_familiar(entity=e, summary=s) for e, s in summaries], None
    counts = n_claims if method == "claims" else n_mentions
    if counts is None or all(c is None for c in counts):
        raise InputError(f"familiarity {method!r} needs per-item counts ({'n_claims' if method == 'claims' else 'n_mentions'} in the item meta).")
    known = [float(c) for c in counts if c is not None]
    thr = float(threshold) if threshold is not None else float(statistics.median(known))
    # ">= median" would put the median itself on the familiar side; "> median" keeps ties of a low count unfamiliar.
    return [None if c is None else (c > thr if threshold is None else c >= thr) for c in counts], thr
