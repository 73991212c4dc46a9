"""Frame pairs: balanced minimal pairs for the structures real text rarely shows.

The parse-based rules in :mod:`veridic.synth._contrast` find role swaps, voice changes,
symmetric predicates and converses only where a corpus sentence happens to have the
right shape, which for the last three is rare (the 47k-document corpus gave 862 voice
changes, 82 symmetric swaps and 8 converses). A model trained on so few learns the
shortcut instead of the structure: "passive means entailed" was right for 73 % of the
voice pairs it saw, and it judged 96 % of the held-back voice changes entailed.

Frames fix the imbalance with *minimal pairs*: the same premise gets one faithful and
one meaning-changing hypothesis built from the same words, and every surface form
(argument swap, passive, converse verb) appears with both labels. Symmetric verbs
("met", "merged with") and asymmetric ones of the same shape ("interviewed", "broke
away from") share templates, so the only way to tell the labels apart is to know the
predicate and track who does what. Names come from NER over non-benchmark text; half
of the premises are embedded between real corpus sentences so the relevant sentence
has to be found. A seeded hash holds back whole predicates (not just rows), so the
held-back accuracy measures generalisation to verbs never trained on.

>>> pairs = generate_frame_pairs(names={"PERSON": ["Ana Silva", "Tom Reed"], "ORG": ["Acme Corp", "Delta Bank"],
...                                      "GPE": ["Portugal", "Spain"]}, n_premises=40, seed=1)
>>> sorted({p.label for p in pairs}) == ["entailment", "not_entailment"]
True
>>> all(p.rule in FRAME_RULES for p in pairs)
True
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import Any

from veridic.errors import InputError
from veridic.synth._contrast import ContrastPair
from veridic.synth._perturb import _stable_int

__all__ = ["FRAME_RULES", "FramePair", "generate_frame_pairs", "names_from_documents", "predicate_held_back"]

#: the contrast rules frames produce (same names and labels as :data:`veridic.synth._contrast.RULE_LABELS`)
FRAME_RULES = ("role_swap", "voice_role_change", "passive_keep_roles", "symmetric_swap", "converse",
               "relation_reversal", "clause_reorder", "entity_substitution", "compression")

_TIME = ["", "", " in 2006", " in March 2019", " on Tuesday", " last year", " in 1998", " on 4 May 2012",
         " earlier this month", " in the spring of 2015", " after months of talks", " in 2021"]

# ---------------------------------------------------------------- predicate tables
# Transitive, asymmetric: (past, participle, argument type). Both arguments share the type,
# so an argument swap stays plausible and only the roles tell the pair apart.
_ASYM_TRANSITIVE = [
    ("interviewed", "interviewed", "PERSON"), ("replaced", "replaced", "PERSON"), ("criticized", "criticized", "PERSON"),
    ("sued", "sued", "PERSON"), ("praised", "praised", "PERSON"), ("hired", "hired", "PERSON"),
    ("endorsed", "endorsed", "PERSON"), ("thanked", "thanked", "PERSON"), ("accused", "accused", "PERSON"),
    ("coached", "coached", "PERSON"), ("invited", "invited", "PERSON"), ("visited", "visited", "PERSON"),
    ("warned", "warned", "PERSON"), ("beat", "beaten", "PERSON"), ("nominated", "nominated", "PERSON"),
    ("fired", "fired", "PERSON"), ("mentored", "mentored", "PERSON"), ("interrupted", "interrupted", "PERSON"),
    ("challenged", "challenged", "PERSON"), ("blamed", "blamed", "PERSON"), ("pardoned", "pardoned", "PERSON"),
    ("defeated", "defeated", "PERSON"), ("succeeded", "succeeded", "PERSON"), ("introduced", "introduced", "PERSON"),
    ("acquired", "acquired", "ORG"), ("sued", "sued", "ORG"), ("outbid", "outbid", "ORG"),
    ("overtook", "overtaken", "ORG"), ("absorbed", "absorbed", "ORG"), ("bought", "bought", "ORG"),
    ("sponsored", "sponsored", "ORG"), ("funded", "funded", "ORG"), ("defeated", "defeated", "ORG"),
    ("eliminated", "eliminated", "ORG"), ("supplied", "supplied", "ORG"), ("audited", "audited", "ORG"),
    ("invaded", "invaded", "GPE"), ("annexed", "annexed", "GPE"), ("defeated", "defeated", "GPE"),
    ("sanctioned", "sanctioned", "GPE"), ("colonized", "colonized", "GPE"), ("attacked", "attacked", "GPE"),
    ("occupied", "occupied", "GPE"), ("recognized", "recognized", "GPE"), ("blockaded", "blockaded", "GPE"),
]
# Transitive, symmetric: exchanging the arguments keeps the meaning.
_SYM_TRANSITIVE = [
    ("met", "met", "PERSON"), ("married", "married", "PERSON"), ("divorced", "divorced", "PERSON"),
    ("befriended", "befriended", "PERSON"), ("hugged", "hugged", "PERSON"), ("dated", "dated", "PERSON"),
    ("resembled", "resembled", "PERSON"), ("faced", "faced", "ORG"), ("played", "played", "ORG"),
    ("bordered", "bordered", "GPE"),
]
# Prepositional frames "A <pred> B": symmetric ones ...
_SYM_PREP = [
    ("shook hands with", "PERSON"), ("spoke with", "PERSON"), ("collaborated with", "PERSON"),
    ("shared the prize with", "PERSON"), ("argued with", "PERSON"), ("corresponded with", "PERSON"),
    ("merged with", "ORG"), ("formed a joint venture with", "ORG"), ("drew 1-1 with", "ORG"),
    ("signed a partnership with", "ORG"), ("competed with", "ORG"), ("drew 2-2 with", "ORG"),
    ("signed a trade agreement with", "GPE"), ("shares a border with", "GPE"), ("is twinned with", "GPE"),
    ("established diplomatic relations with", "GPE"), ("held joint military exercises with", "GPE"),
]
# ... and asymmetric ones of the same shape.
_ASYM_PREP = [
    ("took over from", "PERSON"), ("received a letter from", "PERSON"), ("learned the trade from", "PERSON"),
    ("reports to", "PERSON"), ("filed a complaint against", "PERSON"), ("voted for", "PERSON"),
    ("borrowed money from", "PERSON"), ("inherited the estate from", "PERSON"), ("apologised to", "PERSON"),
    ("broke away from", "ORG"), ("filed a lawsuit against", "ORG"), ("won a contract from", "ORG"),
    ("is a subsidiary of", "ORG"), ("bought a stake in", "ORG"), ("withdrew its bid for", "ORG"),
    ("declared independence from", "GPE"), ("declared war on", "GPE"), ("imposes tariffs on", "GPE"),
    ("sends aid to", "GPE"), ("seceded from", "GPE"), ("depends on imports from", "GPE"),
]
# Converses, with an optional third argument X: forward template, the converse (same meaning),
# the argument types of A and B.
_CONVERSE3 = [
    ("{A} sold {X} to {B}", "{B} bought {X} from {A}", "ORG"),
    ("{A} gave {X} to {B}", "{B} received {X} from {A}", "PERSON"),
    ("{A} lent {M} to {B}", "{B} borrowed {M} from {A}", "ORG"),
    ("{A} exported {X} to {B}", "{B} imported {X} from {A}", "GPE"),
    ("{A} sent {X} to {B}", "{B} received {X} from {A}", "PERSON"),
    ("{A} leased {X} to {B}", "{B} leased {X} from {A}", "ORG"),
    ("{A} handed {X} to {B}", "{B} was handed {X} by {A}", "PERSON"),
    ("{A} paid {M} to {B}", "{B} was paid {M} by {A}", "ORG"),
    ("{A} transferred {X} to {B}", "{B} received {X} from {A}", "ORG"),
]
_CONVERSE2 = [
    ("{A} preceded {B} as {R}", "{B} succeeded {A} as {R}", "PERSON"),
    ("{A} defeated {B}", "{B} lost to {A}", "ORG"),
    ("{A} beat {B} in the final", "{B} lost the final to {A}", "PERSON"),
    ("{A} is older than {B}", "{B} is younger than {A}", "PERSON"),
    ("{A} lies north of {B}", "{B} lies south of {A}", "GPE"),
    ("{A} lies east of {B}", "{B} lies west of {A}", "GPE"),
    ("{A} is larger than {B}", "{B} is smaller than {A}", "GPE"),
    ("{A} is the parent company of {B}", "{B} is a subsidiary of {A}", "ORG"),
    ("{A} finished ahead of {B}", "{B} finished behind {A}", "ORG"),
    ("{A} owns {B}", "{B} is owned by {A}", "ORG"),
    ("{A} came before {B}", "{B} came after {A}", "PERSON"),
    ("{A} outranks {B}", "{B} is outranked by {A}", "PERSON"),
]
_OBJECTS = {
    "ORG": ["its logistics unit", "a 40% stake in the venture", "the rights to the film", "two cargo ships",
            "the headquarters building", "its mobile division", "$40 million", "the patent portfolio"],
    "PERSON": ["the painting", "a signed letter", "the family farm", "a vintage car", "the manuscript",
               "his medals", "her notes", "the keys"],
    "GPE": ["grain", "natural gas", "steel", "rice", "military equipment", "electricity", "timber", "wine"],
}
_MONEY = ["$40 million", "2 billion euros", "$750,000", "£12 million", "$3.5 billion", "900,000 francs"]
_ROLES = ["chairman", "chief executive", "party leader", "head coach", "mayor", "president of the club",
          "editor", "captain"]


#: frame pairs are contrast pairs: same fields, same corpus schema
FramePair = ContrastPair


def predicate_held_back(predicate: str, *, fraction: float, seed: int = 0) -> bool:
    """Whole predicates are held back, so held-back accuracy measures unseen verbs."""
    return (_stable_int(str(seed), "frame-held-back", predicate) % 10_000) < fraction * 10_000


_NAME_SHAPE = re.compile(r"[A-Z][\w.'&-]*(?: [A-Z][\w.'&-]*){0,3}")


def names_from_documents(*, nlp: Any, sentences: Sequence[str], batch_size: int = 256, n_process: int = 1,
                         min_per_type: int = 2) -> dict[str, list[str]]:
    """PERSON, ORG and GPE names found by ``nlp``'s NER, in first-seen order.

    Only clean capitalised mentions of at most four words are kept ("the Fed's" and
    "U.S.-based" would make ungrammatical frames).
    """
    out: dict[str, list[str]] = {"PERSON": [], "ORG": [], "GPE": []}
    seen: set[str] = set()
    for doc in nlp.pipe(sentences, batch_size=batch_size, n_process=n_process):
        for e in doc.ents:
            t = e.text.strip()
            if e.label_ in out and t not in seen and _NAME_SHAPE.fullmatch(t) and not t.endswith("'s"):
                seen.add(t)
                out[e.label_].append(t)
    for k, v in out.items():
        if len(v) < min_per_type:
            raise InputError(f"names_from_documents: found {len(v)} {k} names, need at least {min_per_type}; "
                             f"give more sentences")
    return out


def _two(rng: random.Random, pool: Sequence[str]) -> tuple[str, str]:
    a, b = rng.sample(list(pool), 2)
    return a, b


def _embed(rng: random.Random, sentence: str, context: Sequence[str]) -> str:
    """Half of the premises sit among real sentences, so the model must find the one that matters."""
    if not context or rng.random() < 0.5:
        return sentence
    before = [rng.choice(context) for _ in range(rng.randint(0, 2))]
    after = [rng.choice(context) for _ in range(rng.randint(0 if before else 1, 1))]
    return " ".join([*before, sentence, *after])


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def generate_frame_pairs(*, names: Mapping[str, Sequence[str]], n_premises: int, seed: int = 0,
                         context: Sequence[str] = (), held_back_fraction: float = 0.0,
                         split: str = "train") -> list[FramePair]:
    """``n_premises`` premises, each with one faithful and one meaning-changing hypothesis.

    ``split="train"`` uses only predicates outside the held-back slice; ``"held_back"``
    only those inside it (see :func:`predicate_held_back`). Deterministic given the seed.
    """
    if split not in {"train", "held_back"}:
        raise InputError(f"split must be 'train' or 'held_back', got {split!r}")
    for t in ("PERSON", "ORG", "GPE"):
        if len(names.get(t, ())) < 2:
            raise InputError(f"generate_frame_pairs needs at least two {t} names, got {len(names.get(t, ()))}")

    def keep(pred: str) -> bool:
        hb = predicate_held_back(pred, fraction=held_back_fraction, seed=seed)
        return hb if split == "held_back" else not hb

    families: list[tuple[str, Any]] = []
    families += [("asym_trans", p) for p in _ASYM_TRANSITIVE if keep(p[0])]
    families += [("sym_trans", p) for p in _SYM_TRANSITIVE if keep(p[0])]
    families += [("sym_prep", p) for p in _SYM_PREP if keep(p[0])]
    families += [("asym_prep", p) for p in _ASYM_PREP if keep(p[0])]
    families += [("conv3", p) for p in _CONVERSE3 if keep(p[0])]
    families += [("conv2", p) for p in _CONVERSE2 if keep(p[0])]
    if not families:
        return []
    rng = random.Random(_stable_int(str(seed), "frames", split))
    out: list[FramePair] = []
    for i in range(n_premises):
        fam, spec = families[i % len(families)] if i < len(families) else rng.choice(families)
        out.extend(_pairs_for(fam, spec, rng, names, context, doc_id=f"frame:{split}:{i}"))
    return out


def _pairs_for(fam: str, spec: Any, rng: random.Random, names: Mapping[str, Sequence[str]],
               context: Sequence[str], *, doc_id: str) -> list[FramePair]:
    """One premise and two hypotheses (one entailed, one not) for a predicate."""
    t = spec[-1]
    a, b = _two(rng, names[t])
    when = rng.choice(_TIME)
    cands: list[tuple[str, str, str]] = []  # (hypothesis, label, rule)
    if fam == "sym_trans":
        past, _part, _ = spec
        sent = f"{a} {past} {b}{when}."
        cands.append((f"{b} {past} {a}{when}.", "entailment", "symmetric_swap"))
        pred = past
    elif fam == "asym_trans":
        past, part, _ = spec
        active, passive = f"{a} {past} {b}{when}.", f"{b} was {part} by {a}{when}."
        # Every surface pairing (active→active, passive→passive, agentless passives) gets both
        # labels; otherwise "a passive hypothesis over a passive premise" alone predicts the label.
        cands.append((f"{b} was {part}{when}.", "entailment", "compression"))
        cands.append((f"{a} was {part}{when}.", "not_entailment", "voice_role_change"))
        front = f"{_cap(when.strip())}, "
        if rng.random() < 0.5:
            sent = active
            cands.append((passive, "entailment", "passive_keep_roles"))
            cands.append((f"{b} {past} {a}{when}.", "not_entailment", "role_swap"))
            cands.append((f"{a} was {part} by {b}{when}.", "not_entailment", "voice_role_change"))
            if when:
                cands.append((f"{front}{a} {past} {b}.", "entailment", "clause_reorder"))
        else:
            sent = passive
            cands.append((active, "entailment", "passive_keep_roles"))
            cands.append((f"{b} {past} {a}{when}.", "not_entailment", "voice_role_change"))
            cands.append((f"{a} was {part} by {b}{when}.", "not_entailment", "role_swap"))
            if when:
                cands.append((f"{front}{b} was {part} by {a}.", "entailment", "clause_reorder"))
        pred = past
    elif fam in {"sym_prep", "asym_prep"}:
        pred, _ = spec
        sym = fam == "sym_prep"
        when = "" if pred.startswith(("is ", "shares ", "reports ", "imposes", "sends", "depends")) else when
        sent = f"{a} {pred} {b}{when}."
        cands.append((f"{b} {pred} {a}{when}.", "entailment" if sym else "not_entailment",
                      "symmetric_swap" if sym else "role_swap"))
        if not sym and when:  # a faithful partner that moves words but keeps the roles
            cands.append((f"{_cap(when.strip())}, {a} {pred} {b}.", "entailment", "clause_reorder"))
    else:
        fwd, conv, _ = spec
        x = rng.choice(_OBJECTS[t]) if "{X}" in fwd else ""
        r = rng.choice(_ROLES)
        when = "" if re.search(r"\{A\} (is|lies|owns|employs|outranks)", fwd) else when
        m = rng.choice(_MONEY)
        f = dict(A=a, B=b, X=x, R=r, M=m)
        sw = dict(A=b, B=a, X=x, R=r, M=m)
        if rng.random() < 0.5:
            sent, hyp_ok = fwd.format(**f), conv.format(**f)
            wrong = [(conv.format(**sw), "relation_reversal"), (fwd.format(**sw), "role_swap")]
        else:
            sent, hyp_ok = conv.format(**f), fwd.format(**f)
            wrong = [(fwd.format(**sw), "relation_reversal"), (conv.format(**sw), "role_swap")]
        sent, hyp_ok = sent + when + ".", hyp_ok + when + "."
        cands.append((hyp_ok, "entailment", "converse"))
        w, rule = rng.choice(wrong)
        cands.append((w + when + ".", "not_entailment", rule))
        pred = fwd
    pos = [c for c in cands if c[1] == "entailment" and c[0] != sent]
    neg = [c for c in cands if c[1] == "not_entailment"]
    if not neg:  # symmetric predicates: the not-entailed partner puts a different name in one slot
        other = [n for n in names[t] if n not in {a, b}]
        if other:
            neg.append((sent.replace(b, rng.choice(other)), "not_entailment", "entity_substitution"))
    chosen = ([rng.choice(pos)] if pos else []) + ([rng.choice(neg)] if neg else [])
    premise = _embed(rng, sent, context)
    meta = {"origin": "frame", "family": fam, "predicate": pred}
    return [FramePair(premise, _cap(h), lab, rule, sent, doc_id, dict(meta)) for h, lab, rule in chosen]


def build_frame_corpus(*, data_dir: Any, out: Any, nlp: Any, n_premises: int, n_held_back: int = 400,
                       seed: int = 13, sources: Sequence[str] | None = None, max_sentences: int = 8000,
                       held_back_fraction: float = 0.12, n_process: int = 1,
                       corpus_held_back_fraction: float | None = None) -> dict[str, Any]:
    """Names and context sentences from the contrast sources, frames over them, written atomically.

    Documents the parse-based corpus holds back (``corpus_held_back_fraction``, default
    its own default) give no names or context, so its held-back slice stays unseen.

    Rows follow :func:`veridic.synth._corpus.build_contrast_corpus`'s schema, so the trainer
    reads them beside the parse-based corpus (``contrast.extra_corpora``). Returns counts.
    """
    import gzip
    import json
    from collections import Counter
    from pathlib import Path

    from veridic.io._atomic import atomic_path
    from veridic.synth._corpus import HELD_BACK_FRACTION, contrast_documents, is_held_back_doc

    docs = contrast_documents(data_dir=data_dir, sources=sources)
    fraction = HELD_BACK_FRACTION if corpus_held_back_fraction is None else corpus_held_back_fraction
    docs = [d for d in docs if not is_held_back_doc(d.doc_id, fraction=fraction)]
    rng = random.Random(_stable_int(str(seed), "frame-docs"))
    rng.shuffle(docs)
    sents: list[str] = []
    for d in docs:
        sents.extend(s for s in d.sentences if 5 <= len(s.split()) <= 35 and s[:1].isupper() and s.endswith("."))
        if len(sents) >= max_sentences:
            break
    sents = sents[:max_sentences]
    names = names_from_documents(nlp=nlp, sentences=sents, n_process=n_process)
    counts: Counter[tuple[str, str, str]] = Counter()
    out = Path(out)
    with atomic_path(out) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for split, n in (("train", n_premises), ("held_back", n_held_back)):
            for p in generate_frame_pairs(names=names, n_premises=n, seed=seed, context=sents,
                                          held_back_fraction=held_back_fraction, split=split):
                counts[(p.rule, p.label, split)] += 1
                fh.write(json.dumps({**p.to_dict(), "split": split}, ensure_ascii=False) + "\n")
    summary: dict[str, Any] = {"names": {k: len(v) for k, v in names.items()}, "context_sentences": len(sents),
                               "pairs": sum(counts.values()), "by_rule": {}}
    for (rule, label, split), n in sorted(counts.items()):
        summary["by_rule"].setdefault(rule, {"label": label}).setdefault(split, 0)
        summary["by_rule"][rule][split] += n
    return summary
