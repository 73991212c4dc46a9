"""Build synthetic factual-ablation sets by point edits (paper 001, §3.2.1).

A *fact* is a number (``four``, ``12``) or a chronological value (a month,
a weekday, a year) that occurs in the target **and** in the grounding.
Editing it the same way in both (``four miners`` → ``two miners`` in g and
in y) gives g′ and y′ and two examples, (g, g′, c, y) and (g′, g, c, y′).
Rows whose target shares no such fact with its grounding are skipped and
counted, never silently dropped.

Rules that keep edits well-formed:

* whole-word matches only; every occurrence is edited, in g and in y alike;
  the capitalisation of each occurrence is kept (``Three`` → ``Four``);
* the new value never occurs in g or y already, so the edit is invertible;
* numbers move to a near value (±1–3, or the neighbouring number word) and
  months/weekdays to an adjacent one, so the sentence stays plausible;
* ``one`` (a pronoun as often as a number) and lower-case ``may`` (a verb)
  are not treated as facts.

The paper's other two criteria, that the fact is not common knowledge and
that changing it breaks no commonsense constraint, need a human: review the
output before you publish it.

>>> r = build_ablation_set(rows=[{"id": "m", "grounding": "Four miners were trapped in March.",
...     "context": "A mine collapsed.", "target": "The four miners were freed."}], seed=0)
>>> e = r.examples[0]
>>> e.ablated_grounding, r.examples[1].target
('Three miners were trapped in March.', 'The three miners were freed.')
>>> r.edits[0].kind, r.edits[0].old, r.edits[0].new
('numeric', 'four', 'three')
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veridic.ablation._data import AblationExample
from veridic.errors import ConfigError, DataFormatError, InputError

__all__ = ["EDIT_KINDS", "BuildResult", "Edit", "apply_edit", "build_ablation_set", "find_facts"]

EDIT_KINDS = ("numeric", "chronological")

_NUMBER_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
]  # fmt: skip
_TENS = ["thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_SKIP_WORDS = {"one"}

_WORD_RE = re.compile(r"\b(" + "|".join(_NUMBER_WORDS[2:] + ["zero"] + _TENS) + r")\b", re.IGNORECASE)
_MONTH_RE = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")  # case-sensitive: "may" is a verb
_DAY_RE = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")\b")
# An integer not part of a decimal, a thousands group, a version or a word.
_INT_RE = re.compile(r"(?<![\w.,/-])(\d{1,4})(?![\w]|[.,:/]\d)")


@dataclass(frozen=True)
class Edit:
    """One consistent edit: ``old`` → ``new`` at these character offsets of g and of y."""

    kind: str
    old: str
    new: str
    grounding_offsets: tuple[int, ...]
    target_offsets: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class BuildResult:
    """The examples (two per edit), the edits, and how many rows had nothing to edit."""

    examples: list[AblationExample]
    edits: list[Edit]
    n_items: int
    n_skipped: int
    skipped_ids: list[str] = field(default_factory=list)


def _is_year(s: str) -> bool:
    return len(s) == 4 and 1000 <= int(s) <= 2099


def find_facts(text: str, *, kinds: Sequence[str] = EDIT_KINDS) -> list[tuple[str, str]]:
    """``(kind, normalised value)`` of every editable fact in ``text``, in order of first appearance.

    >>> find_facts("Four miners, 12 days, 2019, in March; one may say so.")
    [('numeric', 'four'), ('numeric', '12'), ('chronological', '2019'), ('chronological', 'March')]
    """
    found: list[tuple[int, str, str]] = []
    if "numeric" in kinds:
        found += [(m.start(), "numeric", m.group(1).lower()) for m in _WORD_RE.finditer(text)]
        found += [(m.start(), "numeric", m.group(1)) for m in _INT_RE.finditer(text) if not _is_year(m.group(1))]
    if "chronological" in kinds:
        found += [(m.start(), "chronological", m.group(1)) for m in _INT_RE.finditer(text) if _is_year(m.group(1))]
        found += [(m.start(), "chronological", m.group(1)) for m in _MONTH_RE.finditer(text)]
        found += [(m.start(), "chronological", m.group(1)) for m in _DAY_RE.finditer(text)]
    out: list[tuple[str, str]] = []
    for _, kind, value in sorted(found):
        if (kind, value) not in out and value not in _SKIP_WORDS:
            out.append((kind, value))
    return out


def _pattern(value: str) -> re.Pattern[str]:
    if value.isdigit():
        return re.compile(r"(?<![\w.,/-])" + value + r"(?![\w]|[.,:/]\d)")
    flags = re.IGNORECASE if value.lower() in _NUMBER_WORDS + _TENS else 0
    return re.compile(r"\b" + re.escape(value) + r"\b", flags)


def _match_case(surface: str, new: str) -> str:
    if surface.isupper() and len(surface) > 1:
        return new.upper()
    if surface[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def apply_edit(text: str, *, old: str, new: str) -> tuple[str, tuple[int, ...]]:
    """Replace every whole-word occurrence of ``old`` by ``new`` (keeping case); return text and offsets in the *new* text.

    >>> apply_edit("Three cats; three dogs.", old="three", new="four")
    ('Four cats; four dogs.', (0, 11))
    """
    pieces: list[str] = []
    offsets: list[int] = []
    last = 0
    length = 0
    for m in _pattern(old).finditer(text):
        pieces.append(text[last : m.start()])
        length += m.start() - last
        rep = _match_case(m.group(0), new)
        offsets.append(length)
        pieces.append(rep)
        length += len(rep)
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces), tuple(offsets)


def _occurs(value: str, *texts: str) -> bool:
    return any(_pattern(value).search(t) for t in texts)


def _candidates(kind: str, value: str) -> list[str]:
    low = value.lower()
    if value.isdigit():
        n = int(value)
        # Years keep four digits; other numbers stay positive.
        return [str(n + s) for s in (1, -1, 2, -2, 3, -3) if n + s > 0 and (len(str(n + s)) == len(value) or not _is_year(value))]
    for table in (_NUMBER_WORDS, _TENS, _MONTHS, _WEEKDAYS):
        names = [t.lower() for t in table]
        if low in names:
            i = names.index(low)
            cyclic = table in (_MONTHS, _WEEKDAYS)
            out = []
            for s in (1, -1, 2, -2):
                j = (i + s) % len(table) if cyclic else i + s
                if 0 <= j < len(table) and table[j].lower() not in _SKIP_WORDS and table[j].lower() != "zero":
                    out.append(table[j] if cyclic else table[j].lower())
            return out
    return []


def _text(row: Mapping[str, Any], names: Sequence[str], *, i: int, required: bool = True) -> str:
    for n in names:
        if n in row and isinstance(row[n], str):
            return row[n]
    if not required:
        return ""
    raise DataFormatError(f"missing text column {names[0]!r} (or {', '.join(names[1:])}); the row has {sorted(row)}.", row=i)


def build_ablation_set(
    *,
    rows: Sequence[Mapping[str, Any]],
    kinds: Sequence[str] = EDIT_KINDS,
    max_per_item: int = 1,
    seed: int = 0,
) -> BuildResult:
    """Edit up to ``max_per_item`` shared facts per row (grounding/source, context, target); two examples per edit.

    Facts are taken in the order they appear in the target; the replacement
    is drawn from the near values by a generator seeded with ``seed`` and
    the row id, so the output does not depend on row order.
    """
    for k in kinds:
        if k not in EDIT_KINDS:
            raise ConfigError(f"Unknown edit kind {k!r}; expected {EDIT_KINDS}.")
    if max_per_item < 1:
        raise ConfigError(f"max_per_item must be >= 1; got {max_per_item}.")
    if not rows:
        raise InputError("build_ablation_set needs at least one row.")
    examples: list[AblationExample] = []
    edits: list[Edit] = []
    skipped: list[str] = []
    for i, row in enumerate(rows, start=1):
        g = _text(row, ("grounding", "source", "document"), i=i)
        y = _text(row, ("target", "claim", "summary"), i=i)
        c = _text(row, ("context",), i=i, required=False)
        rid = str(row.get("id", i))
        rng = np.random.default_rng([seed, zlib.crc32(rid.encode())])
        shared = [(k, v) for k, v in find_facts(y, kinds=kinds) if _occurs(v, g)]
        made = 0
        for kind, value in shared:
            if made >= max_per_item:
                break
            options = [n for n in _candidates(kind, value) if not _occurs(n, g, y)]
            if not options:
                continue
            new = options[int(rng.integers(0, len(options)))]
            g2, g_off = apply_edit(g, old=value, new=new)
            y2, y_off = apply_edit(y, old=value, new=new)
            if g2 == g or y2 == y:
                continue
            edit = Edit(kind=kind, old=value, new=new, grounding_offsets=g_off, target_offsets=y_off)
            base = AblationExample(grounding=g, ablated_grounding=g2, context=c, target=y, id=f"{rid}:e{made}:orig", group=f"{rid}:e{made}")
            examples += [base, base.swap(target=y2, id=f"{rid}:e{made}:edit")]
            edits.append(edit)
            made += 1
        if not made:
            skipped.append(rid)
    return BuildResult(examples=examples, edits=edits, n_items=len(rows), n_skipped=len(skipped), skipped_ids=skipped)
