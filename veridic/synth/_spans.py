"""Training data for the span tagger: faithful text with errors inserted at exact character spans.

Each example is a source (a window of a real document) and a claim drawn from it, in the span schema of
``shared/data/spans`` (``id, dataset, task, source, context, claim, label, spans, split, meta``; ``label`` 1
when no span is marked). Claims come from :class:`~veridic.synth._perturb.SyntheticGenerator`'s sentence and
two-sentence kinds, so each error is one edit with known offsets:

* ``entity`` — an entity swapped for another of its type; ``number`` — a number or date changed;
* ``relation`` — two arguments exchanged; ``negation`` — a negation added or removed; ``antonym``;
* ``addition`` — a faithful claim followed by a sentence the source does not hold (from elsewhere in the
  document, or from another document): an unverifiable addition or an invented clause;
* ``faithful`` — extracts and compressions, no span.

Documents whose text appears in any evaluation source are left out (8-word shingles), so no evaluation
source is ever trained on.

>>> kind_share(KIND_SHARES)["faithful"]
0.33
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import ConfigError, InputError

__all__ = ["ABSTRACTIVE_ERROR_SHARES", "KIND_SHARES", "SPAN_TYPES", "SUMMARY_SETS", "build_abstractive_span_corpus", "build_span_corpus",
           "build_summary_span_corpus", "eval_shingles", "kind_share", "overlap_share", "pairs_to_examples", "splice_edit"]

#: Share of each kind among the synthetic examples (docs/preregistration/span-tagger.md, "Training data"): entity,
#: number and date errors split as EntFA train's hallucinated entities; the other kinds follow FRANK's error-type
#: rates; the faithful share is EntFA train's label-1 share. Attribution has no generator, so its share (0.090)
#: is the relation kind's, as registered.
KIND_SHARES: dict[str, float] = {
    "faithful": 0.330,
    "entity": 0.175,
    "number": 0.092,
    "relation": 0.124,
    "antonym": 0.034,
    "negation": 0.034,
    "addition": 0.211,
}

#: generator kinds behind each span type
_GENERATOR_KINDS: dict[str, tuple[str, ...]] = {
    "faithful": ("extract", "compress", "doc_entailment"),
    "entity": ("entity_swap",),
    "number": ("number_change",),
    "relation": ("swap_args",),
    "negation": ("negation",),
    "antonym": ("antonym",),
    "addition": ("neutral_same_doc", "neutral_other_doc"),
}
SPAN_TYPES = tuple(k for k in KIND_SHARES if k != "faithful")
_SHINGLE = 8


def kind_share(shares: Mapping[str, float]) -> dict[str, float]:
    """``shares`` checked (known kinds, non-negative, summing to 1) and returned as a plain dict."""
    unknown = set(shares) - set(_GENERATOR_KINDS)
    if unknown:
        raise ConfigError(f"Unknown span kinds {sorted(unknown)}; expected {sorted(_GENERATOR_KINDS)}.")
    if any(v < 0 for v in shares.values()) or abs(sum(shares.values()) - 1.0) > 1e-6:
        raise ConfigError(f"Kind shares must be >= 0 and sum to 1; got {dict(shares)} (sum {sum(shares.values()):.3f}).")
    return dict(shares)


def _shingles(text: str) -> set[int]:
    words = re.findall(r"\w+", text.lower())
    return {int(hashlib.blake2b(" ".join(words[i:i + _SHINGLE]).encode(), digest_size=8).hexdigest(), 16)
            for i in range(max(0, len(words) - _SHINGLE + 1))}


def eval_shingles(texts: Iterable[str]) -> set[int]:
    """8-word shingles of the evaluation sources: a document sharing one with them is not used."""
    out: set[int] = set()
    for t in texts:
        out |= _shingles(t)
    return out


def pairs_to_examples(pairs: Sequence[Any], *, rng: random.Random, other_sentences: Sequence[str]) -> list[dict[str, Any]]:
    """Generator pairs as span examples. Neutral pairs become additions: a faithful sentence of the source
    followed by the neutral sentence, whose characters are the span."""
    kind_of = {g: k for k, gs in _GENERATOR_KINDS.items() for g in gs}
    out = []
    for p in pairs:
        kind = kind_of.get(p.kind)
        if kind is None:
            continue
        claim, spans = p.hypothesis, []
        if kind == "addition":
            src_sents = [s for s in re.split(r"(?<=[.!?])\s+", p.premise) if len(s.split()) >= 5]
            lead = rng.choice(src_sents) if src_sents else ""
            added = p.hypothesis if p.kind == "neutral_same_doc" or not other_sentences else rng.choice(other_sentences)
            claim = (lead + " " + added).strip()
            spans = [(len(claim) - len(added), len(claim), "addition")]
        elif kind != "faithful":
            if p.changed_span is None:
                continue
            spans = [(p.changed_span[0], p.changed_span[1], kind)]
        out.append({"source": p.premise, "claim": claim, "spans": spans, "kind": kind, "doc_id": p.doc_id, "generator_kind": p.kind})
    return out


def _widen(ex: dict[str, Any], docs: Mapping[str | None, Any], rng: random.Random) -> dict[str, Any]:
    """The example's source widened to 4-10 sentences of its document around the generator's window, as
    evaluation sources are whole articles and chats; an addition's sentence is never let into the source."""
    doc = docs.get(ex["doc_id"])
    if doc is None:
        return ex
    sents = list(doc.sentences)
    first = next((i for i, s in enumerate(sents) if ex["source"].startswith(s)), None)
    if first is None:
        return ex
    size = rng.randint(4, 10)
    a = max(0, first - rng.randint(0, size // 2))
    source = " ".join(sents[a:a + size])
    if ex["source"] not in source or any(source.find(ex["claim"][s:e]) >= 0 for s, e, t in ex["spans"] if t == "addition"):
        return ex
    return {**ex, "source": source}


def build_span_corpus(*, data_dir: str | Path, out: str | Path, nlp: Any, n: int, seed: int = 0,
                      sources: Sequence[str] = ("fnc1", "semiauto_wiki", "control", "mnli"),
                      exclude: set[int] | None = None, shares: Mapping[str, float] = KIND_SHARES,
                      progress: bool = True) -> dict[str, Any]:
    """Generate about ``n`` span examples over ``sources`` (:data:`veridic.synth._corpus.DEFAULT_SOURCES` names) and
    write them to ``out`` (JSON lines, gzip, atomically). ``exclude``: shingles of text never to train on
    (:func:`eval_shingles` of the evaluation sources). Returns counts per kind."""
    from veridic.synth._corpus import contrast_documents
    from veridic.synth._perturb import SyntheticGenerator

    if n < 1:
        raise ConfigError(f"n must be >= 1; got {n}.")
    shares = kind_share(shares)
    docs = contrast_documents(data_dir=data_dir, sources=sources)
    if exclude:
        docs = [d for d in docs if not (_shingles(" ".join(d.sentences)) & exclude)]
    if not docs:
        raise InputError(f"No documents left in sources {list(sources)} after removing those that share text with the evaluation sources.")
    rng = random.Random(seed)
    rng.shuffle(docs)
    # Ask the generator for more than needed per kind: some candidates yield no edit.
    counts: Counter[str] = Counter()
    for kind, share in shares.items():
        gens = _GENERATOR_KINDS[kind]
        for g in gens:
            counts[g] += int(round(n * share / len(gens) * 1.3)) + 1
    gen = SyntheticGenerator(nlp=nlp, seed=seed)
    # One document per example keeps the parse (the slow part) proportional to n while leaving the rarer kinds
    # (argument swaps need two swappable arguments) enough candidate sentences.
    pairs = gen.generate(documents=docs[: max(300, n)], counts=dict(counts), progress=progress)
    other = [p.hypothesis for p in pairs if p.kind == "neutral_other_doc"]
    examples = [_widen(ex, {d.doc_id: d for d in docs}, rng) for ex in pairs_to_examples(pairs, rng=rng, other_sentences=other)]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for ex in examples:
        by_kind.setdefault(ex["kind"], []).append(ex)
    chosen: list[dict[str, Any]] = []
    for kind, share in shares.items():
        pool = by_kind.get(kind, [])
        rng.shuffle(pool)
        chosen.extend(pool[: int(round(n * share))])
    rng.shuffle(chosen)
    stats = _write_span_rows(out, chosen, id_prefix=f"synthetic-{seed}", task="summarization",
                             meta=lambda ex: {"kind": ex["kind"], "generator_kind": ex["generator_kind"], "doc_id": ex["doc_id"]})
    return {"path": str(out), "examples": len(chosen), "by_kind": stats, "documents": len(docs)}


def _write_span_rows(out: str | Path, examples: Sequence[dict[str, Any]], *, id_prefix: str, task: str,
                     meta: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, int]:
    """``examples`` (source, claim, spans as (start, end, type)) as rows of the span schema, gzip, atomically;
    returns the count of each ``kind``."""
    from veridic.io._atomic import atomic_path

    with atomic_path(Path(out)) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as fh:
        for i, ex in enumerate(examples):
            claim = ex["claim"]
            spans = [{"start": a, "end": b, "text": claim[a:b], "type": t} for a, b, t in ex["spans"]]
            row = {"id": f"{id_prefix}-{i}", "dataset": "synthetic", "task": task, "source": ex["source"], "context": None,
                   "claim": claim, "label": 0 if spans else 1, "spans": spans, "split": "train", "meta": meta(ex)}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return dict(sorted(Counter(ex["kind"] for ex in examples).items()))


def _names_by_label(doc: Any, pool: dict[str, list[str]]) -> dict[str, list[str]]:
    """The entity names of a parsed source by label (an entity swap's first choices), also added to ``pool`` (the
    names seen so far, its fallback)."""
    same: dict[str, list[str]] = {}
    for e in doc.ents:
        same.setdefault(e.label_, []).append(e.text)
        pool.setdefault(e.label_, []).append(e.text)
    return same


class _ErrorQuota:
    """How many rows of each kind a builder still needs: ``total`` rows, ``error_share`` of them with one error of
    :data:`ABSTRACTIVE_ERROR_SHARES` (in those shares), the rest faithful; with a progress bar over the rows made."""

    def __init__(self, total: int, error_share: float, *, desc: str, progress: bool):
        n_err = int(round(total * error_share))
        self.error_share = error_share
        self.targets = {k: int(round(n_err * s / sum(ABSTRACTIVE_ERROR_SHARES.values()))) for k, s in ABSTRACTIVE_ERROR_SHARES.items()}
        self.made: Counter[str] = Counter()
        self.faithful_left = total - n_err
        self.bar = None
        if progress:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="row", mininterval=10)

    def full(self) -> bool:
        return self.faithful_left <= 0 and all(self.made[k] >= t for k, t in self.targets.items())

    def open_kinds(self) -> list[str]:
        return [k for k, t in self.targets.items() if self.made[k] < t]

    def wants_error(self, open_kinds: Sequence[str], rng: random.Random) -> bool:
        """Whether the next row gets an error (draws from ``rng`` only while both kinds of row are still wanted)."""
        return bool(open_kinds) and (self.faithful_left <= 0 or rng.random() < self.error_share)

    def count(self, kind: str | None) -> None:
        """One row made: faithful (``None``) or with an error of ``kind``."""
        if kind is None:
            self.faithful_left -= 1
        else:
            self.made[kind] += 1
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


#: error kinds inserted into abstractive claims, with their shares among the erroneous half (the kinds of
#: :data:`KIND_SHARES` that edit one sentence, in the same proportions; an addition needs a second sentence)
ABSTRACTIVE_ERROR_SHARES: dict[str, float] = {"entity": 0.175, "number": 0.092, "relation": 0.124, "antonym": 0.034, "negation": 0.034}
_ABSTRACTIVE_SETS = ("mnli", "lingnli", "anli", "scitail")


def overlap_share(claim: str, source: str) -> float:
    """Share of the claim's content words found in the source (1.0 for a claim with none): how extractive it is.

    >>> round(overlap_share("The cat sat on the mat.", "A cat sat there."), 2)  # cat, sat of cat, sat, mat
    0.67
    """
    from veridic.ling.lexical import content_words

    words = content_words(claim)
    if not words:
        return 1.0
    have = set(content_words(source))
    return sum(w in have for w in words) / len(words)


def build_abstractive_span_corpus(*, data_dir: str | Path, out: str | Path, nlp: Any, n: int, seed: int = 0,
                                  sets: Sequence[str] = _ABSTRACTIVE_SETS, max_overlap: float = 0.7,
                                  error_share: float = 0.5, exclude: set[int] | None = None,
                                  progress: bool = True) -> dict[str, Any]:
    """About ``n`` span examples whose claims are human-written rewrites: the entailed hypotheses of NLI sets
    (``<data>/nli/<set>.jsonl.gz``) that reuse less than ``max_overlap`` of their content words from the premise.
    A share ``1 - error_share`` stays faithful (no span): rewording is not an error. The rest get one error of
    :data:`ABSTRACTIVE_ERROR_SHARES` inserted at exact characters, so an abstractive claim is not faithful by its
    form alone. Premises sharing an 8-word shingle with ``exclude`` are left out. Written like
    :func:`build_span_corpus` (same schema, gzip, atomically); returns counts per kind."""
    from veridic.synth._perturb import perturb_sentence

    if n < 1:
        raise ConfigError(f"n must be >= 1; got {n}.")
    if not 0 <= error_share <= 1 or not 0 < max_overlap <= 1:
        raise ConfigError(f"error_share must lie in [0, 1] and max_overlap in (0, 1]; got {error_share} and {max_overlap}.")
    rows: list[tuple[str, str, str]] = []
    for name in sets:
        f = Path(data_dir) / "nli" / f"{name}.jsonl.gz"
        if not f.exists():
            raise InputError(f"{f} not found; expected an NLI set of the shared data (premise, hypothesis, label per line).")
        with gzip.open(f, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                prem, hyp = str(r.get("premise") or ""), str(r.get("hypothesis") or "")
                if r.get("label") != "entailment" or not 40 <= len(prem) <= 1000 or len(hyp.split()) < 5:
                    continue
                if exclude and _shingles(prem) & exclude:
                    continue
                if overlap_share(hyp, prem) < max_overlap:
                    rows.append((name, prem, hyp))
    # One claim per premise: sets repeat a premise with several hypotheses.
    seen: set[str] = set()
    rows = [r for r in rows if not (r[1] in seen or seen.add(r[1]))]  # type: ignore[func-returns-value]
    rng = random.Random(seed)
    rng.shuffle(rows)
    quota = _ErrorQuota(n, error_share, desc="abstractive span rows", progress=progress)
    pool: dict[str, list[str]] = {}
    chosen: list[dict[str, Any]] = []
    # Parse in batches: premise entities feed the entity swap (same-document names first, then any seen so far).
    for start in range(0, len(rows), 256):
        if quota.full():
            break
        batch = rows[start:start + 256]
        hdocs = list(nlp.pipe([h for _, _, h in batch]))
        pdocs = list(nlp.pipe([p for _, p, _ in batch]))
        for (name, prem, hyp), hdoc, pdoc in zip(batch, hdocs, pdocs):
            same = _names_by_label(pdoc, pool)
            open_kinds = quota.open_kinds()
            if not quota.wants_error(open_kinds, rng):
                if quota.faithful_left > 0:
                    chosen.append({"source": prem, "claim": hyp, "spans": [], "kind": "abstractive_faithful", "set": name})
                    quota.count(None)
                continue
            rng.shuffle(open_kinds)
            for kind in open_kinds:
                edit = perturb_sentence(_GENERATOR_KINDS[kind][0], hdoc, rng, same, pool)
                if edit is None or edit.span is None or edit.text == hyp:
                    continue
                a, b = edit.span
                if b <= a or not edit.text[a:b].strip():
                    continue
                chosen.append({"source": prem, "claim": edit.text, "spans": [(a, b, kind)], "kind": f"abstractive_{kind}", "set": name})
                quota.count(kind)
                break
    quota.close()
    rng.shuffle(chosen)
    stats = _write_span_rows(out, chosen, id_prefix=f"abstractive-{seed}", task="claim",
                             meta=lambda ex: {"kind": ex["kind"], "nli_set": ex["set"]})
    return {"path": str(out), "examples": len(chosen), "by_kind": stats, "candidates": len(rows)}


#: dev benchmark sets (``<data>/bench/<set>.jsonl``) whose faithful rows are real model summaries and dialogue
#: responses with their own sources. WiCE dev is left out: the pipeline's settings are selected on it.
SUMMARY_SETS = ("frank_test", "summac_factcc", "summac_polytope", "tofueval_meetb_dev", "begin2_dev", "dialfact_small")


def splice_edit(text: str, start: int, end: int, edit: Any) -> tuple[str, tuple[int, int]] | None:
    """``text`` with its sentence ``text[start:end]`` replaced by ``edit`` (a generator edit of that sentence) and the
    edit's span moved into ``text``; None when the edit also changed the sentence outside its span (the generator
    tidies spacing), which would let a reader tell an edited sentence by its form.

    >>> from veridic.synth._perturb import _Edit
    >>> splice_edit("Tom ran. Ann sat in Rome.", 9, 25, _Edit("Ann sat in Paris.", (11, 16)))
    ('Tom ran. Ann sat in Paris.', (20, 25))
    """
    if edit is None or edit.span is None:
        return None
    a, b = edit.span
    sent, new = text[start:end], edit.text
    tail = len(new) - b
    if not (0 <= a < b <= len(new)) or not new[a:b].strip() or new == sent:
        return None
    if new[:a] != sent[:a] or tail > len(sent) - a or new[b:] != sent[len(sent) - tail:]:
        return None
    replaced = sent[a:len(sent) - tail]
    if replaced != replaced.strip():  # the edit also took a space next to its span ("Rome ." -> "Paris.")
        return None
    return text[:start] + new + text[end:], (start + a, start + b)


def build_summary_span_corpus(*, data_dir: str | Path, out: str | Path, nlp: Any, n: int | None = None, seed: int = 0,
                              sets: Sequence[str] = SUMMARY_SETS, error_share: float = 0.5, exclude: set[int] | None = None,
                              progress: bool = True) -> dict[str, Any]:
    """Span examples whose claims are real model summaries and dialogue responses that people judged faithful: the
    label-1 rows of the dev benchmark sets ``sets``, each with its own source. A share ``1 - error_share`` stays as
    it is (no span): abstractive summaries of news, meetings and chats are what the faithful text of BUMP and
    DiaSumFact looks like. The rest get one error of :data:`ABSTRACTIVE_ERROR_SHARES` in one of their sentences, at
    exact characters; an entity swap puts in a name of the row's own source first (an intrinsic error, as most of
    the summaries' are). Rows whose source shares an 8-word shingle with ``exclude`` are left out, and a claim is
    used once. Claims are written with :func:`~veridic.synth._perturb` tidy spacing ("larger , too ." → "larger,
    too."), so an edited sentence cannot be told by its form. ``n``: at most this many rows (default: all).
    Written like :func:`build_span_corpus`; returns counts per kind."""
    from veridic.synth._perturb import _tidy, perturb_sentence
    from veridic.text import split_sentences

    if n is not None and n < 1:
        raise ConfigError(f"n must be >= 1 (or None for every usable row); got {n}.")
    if not 0 <= error_share <= 1:
        raise ConfigError(f"error_share must lie in [0, 1]; got {error_share}.")
    unknown = [s for s in sets if s not in SUMMARY_SETS]
    if unknown:
        raise ConfigError(f"Unknown summary sets {unknown}; expected some of {list(SUMMARY_SETS)}.")
    rows: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for name in sets:
        f = Path(data_dir) / "bench" / f"{name}.jsonl"
        if not f.exists():
            raise InputError(f"{f} not found; expected a dev benchmark set of the shared data (the bench JSONL schema).")
        with f.open(encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                if r.get("label") != 1:
                    continue
                src, claim = str(r.get("source") or ""), _tidy(" ".join(str(r.get("claim") or "").split()))
                if len(claim.split()) < 4 or not src.strip() or (src, claim) in seen:
                    continue
                seen.add((src, claim))
                if exclude and _shingles(src) & exclude:
                    continue
                rows.append((name, src, claim))
    rng = random.Random(seed)
    rng.shuffle(rows)
    quota = _ErrorQuota(len(rows) if n is None else min(n, len(rows)), error_share, desc="summary span rows", progress=progress)
    pool: dict[str, list[str]] = {}
    chosen: list[dict[str, Any]] = []
    # Only the names of a source are read from it (its entities feed the swap), so its parse runs the recogniser alone.
    ner_only = [p for p in ("tagger", "parser", "attribute_ruler", "lemmatizer") if p in nlp.pipe_names]
    for start in range(0, len(rows), 128):
        if quota.full():
            break
        batch = rows[start:start + 128]
        sdocs = list(nlp.pipe([s for _, s, _ in batch], disable=ner_only))
        for (name, src, claim), sdoc in zip(batch, sdocs):
            same = _names_by_label(sdoc, pool)
            open_kinds = quota.open_kinds()
            if not quota.wants_error(open_kinds, rng):
                if quota.faithful_left > 0:
                    chosen.append({"source": src, "claim": claim, "spans": [], "kind": "summary_faithful", "set": name})
                    quota.count(None)
                continue
            sents = [s for s in split_sentences(claim) if len(s.text.split()) >= 4]
            if not sents:
                continue
            sent = rng.choice(sents)
            doc = nlp(sent.text)
            rng.shuffle(open_kinds)
            for kind in open_kinds:
                spliced = splice_edit(claim, sent.start, sent.end, perturb_sentence(_GENERATOR_KINDS[kind][0], doc, rng, same, pool))
                if spliced is None:
                    continue
                text, (a, b) = spliced
                chosen.append({"source": src, "claim": text, "spans": [(a, b, kind)], "kind": f"summary_{kind}", "set": name})
                quota.count(kind)
                break
    quota.close()
    rng.shuffle(chosen)
    stats = _write_span_rows(out, chosen, id_prefix=f"summary-{seed}", task="summarization",
                             meta=lambda ex: {"kind": ex["kind"], "bench_set": ex["set"]})
    return {"path": str(out), "examples": len(chosen), "by_kind": stats, "candidates": len(rows)}
