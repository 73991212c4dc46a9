"""Subjective-language detection with a weighted opinion lexicon.

FAVA's ``subjective`` type (paper 002, Table 13) is "an entire sentence or
phrase that is subjective and cannot be verified". The cues are lexical and
shallow, so a transparent lexicon does well and every decision can be
explained by the cue spans it returns:

* first-person opinion ("I think", "I wish", "in my opinion") — weight 1;
* evaluative words ("masterpiece", "amazing", "best", "overrated") — weight 1;
* a superlative with universal scope ("the most gifted player in the world",
  "of all time") — weight 0.5, since "the largest city in the world" is a
  measurable fact;
* weak cues that are usually verifiable reputation ("famous", "popular",
  "renowned") or intensifiers ("truly") — weight 0.3 each, never enough alone.

A sentence is subjective when the weights sum to ``threshold`` (1.0) or more.
Award names ("Best Actor") and compounds such as "best-selling" are not
opinions and are skipped.

>>> lex = LexiconSubjectivity()
>>> lex.score("Lionel Messi is the best soccer player in the world.").subjective
True
>>> lex.score("Messi is known for his famous airplane kick technique.").subjective
False
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from veridic.types import Span

__all__ = ["SubjectivityResult", "SubjectivityClassifier", "LexiconSubjectivity", "STRONG_CUES", "WEAK_CUES"]

STRONG_CUES = frozenset(
    """best worst greatest finest amazing awesome wonderful incredible fantastic terrible horrible awful brilliant
    masterpiece masterpieces stunning breathtaking magnificent superb outstanding exceptional extraordinary
    phenomenal spectacular marvelous marvellous gorgeous beautiful ugly boring dull exciting thrilling delightful
    disappointing overrated underrated unforgettable flawless unparalleled unmatched unrivaled unrivalled
    legendary iconic genius perfect perfectly lovely adorable charming dreadful pathetic ridiculous stupid silly
    fabulous excellent impressive inspiring inspirational captivating mesmerizing sublime glorious heroic
    shameful disgraceful nicest coolest favorite favourite must-see must-read""".split()
)
WEAK_CUES = frozenset(
    """famous popular renowned well-known celebrated acclaimed beloved notable remarkable important significant
    truly really very extremely incredibly undoubtedly clearly arguably certainly surely definitely highly
    successful influential""".split()
)
_OPINION = re.compile(
    r"\b(i|we)\s+(think|believe|feel|wish|hope|love|hate|like|prefer|guess|suppose|consider|find)\b"
    r"|\bin\s+(my|our)\s+(opinion|view)\b|\bpersonally\b|\bto\s+me\b|\bit\s+is\s+(a\s+)?(shame|pity)\b"
    r"|\b(should|ought\s+to)\s+be\s+(considered|regarded|seen)\b",
    re.IGNORECASE,
)
_UNIVERSAL = re.compile(r"\b(in\s+the\s+(world|history|universe)|of\s+all\s+time|ever\s+(made|written|recorded))\b", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*")


@dataclass(frozen=True, slots=True)
class SubjectivityResult:
    """``score`` is the summed cue weight; ``cues`` locate the cue words in the text."""

    score: float
    subjective: bool
    cues: tuple[Span, ...]


@runtime_checkable
class SubjectivityClassifier(Protocol):
    """Anything that scores a sentence's subjectivity (a lexicon, a trained classifier...)."""

    def score(self, text: str) -> SubjectivityResult: ...


class LexiconSubjectivity:
    """The weighted lexicon described in the module docstring."""

    def __init__(self, *, threshold: float = 1.0, strong: frozenset[str] = STRONG_CUES, weak: frozenset[str] = WEAK_CUES,
                 weak_weight: float = 0.3):
        self.threshold = threshold
        self.strong = strong
        self.weak = weak
        self.weak_weight = weak_weight

    def score(self, text: str) -> SubjectivityResult:
        cues: list[Span] = []
        total = 0.0
        taken: set[int] = set()
        for pat, weight in ((_OPINION, 1.0), (_UNIVERSAL, 0.5)):
            for m in pat.finditer(text):
                cues.append(Span(start=m.start(), end=m.end(), text=m.group(0), label="strong" if weight >= 1 else "scope", score=weight))
                taken.update(range(m.start(), m.end()))
                total += weight
        for m in _TOKEN.finditer(text):
            if m.start() in taken:
                continue
            w = m.group(0)
            low = w.lower()
            nxt = text[m.end() : m.end() + 1]
            if low in self.strong:
                # "Best Actor", "best-selling": part of a name or a factual compound.
                if (w[0].isupper() and m.start() > 0 and not text[: m.start()].rstrip().endswith((".", "!", "?"))) or nxt == "-":
                    continue
                cues.append(Span(start=m.start(), end=m.end(), text=w, label="strong", score=1.0))
                total += 1.0
            elif low in self.weak:
                cues.append(Span(start=m.start(), end=m.end(), text=w, label="weak", score=self.weak_weight))
                total += self.weak_weight
        cues.sort(key=lambda s: s.start)
        return SubjectivityResult(score=round(total, 6), subjective=total >= self.threshold, cues=tuple(cues))
