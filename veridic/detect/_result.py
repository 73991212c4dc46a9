"""Typed results of hallucination detection.

Offsets are character offsets: a :class:`HallucinationSpan` indexes the
*passage* (``passage[s.start:s.end] == s.text``); its ``evidence`` span
indexes the *evidence text* the passage was checked against
(:attr:`DetectionResult.evidence`).

>>> s = HallucinationSpan(start=0, end=5, text="Paris", type="entity", confidence=0.9,
...                       evidence=None, suggestion="Rome")
>>> s.to_dict()["suggestion"]
'Rome'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from veridic.detect._taxonomy import ERROR_TYPES
from veridic.errors import InputError
from veridic.types import SentenceVerdict, Span

__all__ = ["HallucinationSpan", "DetectionResult"]


@dataclass(frozen=True, slots=True)
class HallucinationSpan:
    """One detected (or annotated) hallucination.

    ``type`` is a taxonomy type (:data:`veridic.detect._taxonomy.ERROR_TYPES`);
    ``confidence`` in [0, 1] (``None`` for spans parsed from tagged text);
    ``evidence`` is the evidence span the decision was judged against (or
    ``None`` when nothing in the evidence relates to it); ``suggestion`` is
    the replacement text for ``entity``/``relation`` errors (``""`` deletes the
    phrase, ``None`` means no fix is proposed; sentence-level types are
    deleted). ``reason`` names the rule that fired, for auditing.
    ``edit_range`` is the passage range a deleting edit removes when removing
    the span alone would leave broken text: the span marks the words the
    evidence lacks ("hosted"), the edit removes the smallest phrase or the
    sentence that holds them. ``None``: the edit acts on the span itself.
    """

    start: int
    end: int
    text: str
    type: str
    confidence: float | None
    evidence: Span | None
    suggestion: str | None
    reason: str | None = None
    edit_range: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.start < 0 or self.end <= self.start:
            raise InputError(f"A hallucination span needs 0 <= start < end; got start={self.start}, end={self.end}.")
        if self.edit_range is not None:
            a, b = self.edit_range
            if not (0 <= a <= self.start and self.end <= b):
                raise InputError(f"edit_range {self.edit_range} must contain the span [{self.start}, {self.end}); "
                                 "it is the wider range a deleting edit removes.")
        if self.type not in ERROR_TYPES:
            raise InputError(f"Unknown hallucination type {self.type!r}; expected one of {list(ERROR_TYPES)}.")
        if self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise InputError(f"confidence must lie in [0, 1]; got {self.confidence}.")

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "type": self.type,
            "confidence": self.confidence,
            "evidence": None if self.evidence is None else self.evidence.to_dict(),
            "suggestion": self.suggestion,
            "reason": self.reason,
            "edit_range": None if self.edit_range is None else list(self.edit_range),
        }


@dataclass(frozen=True, slots=True)
class DetectionResult:
    """Everything found in one passage.

    ``spans`` are sorted and non-overlapping; ``edited`` is the passage with
    every proposed edit applied; ``tagged`` is the FAVA tagged form (see
    :mod:`veridic.detect._tags`); ``sentences`` are the NLI verdicts of the
    passage's sentences (with their evidence windows); ``evidence`` is the
    evidence text all evidence offsets point into; ``retrieved`` lists the
    retrieved passages that evidence was assembled from (empty when the caller
    gave the evidence). ``judged`` is False for an explicit "cannot judge"
    (``note`` says why, e.g. evidence that is not English): no spans then
    means *not checked*, not *no error*. ``score`` is the judge's verdict on the whole passage, on its scorer's
    scale (``None`` when no judge ran).
    """

    passage: str
    spans: tuple[HallucinationSpan, ...]
    edited: str
    tagged: str
    sentences: tuple[SentenceVerdict, ...]
    evidence: str = ""
    retrieved: tuple[Any, ...] = field(default_factory=tuple)
    judged: bool = True
    note: str | None = None
    score: float | None = None

    @property
    def has_hallucination(self) -> bool:
        return bool(self.spans)

    def types(self) -> set[str]:
        return {s.type for s in self.spans}

    def to_dict(self) -> dict[str, Any]:
        return {
            "passage": self.passage,
            "spans": [s.to_dict() for s in self.spans],
            "edited": self.edited,
            "tagged": self.tagged,
            "sentences": [s.to_dict() for s in self.sentences],
            "retrieved": [r.to_dict() if hasattr(r, "to_dict") else r for r in self.retrieved],
            "judged": self.judged,
            "note": self.note,
            "score": self.score,
        }
