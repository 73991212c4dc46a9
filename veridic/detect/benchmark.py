"""Benchmarks for fine-grained detection: a synthetic typed set, FAVA's metrics, WiCE span F1.

**Metrics (paper 002, eq. 1–3).** For each error type *t* and each sentence
*i* of a passage, a system predicts whether *t* occurs in *i*. Over all
sentences, precision is TP / predicted positives (eq. 1; the paper's
garbled formula counts agreement over predicted positives, i.e. this),
recall is TP / gold positives (eq. 2), and the overall score is the mean F1
over types (eq. 3). FAVA averages over its six types; a type with no gold
positive in a benchmark has undefined recall, so :func:`typed_f1` averages
over the types that occur and lists them (``macro_types``). *Binary* F1
asks only whether a sentence holds any error.

**Synthetic typed benchmark.** :func:`build_synthetic_benchmark` turns
:mod:`veridic.synth` pairs into passages of ``sentences_per_passage``
sentences, each a clean or a perturbed copy of a source sentence, with the
source windows joined as evidence. Kinds map to types through
``LABEL_MAPS["veridic-synth"]``: entity_swap and number_change → entity
(the gold suggestion is the original value); negation, antonym, swap_args →
relation; neutral_other_doc (a sentence about another article) → invented;
neutral_same_doc (same article, outside the evidence window) →
unverifiable; extract and compress → no error. No generator makes
contradictory or subjective sentences, so those types have no gold here:
their false positives still count against precision of the other types'
sentences through the binary score. Sources are PoMo *test* rows
(CNN/DM/NYT), never the benchmark sets in ``shared/data/bench``; rows whose
document id appears in a training run's synthetic data are excluded.

**WiCE spans.** :func:`wice_span_f1` scores token-level binary F1 of the
detector's spans against WiCE's non-supported tokens (a token is predicted
non-supported when a detected span covers any of its characters).

>>> typed_f1(predictions=[[{"entity"}, set()]], references=[[{"entity"}, {"invented"}]])["per_type"]["entity"]["f1"]
1.0
"""

from __future__ import annotations

import gzip
import json
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veridic.detect.result import HallucinationSpan
from veridic.detect.taxonomy import ERROR_TYPES, LABEL_MAPS
from veridic.errors import DataFormatError, InputError
from veridic.io import iter_jsonl
from veridic.text import split_sentences

__all__ = [
    "TypedExample",
    "build_synthetic_benchmark",
    "sentence_types",
    "typed_f1",
    "token_f1",
    "run_typed_benchmark",
    "wice_span_f1",
    "load_wice_spans",
    "training_doc_ids",
    "SYNTH_KINDS",
]

SYNTH_KINDS = ("extract", "compress", "entity_swap", "number_change", "negation", "antonym", "swap_args",
               "neutral_same_doc", "neutral_other_doc")


@dataclass(frozen=True, slots=True)
class TypedExample:
    """A passage, its evidence and its gold hallucination spans (confidence None)."""

    id: str
    passage: str
    evidence: str
    spans: tuple[HallucinationSpan, ...]
    kinds: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "passage": self.passage, "evidence": self.evidence, "kinds": list(self.kinds),
                "spans": [s.to_dict() for s in self.spans]}


def training_doc_ids(path: str | Path) -> set[str]:
    """Document ids used by a training run's synthetic data (``synthetic.jsonl.gz``), to keep them out of the benchmark."""
    ids: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line).get("doc_id")
            if d:
                ids.add(d)
    return ids


def build_synthetic_benchmark(*, nlp: Any, documents: Sequence[Any], per_kind: int = 60, seed: int = 0,
                              sentences_per_passage: int = 3, exclude_doc_ids: Collection[str] = ()) -> list[TypedExample]:
    """Passages of synthetic sentences with typed gold spans (see the module docstring)."""
    from veridic.synth import SyntheticGenerator

    if sentences_per_passage < 1:
        raise InputError(f"sentences_per_passage must be >= 1; got {sentences_per_passage}.")
    excluded = set(exclude_doc_ids)
    docs = [d for d in documents if d.doc_id not in excluded]
    if not docs:
        raise InputError("Every document was excluded; nothing left to build the benchmark from.")
    gen = SyntheticGenerator(nlp=nlp, seed=seed)
    pairs = gen.generate(documents=docs, counts={k: per_kind for k in SYNTH_KINDS})
    # One pair per document, so a passage's sentences never share a source document.
    rng = random.Random(seed)
    rng.shuffle(pairs)
    used: set[str] = set()
    pool = []
    for p in pairs:
        if p.doc_id not in used and "\n" not in p.hypothesis:
            used.add(p.doc_id)
            pool.append(p)
    out: list[TypedExample] = []
    for g in range(0, len(pool) - sentences_per_passage + 1, sentences_per_passage):
        group = pool[g : g + sentences_per_passage]
        passage, spans, pos = "", [], 0
        for p in group:
            if passage:
                passage += " "
                pos += 1
            gold = LABEL_MAPS["veridic-synth"][p.kind]
            if gold is not None:
                if p.changed_span is not None and gold in ("entity", "relation"):
                    a, b = p.changed_span
                    sugg = p.meta.get("replaced") if p.kind in ("entity_swap", "number_change") else None
                else:
                    a, b, sugg = 0, len(p.hypothesis), None
                if b > a:
                    spans.append(HallucinationSpan(start=pos + a, end=pos + b, text=p.hypothesis[a:b], type=gold,
                                                   confidence=None, evidence=None, suggestion=sugg, reason=f"synth:{p.kind}"))
            passage += p.hypothesis
            pos += len(p.hypothesis)
        evidence = "\n".join(p.premise for p in group)
        out.append(TypedExample(id=f"synth-{seed}-{g // sentences_per_passage}", passage=passage, evidence=evidence,
                                spans=tuple(spans), kinds=tuple(p.kind for p in group)))
    return out


def sentence_types(*, passage: str, spans: Sequence[HallucinationSpan], splitter: str = "blingfire") -> list[set[str]]:
    """The set of error types in each sentence of ``passage`` (a span counts in every sentence it overlaps)."""
    sents = split_sentences(passage, splitter=splitter) or []
    out: list[set[str]] = [set() for _ in sents]
    for s in spans:
        for i, sent in enumerate(sents):
            if s.start < sent.end and s.end > sent.start:
                out[i].add(s.type)
    return out


def _prf(tp: int, pred: int, gold: int) -> dict[str, float | int | None]:
    p = tp / pred if pred else None
    r = tp / gold if gold else None
    f = (2 * p * r / (p + r) if (p + r) else 0.0) if p is not None and r is not None else (0.0 if gold and not pred else None)
    return {"precision": p, "recall": r, "f1": f, "tp": tp, "predicted": pred, "gold": gold}


def typed_f1(*, predictions: Sequence[Sequence[set[str]]], references: Sequence[Sequence[set[str]]],
             types: Sequence[str] = ERROR_TYPES) -> dict[str, Any]:
    """Per-type sentence-level precision/recall/F1 (eq. 1–2), their mean over types with gold support (eq. 3), and binary F1.

    ``predictions[j][i]`` / ``references[j][i]``: the types in sentence *i* of passage *j*.
    """
    if len(predictions) != len(references):
        raise InputError(f"Got {len(predictions)} predicted passages but {len(references)} references.")
    counts = {t: [0, 0, 0] for t in types}
    btp = bpred = bgold = 0
    n = 0
    for j, (ps, rs) in enumerate(zip(predictions, references)):
        if len(ps) != len(rs):
            raise InputError(f"Passage {j}: {len(ps)} predicted sentences but {len(rs)} reference sentences; split both the same way.")
        for p, r in zip(ps, rs):
            n += 1
            for t in types:
                counts[t][0] += int(t in p and t in r)
                counts[t][1] += int(t in p)
                counts[t][2] += int(t in r)
            btp += int(bool(p) and bool(r))
            bpred += int(bool(p))
            bgold += int(bool(r))
    per_type = {t: _prf(*counts[t]) for t in types}
    macro_types = [t for t in types if counts[t][2] > 0]
    macro = sum(per_type[t]["f1"] or 0.0 for t in macro_types) / len(macro_types) if macro_types else None
    return {"per_type": per_type, "macro_f1": macro, "macro_types": macro_types, "binary": _prf(btp, bpred, bgold),
            "sentences": n, "metric": "sentence-level F1 (paper 002 eq. 1-3); higher is better"}


def token_f1(*, predictions: Sequence[Sequence[bool]], references: Sequence[Sequence[bool]]) -> dict[str, Any]:
    """Micro token-level binary precision/recall/F1 (positive = non-supported)."""
    tp = pred = gold = 0
    for j, (ps, rs) in enumerate(zip(predictions, references)):
        if len(ps) != len(rs):
            raise InputError(f"Example {j}: {len(ps)} predicted token labels but {len(rs)} gold labels.")
        for p, r in zip(ps, rs):
            tp += int(p and r)
            pred += int(p)
            gold += int(r)
    return {**_prf(tp, pred, gold), "metric": "token-level binary F1 (non-supported = positive); higher is better"}


def run_typed_benchmark(*, detector: Any, examples: Sequence[TypedExample], progress: bool = False) -> dict[str, Any]:
    """Run ``detector`` on ``examples``; return :func:`typed_f1` plus edit accuracy and the detector's description."""
    results = detector.detect_many(passages=[e.passage for e in examples], evidences=[e.evidence for e in examples], progress=progress)
    splitter = getattr(detector.scorer, "splitter", "blingfire")
    preds, refs = [], []
    fixed = gold_fix = 0
    for ex, res in zip(examples, results):
        refs.append(sentence_types(passage=ex.passage, spans=ex.spans, splitter=splitter))
        preds.append(sentence_types(passage=ex.passage, spans=res.spans, splitter=splitter))
        for g in ex.spans:
            if g.type == "entity" and g.suggestion:
                gold_fix += 1
                # Fixed: a detected entity span overlapping the gold one whose suggestion restores the original value.
                fixed += any(s.type == "entity" and s.suggestion and s.start < g.end and s.end > g.start
                             and s.suggestion.lower() in g.suggestion.lower() for s in res.spans)
    report = typed_f1(predictions=preds, references=refs)
    report["entity_fix_rate"] = {"fixed": fixed, "gold": gold_fix, "rate": fixed / gold_fix if gold_fix else None,
                                 "metric": "share of gold entity errors detected with the original value as suggestion"}
    report["passages"] = len(examples)
    report["detector"] = detector.describe()
    return report


def load_wice_spans(path: str | Path) -> list[dict[str, Any]]:
    """WiCE non-supported-token rows (claim, claim_tokens, non_supported_spans, evidence sentences)."""
    rows = []
    for i, r in iter_jsonl(path):
        if len(r.get("claim_tokens", [])) != len(r.get("non_supported_spans", [None])):
            raise DataFormatError("claim_tokens and non_supported_spans differ in length", path=str(path), row=i)
        rows.append(r)
    return rows


def _token_offsets(claim: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
    out, pos = [], 0
    for t in tokens:
        i = claim.find(t, pos)
        if i < 0:  # tokeniser normalised something: keep the position, zero width
            out.append((pos, pos))
            continue
        out.append((i, i + len(t)))
        pos = i + len(t)
    return out


def wice_span_f1(*, detector: Any, rows: Sequence[dict[str, Any]], progress: bool = False) -> dict[str, Any]:
    """Token-level F1 of detected spans against WiCE non-supported tokens, with the all-tokens baseline."""
    passages = [r["claim"] for r in rows]
    evidences = ["\n".join(r["evidence"]) for r in rows]
    results = detector.detect_many(passages=passages, evidences=evidences, progress=progress)
    preds, golds, types = [], [], {}
    for r, res in zip(rows, results):
        offs = _token_offsets(r["claim"], r["claim_tokens"])
        preds.append([any(s.start < b and s.end > a for s in res.spans) for a, b in offs])
        golds.append([bool(x) for x in r["non_supported_spans"]])
        for s in res.spans:
            types[s.type] = types.get(s.type, 0) + 1
    report = token_f1(predictions=preds, references=golds)
    report["baseline_all_tokens"] = token_f1(predictions=[[True] * len(g) for g in golds], references=golds)
    report["predicted_types"] = dict(sorted(types.items()))
    report["claims"] = len(rows)
    report["detector"] = detector.describe()
    return report
