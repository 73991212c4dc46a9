"""Typed inputs and results shared by every veridic capability.

All offsets are character offsets into the original Python string
(``text[span.start:span.end] == span.text``).

>>> from veridic.types import Span
>>> s = Span(start=4, end=9, text="quick")
>>> "The quick fox"[s.start:s.end] == s.text
True
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from veridic.errors import InputError

__all__ = ["Span", "Pair", "Scorer", "StructureConflict", "SentenceVerdict", "Verdict", "Label", "is_blank", "normalise_context"]

Label = Literal["supported", "unsupported", "abstain"]


class _Record:
    """Base of a result dataclass whose ``to_dict`` is its fields by name (:func:`dataclasses.asdict`)."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a text located by character offsets ``[start, end)``."""

    start: int
    end: int
    text: str
    label: str | None = None
    score: float | None = None

    def __post_init__(self) -> None:
        if self.start < 0 or self.end < self.start:
            raise InputError(f"Span offsets must satisfy 0 <= start <= end; got start={self.start}, end={self.end}.")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


# Characters that render as nothing although Unicode files them as letters or symbols (Hangul fillers, the
# blank Braille pattern) or as marks with no base to sit on (the combining grapheme joiner, variation selectors).
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0") | frozenset(map(chr, range(0x180B, 0x1810))) \
    | frozenset(map(chr, range(0xFE00, 0xFE10))) | frozenset(map(chr, range(0xE0100, 0xE01F0)))


def is_blank(text: str) -> bool:
    """True when ``text`` has nothing to check: no letter, digit or symbol that shows.

    Whitespace, control and format characters (zero-width space U+200B,
    joiners, BOM, soft hyphen), combining marks without a base, variation
    selectors, fillers (U+3164, U+2800) and punctuation alone say nothing a
    source could support or contradict, so a claim made of them is as empty
    as ``""`` and must not be scored (a model calls ``...`` against ``...``
    entailed).

    >>> is_blank("\u200b\u200d\ufeff "), is_blank("a\u200b"), is_blank("..."), is_blank("\ufe0f\u3164"), is_blank("42")
    (True, False, True, True, False)
    """
    if not text.strip():
        return True
    return not any(unicodedata.category(ch)[0] in "LNS" and ch not in _INVISIBLE for ch in text)


def normalise_context(context: str | Sequence[str] | None) -> str | None:
    """Turn a dialogue history (list of turns) or a string into one string, or None."""
    if context is None:
        return None
    if isinstance(context, float) and math.isnan(context):
        return None
    if isinstance(context, str):
        return context.strip() or None
    if isinstance(context, Sequence):
        turns = []
        for t in context:
            if not isinstance(t, str):
                raise InputError(f"A dialogue context must be a string or a list of strings; got a list holding {type(t).__name__}.")
            if t.strip():
                turns.append(t.strip())
        return "\n".join(turns) or None
    raise InputError(f"A context must be a string, a list of strings or None; got {type(context).__name__}.")


@dataclass(frozen=True, slots=True)
class Pair:
    """One thing to check: a ``claim`` against its grounding ``source``.

    ``context`` is optional conversation history (dialogue) that the claim
    responds to; it is not evidence, but helps resolve references.
    """

    source: str
    claim: str
    context: str | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        for name in ("source", "claim"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise InputError(f"Pair.{name} must be a string; got {type(value).__name__} ({value!r:.60}).")
            if is_blank(value):
                raise InputError(f"Pair.{name} is empty (or only punctuation or invisible characters); veridic cannot judge an empty {name}. Remove the pair or fill it in.")


@dataclass(frozen=True, slots=True)
class StructureConflict(_Record):
    """Two arguments in exchanged roles (``kind`` "swap") or a reversed predicate ("reversal") in a claim sentence.

    ``start``/``end`` locate ``text`` in the claim; ``suggestion`` is the evidence's reading of it;
    ``evidence_start``/``evidence_end`` locate the evidence's word for it in the source.
    """

    start: int
    end: int
    text: str
    kind: str
    suggestion: str
    evidence_start: int
    evidence_end: int



@dataclass(frozen=True, slots=True)
class SentenceVerdict:
    """The verdict on one sentence of the claim.

    ``span`` locates the sentence in the claim; ``evidence`` locates the
    source window that supported (or contradicted) it best, in the source.
    ``conflict``: what the structure check found (offsets into the claim and
    the source), when it overrode the model; then e, n, c are 0, 0, 1.
    """

    span: Span
    score: float
    e: float
    n: float
    c: float
    uncertainty: float | None
    evidence: Span | None
    conflict: StructureConflict | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.span.start, "end": self.span.end, "text": self.span.text, "score": self.score,
                "e": self.e, "n": self.n, "c": self.c, "uncertainty": self.uncertainty,
                "evidence": None if self.evidence is None else self.evidence.to_dict(),
                "conflict": None if self.conflict is None else self.conflict.to_dict()}


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result of scoring one claim against one source.

    ``score`` follows ``method`` (``e``: entailment probability in [0, 1];
    ``e-c``: entailment minus contradiction in [-1, 1]); higher means more
    faithful. ``e``, ``n``, ``c`` are the aggregated class probabilities.
    ``uncertainty`` is the standard deviation of the score across
    Monte-Carlo dropout samples (None without MC dropout).
    """

    score: float
    label: Label
    e: float
    n: float
    c: float
    uncertainty: float | None
    method: str
    model: str
    sentences: tuple[SentenceVerdict, ...] = field(default_factory=tuple)
    evidence: tuple[Span, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.score, "label": self.label, "e": self.e, "n": self.n, "c": self.c, "uncertainty": self.uncertainty,
                "method": self.method, "model": self.model, "sentences": [s.to_dict() for s in self.sentences],
                "evidence": [s.to_dict() for s in self.evidence]}


@runtime_checkable
class Scorer(Protocol):
    """What the detector, AutoAIS, the service and the benchmark use from a scorer.

    ``config``: the :class:`veridic.config.ScorerConfig` it was built from (by
    :func:`veridic.factory.build_scorer`). ``granularity``: ``sentence`` when verdicts carry
    per-sentence results (the detector needs them), else ``document``. ``threshold``: where ``decide``
    splits the verdict-score scale. ``sentence_threshold``: the same on a sentence verdict's score
    (the NLI scale: e, or e−c). ``decide(score, uncertainty)``: the label a verdict with that score gets.
    """

    name: str
    config: Any
    granularity: str
    threshold: float
    sentence_threshold: float

    def score(self, *, sources: Sequence[str], claims: Sequence[str], contexts: Sequence[Any] | None = None, progress: bool = False) -> list[Verdict]: ...

    def decide(self, score: float, uncertainty: float | None = None) -> Label: ...

    def describe(self) -> dict[str, Any]: ...
