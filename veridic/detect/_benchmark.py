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

from veridic.detect._result import HallucinationSpan
from veridic.detect._taxonomy import ERROR_TYPES, LABEL_MAPS
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
    "SuiteExample",
    "load_contrast_suite",
    "score_suite",
    "mark_everything",
    "run_suite_benchmark",
    "audit_edits",
    "SUITE_PATH",
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
    base = typed_f1(predictions=[[set(ERROR_TYPES) for _ in r] for r in refs], references=refs)
    report["baseline_mark_everything"] = _baseline_summary(base)
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


def wice_span_f1(*, detector: Any, rows: Sequence[dict[str, Any]], progress: bool = False, n_boot: int = 1000,
                 seed: int = 0) -> dict[str, Any]:
    """Token-level F1 of detected spans against WiCE non-supported tokens, with the all-tokens baseline
    and bootstrap intervals over claims."""
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
    # 95 % intervals over claims (the unit WiCE annotates), and of the detector's margin over the baseline.
    import numpy as np

    counts = np.array([[sum(p and g for p, g in zip(ps, gs)), sum(ps), sum(gs)] for ps, gs in zip(preds, golds)], dtype=float)
    base = np.array([[sum(gs), len(gs), sum(gs)] for gs in golds], dtype=float)

    def margin(idx: Any) -> float | None:
        a, b = _f1_from(*counts[idx].sum(axis=0)), _f1_from(*base[idx].sum(axis=0))
        return None if a is None or b is None else a - b

    report["f1_ci95"] = _bootstrap(lambda idx: _f1_from(*counts[idx].sum(axis=0)), len(rows), n_boot=n_boot, seed=seed)
    report["baseline_all_tokens"]["f1_ci95"] = _bootstrap(lambda idx: _f1_from(*base[idx].sum(axis=0)), len(rows), n_boot=n_boot, seed=seed)
    report["margin_over_baseline_ci95"] = _bootstrap(margin, len(rows), n_boot=n_boot, seed=seed)
    report["bootstrap"] = {"resamples": n_boot, "seed": seed, "unit": "claim", "interval": "95 % percentile"}
    report["predicted_types"] = dict(sorted(types.items()))
    report["claims"] = len(rows)
    report["detector"] = detector.describe()
    return report


# ---------------------------------------------------------------------------------------------
# The contrast suite (veridic/detect/data/contrast_suite.jsonl; data card in docs/contrast_suite.md)

SUITE_PATH = Path(__file__).resolve().parent / "data" / "contrast_suite.jsonl"


@dataclass(frozen=True, slots=True)
class SuiteExample:
    """A contrast-suite passage: its gold spans (``edit`` as suggestion), whether it is fully correct,
    and the corrected passages that count as a right edit."""

    id: str
    variant: str
    passage: str
    evidence: str
    spans: tuple[HallucinationSpan, ...]
    correct: bool
    accept: tuple[str, ...] = ()


def load_contrast_suite(path: str | Path | None = None) -> list[SuiteExample]:
    """Read the contrast suite (default: the copy shipped in the package), checking every offset."""
    p = Path(path) if path is not None else SUITE_PATH
    out = []
    for i, r in iter_jsonl(p):
        try:
            spans = tuple(HallucinationSpan(start=s["start"], end=s["end"], text=s["text"], type=s["type"], confidence=None,
                                            evidence=None, suggestion=s.get("edit"), reason="gold")
                          for s in r["spans"])
            ex = SuiteExample(id=r["id"], variant=r["variant"], passage=r["passage"], evidence=r["evidence"], spans=spans,
                              correct=bool(r["correct"]), accept=tuple(r.get("accept", ())))
        except (KeyError, TypeError, InputError) as exc:
            raise DataFormatError(f"not a contrast-suite row ({exc})", path=str(p), row=i) from exc
        for s in spans:
            if ex.passage[s.start : s.end] != s.text:
                raise DataFormatError(f"span [{s.start}, {s.end}) does not hold {s.text!r}", path=str(p), row=i)
        if ex.correct == bool(spans):
            raise DataFormatError("'correct' must be true exactly when there are no gold spans", path=str(p), row=i)
        out.append(ex)
    if not out:
        raise DataFormatError("the contrast suite is empty", path=str(p))
    return out


def _norm_text(s: str) -> str:
    return " ".join(s.split()).strip().lower()


def _bootstrap(stat: Any, n: int, *, n_boot: int, seed: int) -> tuple[float | None, float | None]:
    """95 % percentile interval of ``stat(idx)`` over ``n_boot`` resamples of the ``n`` passages."""
    import numpy as np

    if n == 0 or n_boot <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    vals = []
    for _ in range(n_boot):
        v = stat(rng.integers(0, n, n))
        if v is not None:
            vals.append(v)
    if not vals:
        return None, None
    lo, hi = np.percentile(vals, [2.5, 97.5])
    return round(float(lo), 4), round(float(hi), 4)


def _f1_from(tp: float, pred: float, gold: float) -> float | None:
    if not gold:
        return None
    if not pred:
        return 0.0
    p, r = tp / pred, tp / gold
    return 2 * p * r / (p + r) if p + r else 0.0


def _char_mask(n: int, spans: Sequence[Any]) -> list[bool]:
    m = [False] * n
    for s in spans:
        for k in range(max(0, s.start), min(n, s.end)):
            m[k] = True
    return m


def score_suite(*, examples: Sequence[SuiteExample], predicted: Sequence[Sequence[HallucinationSpan]],
                splitter: str = "blingfire", n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Per-type sentence-level P/R/F1 (paper 002 eq. 1–3) with bootstrap CIs, binary and character F1,
    edit accuracy, and the false-flag rate on correct passages, for ``predicted`` spans of ``examples``."""
    import numpy as np

    if len(examples) != len(predicted):
        raise InputError(f"Got {len(examples)} suite passages but {len(predicted)} predictions.")
    n = len(examples)
    types = list(ERROR_TYPES)
    # Per passage: [tp, pred, gold] per type, binary sentence counts, char counts.
    typed = np.zeros((n, len(types), 3))
    binary = np.zeros((n, 3))
    chars = np.zeros((n, 3))
    preds_s, refs_s = [], []
    for j, (ex, spans) in enumerate(zip(examples, predicted)):
        ref = sentence_types(passage=ex.passage, spans=ex.spans, splitter=splitter)
        pred = sentence_types(passage=ex.passage, spans=spans, splitter=splitter)
        preds_s.append(pred)
        refs_s.append(ref)
        for p, r in zip(pred, ref):
            for k, t in enumerate(types):
                typed[j, k] += (t in p and t in r, t in p, t in r)
            binary[j] += (bool(p) and bool(r), bool(p), bool(r))
        pm, gm = _char_mask(len(ex.passage), spans), _char_mask(len(ex.passage), ex.spans)
        chars[j] += (sum(a and b for a, b in zip(pm, gm)), sum(pm), sum(gm))

    def f1_ci(counts: Any) -> tuple[float | None, float | None]:
        return _bootstrap(lambda idx: _f1_from(*counts[idx].sum(axis=0)), n, n_boot=n_boot, seed=seed)

    report = typed_f1(predictions=preds_s, references=refs_s, types=types)
    for k, t in enumerate(types):
        report["per_type"][t]["f1_ci95"] = f1_ci(typed[:, k, :])
    report["binary"]["f1_ci95"] = f1_ci(binary)
    report["char"] = {**_prf(*map(int, chars.sum(axis=0))), "f1_ci95": f1_ci(chars),
                      "metric": "character-overlap binary F1 of spans against gold spans"}

    # Editing: the detected phrase edits overlapping a gold entity/relation span, applied alone,
    # must give one of the accepted corrected passages.
    from veridic.detect._edit import apply_edits

    edits: dict[str, dict[str, Any]] = {}
    for t in ("entity", "relation"):
        found = right = gold = 0
        for ex, spans in zip(examples, predicted):
            for g in ex.spans:
                if g.type != t:
                    continue
                gold += 1
                near = [s for s in spans if s.start < g.end and s.end > g.start]
                if not any(s.type == t for s in near):
                    continue
                found += 1
                fixes: list[HallucinationSpan] = []
                for s in sorted(spans, key=lambda s: (s.start, s.end)):
                    if s.type in ("entity", "relation") and s.start < g.end + 1 and s.end > g.start - 1 \
                            and all(s.start >= f.end for f in fixes):
                        fixes.append(s)
                edited = apply_edits(passage=ex.passage, spans=fixes)
                right += any(_norm_text(edited) == _norm_text(a) for a in ex.accept)
        edits[t] = {"gold": gold, "found": found, "right_edit": right,
                    "edit_accuracy": right / gold if gold else None,
                    "edit_accuracy_of_found": right / found if found else None}
    report["edits"] = {**edits, "metric": "a found error is fixed when its phrase edits alone give an accepted corrected passage"}

    flagged = np.array([bool(spans) for spans in predicted], dtype=float)
    correct = np.array([ex.correct for ex in examples], dtype=bool)
    idx_c = np.flatnonzero(correct)
    rate = float(flagged[idx_c].mean()) if len(idx_c) else None
    ci = _bootstrap(lambda idx: float(flagged[idx_c[idx]].mean()), len(idx_c), n_boot=n_boot, seed=seed)
    # The first sentence of every passage is correct by construction: flags there are false too.
    first_flags = sum(bool(p and p[0]) and not r[0] for p, r in zip(preds_s, refs_s))
    report["false_flags"] = {"correct_passages": int(len(idx_c)), "flagged": int(flagged[idx_c].sum()), "rate": rate,
                             "rate_ci95": ci, "first_sentence_flagged": int(first_flags), "passages": n,
                             "metric": "share of fully correct passages with any span (lower is better)"}
    report["per_variant_flagged"] = {v: round(float(np.mean([bool(s) for e, s in zip(examples, predicted) if e.variant == v])), 4)
                                     for v in dict.fromkeys(e.variant for e in examples)}
    report["passages"] = n
    report["bootstrap"] = {"resamples": n_boot, "seed": seed, "unit": "passage", "interval": "95 % percentile"}
    return report


def mark_everything(examples: Sequence[Any], *, splitter: str = "blingfire") -> list[list[HallucinationSpan]]:
    """The trivial baseline: every sentence of every passage marked with every type at once.

    One span per (sentence, type) cannot be non-overlapping, so this returns per-sentence spans of
    the six types that :func:`score_suite` counts sentence by sentence; it flags every correct passage.
    """
    out = []
    for ex in examples:
        spans = []
        for sent in split_sentences(ex.passage, splitter=splitter) or []:
            if sent.end > sent.start:
                for t in ERROR_TYPES:
                    spans.append(HallucinationSpan(start=sent.start, end=sent.end, text=ex.passage[sent.start : sent.end],
                                                   type=t, confidence=None, evidence=None, suggestion=None, reason="baseline"))
        out.append(spans)
    return out


def _baseline_summary(rep: dict[str, Any]) -> dict[str, Any]:
    return {"per_type_f1": {t: v["f1"] for t, v in rep["per_type"].items()}, "macro_f1": rep["macro_f1"],
            "binary_f1": rep["binary"]["f1"], "char_f1": rep.get("char", {}).get("f1"),
            "false_flag_rate": rep.get("false_flags", {}).get("rate")}


_EDGE = " \t\n,;:.–-"


def audit_edits(*, detector: Any, evidences: Sequence[str], results: Sequence[Any], max_listed: int = 20) -> dict[str, Any]:
    """Check every edit the detector suggests, as the user sees it: each sentence with all of its edits applied
    (:func:`veridic.detect._edit.edited_sentences`). A replacement passes when its edited sentence is entailed by the
    evidence (entailment the judge's most likely class) or deleted; a deletion passes when it removes a whole
    optional constituent of its sentence (:func:`veridic.detect._localise.deletable_phrases`) or the whole sentence.
    Deleting types are removed even without a suggestion; a phrase error without one makes no edit
    (:func:`veridic.detect._edit.replacement`). Returns the counts and up to ``max_listed`` failing edits."""
    from veridic.detect._edit import edited_sentences, replacement
    from veridic.detect._localise import deletable_phrases, entailed

    rules = getattr(detector, "detector", detector)  # the pipeline's rule detector holds the parser and the judge
    nlp, scorer = rules.nlp, rules.scorer
    checks: list[tuple[str, str, list[str]]] = []  # (evidence, edited sentence, its replacements)
    deletions = {"whole": 0, "partial": 0}
    replaced = {"n": 0, "sentence_deleted": 0}
    failed: list[dict[str, Any]] = []
    for ev, res in zip(evidences, results):
        edits = [s for s in res.spans if replacement(s) != s.text]
        if not edits:
            continue
        doc = nlp(res.passage)
        for sp in edits:
            if replacement(sp):
                continue
            sent = next((x for x in doc.sents if x.start_char <= sp.start < x.end_char), doc[:])
            units = {(doc[x:y].start_char, doc[x:y].end_char) for x, y in deletable_phrases(sent)} | {(sent.start_char, sent.end_char)}
            if _trimmed(res.passage, sp.edit_range or (sp.start, sp.end)) in {_trimmed(res.passage, u) for u in units}:
                deletions["whole"] += 1
            else:
                deletions["partial"] += 1
                if len(failed) < max_listed:
                    a, b = sp.edit_range or (sp.start, sp.end)
                    failed.append({"edit": f"delete {res.passage[a:b]!r}", "sentence": sent.text, "check": "not a whole constituent"})
        for _, edited, swaps in edited_sentences(passage=res.passage, doc=doc, spans=edits):
            what = [f"{s.text!r} -> {replacement(s)!r}" for s in swaps]
            replaced["n"] += len(swaps)
            if not edited:
                replaced["sentence_deleted"] += len(swaps)
            else:
                checks.append((ev, edited, what))
    verdicts = scorer.score(sources=[c[0] for c in checks], claims=[c[1] for c in checks]) if checks else []
    ok = replaced["sentence_deleted"]
    for (_, edited, what), v in zip(checks, verdicts):
        if entailed(v.e, v.n, v.c):
            ok += len(what)
        elif len(failed) < max_listed:
            failed.append({"edit": "; ".join(what), "sentence": edited, "check": f"not entailed (e {v.e:.2f}, n {v.n:.2f}, c {v.c:.2f})"})
    n = replaced["n"] + deletions["whole"] + deletions["partial"]
    return {"edits": n, "replacements": replaced["n"], "replacements_entailed": ok, "deletions": deletions["whole"] + deletions["partial"],
            "deletions_whole_constituent": deletions["whole"], "passing": ok + deletions["whole"],
            "passing_share": (ok + deletions["whole"]) / n if n else None, "failed": failed,
            "rule": "each sentence with all its edits applied; replacement: that sentence entailed by the evidence (entailment the "
                    "most likely class) or deleted; deletion: a whole optional constituent or the whole sentence"}


def _trimmed(text: str, r: tuple[int, int]) -> tuple[int, int]:
    a, b = r
    while a < b and text[a] in _EDGE:
        a += 1
    while b > a and text[b - 1] in _EDGE:
        b -= 1
    return a, b


def run_suite_benchmark(*, detector: Any, examples: Sequence[SuiteExample], n_boot: int = 1000, seed: int = 0,
                        progress: bool = False) -> dict[str, Any]:
    """Run ``detector`` on the contrast suite; the detector's report with the mark-everything baseline beside it."""
    splitter = getattr(getattr(detector, "scorer", None), "splitter", "blingfire")
    results = detector.detect_many(passages=[e.passage for e in examples], evidences=[e.evidence for e in examples],
                                   progress=progress)
    pred = [list(r.spans) for r in results]
    report = score_suite(examples=examples, predicted=pred, splitter=splitter, n_boot=n_boot, seed=seed)
    base = score_suite(examples=examples, predicted=mark_everything(examples, splitter=splitter), splitter=splitter,
                       n_boot=0, seed=seed)
    report["baseline_mark_everything"] = _baseline_summary(base)
    report["errors"] = [{"id": e.id, "gold": [(s.type, s.text, s.suggestion) for s in e.spans],
                         "predicted": [(s.type, s.text, s.suggestion, s.reason) for s in r.spans]}
                        for e, r in zip(examples, results)
                        if sorted((s.type, s.start) for s in e.spans) != sorted((s.type, s.start) for s in r.spans)]
    report["edit_audit"] = audit_edits(detector=detector, evidences=[e.evidence for e in examples], results=results)
    report["detector"] = detector.describe()
    return report
