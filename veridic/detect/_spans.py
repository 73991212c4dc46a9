"""Span-level evaluation on human span annotations, with trivial baselines beside every figure.

**Data.** Three span-annotated sets under ``$VERIDIC_DATA/spans`` (``../shared/data/spans`` by default;
``MANIFEST.md`` there describes them): ``entfa_xsum`` (named entities only; its *test* split is evaluation,
its *train* split the only rows a model may be trained on), ``bump_cnndm`` and ``diasumfact`` (all rows are
evaluation). :func:`load_span_rows` reads one file and checks every row; :func:`evaluation_rows` gives the
evaluation part of a set, optionally a seeded sample of it (:func:`sample`).

**Metrics** (:func:`score_predictions`), all pooled over the rows of a set:

- *span* precision/recall/F1: micro over characters of the claims. Whitespace is left out of both the gold
  and the predicted mask, so a span's extent is its visible characters and "mark everything" gets no credit
  (nor blame) for the spaces between words;
- *token* F1: tokens are ``\\w+`` runs; a token is gold (predicted) when any of its characters is;
- *example* F1 and balanced accuracy: a claim is flagged when it has at least one predicted span, and is a
  gold positive when it has at least one gold span (``label == 0``); the flag rate is shown beside the base
  rate;
- *recall by gold type*: the share of the (non-space) characters inside gold spans of a type that are
  predicted, by coarse type (:func:`coarse_type`) and by the data set's own type;
- 95 % bootstrap intervals over rows (1,000 resamples, seed 0) for span F1 and example F1. All predictors
  are resampled with the same row indices, so their intervals are paired.

**Predictors** take a :class:`SpanRow` and return character ranges of its claim: :class:`MarkEverything`
(every non-space character), :class:`AbsentWords` (content words the source lacks) and
:class:`DetectorSpans` (a :class:`~veridic.detect._detector.HallucinationDetector`); :class:`TaggerSpans` wraps a
learned :class:`~veridic.detect._tagger.SpanTagger`. :func:`span_benchmark`
runs them on the evaluation sets; :func:`render_markdown` prints the table.

>>> row = SpanRow(id="x", dataset="demo", task="summarization", source="Alice paid 30 dollars in Paris.", context=None,
...               claim="Alice paid 40 dollars in Rome.", label=0, spans=((11, 13, "number"), (25, 29, "entity")), split="test")
>>> AbsentWords().predict(row)
[(11, 13), (25, 29)]
>>> span_prf([row], [MarkEverything().predict(row)])["precision"]  # 6 of the claim's 25 visible characters
0.24
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from veridic.detect._benchmark import _bootstrap, _char_mask, _f1_from
from veridic.errors import DataFormatError, InputError, did_you_mean
from veridic.io import iter_jsonl
from veridic.io._paths import default_data_dir
from veridic.ling.lexical import content_words
from veridic.ling.lexical import tokens as lexical_tokens

__all__ = [
    "SpanRow",
    "SpanCheckpoints",
    "SPAN_DATASETS",
    "EVALUATION_SPLITS",
    "load_span_rows",
    "evaluation_rows",
    "sample",
    "coarse_type",
    "char_counts",
    "token_counts",
    "span_prf",
    "token_prf",
    "example_scores",
    "type_recall",
    "score_predictions",
    "SpanPredictor",
    "MarkEverything",
    "absent_words",
    "AbsentWords",
    "DetectorSpans",
    "TaggerSpans",
    "BASELINES",
    "span_benchmark",
    "render_markdown",
    "write_span_report",
]

#: The span-annotated sets, by name (the file is ``<name>.jsonl.gz``).
SPAN_DATASETS = ("entfa_xsum", "bump_cnndm", "diasumfact")
#: The split of each set that is evaluation data (None: every row). Only entfa_xsum train may be trained on.
EVALUATION_SPLITS: dict[str, str | None] = {"entfa_xsum": "test", "bump_cnndm": None, "diasumfact": None}

_REQUIRED = ("id", "source", "claim", "label", "spans")
# Context values that stand for "no query" in the staged files (SAMSum rows carry "n/a").
_NO_CONTEXT = ("", "n/a")


@dataclass(frozen=True, slots=True)
class SpanRow:
    """A generated claim, its source and its gold spans as ``(start, end, type)`` character ranges of ``claim``.

    ``label`` is 1 when no span is annotated, 0 otherwise; ``context`` is the query of a query-focused
    summary, or None.
    """

    id: str
    dataset: str
    task: str
    source: str
    context: str | None
    claim: str
    label: int
    spans: tuple[tuple[int, int, str], ...]
    split: str
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _span_file(dataset: str, data_dir: str | Path | None) -> Path:
    folder = Path(data_dir) if data_dir is not None else default_data_dir("spans")
    for name in (f"{dataset}.jsonl.gz", f"{dataset}.jsonl"):
        if (folder / name).is_file():
            return folder / name
    hint = ("pass data_dir= (--data-dir) naming the folder that holds it" if data_dir is not None
            else "set $VERIDIC_DATA to the folder that holds spans/, or pass data_dir= (--data-dir) naming the spans folder itself")
    raise InputError(f"No span file for data set {dataset!r}: {folder / (dataset + '.jsonl.gz')} does not exist; {hint}.")


def _row(obj: dict[str, Any], *, dataset: str, path: Path, line: int) -> SpanRow:
    missing = [k for k in _REQUIRED if k not in obj]
    if missing:
        raise DataFormatError(f"missing field(s) {', '.join(missing)}; a span row has {', '.join(_REQUIRED)} (and dataset, task, context, meta, split).",
                              path=str(path), row=line)
    claim, source = obj["claim"], obj["source"]
    if not isinstance(claim, str) or not claim.strip() or not isinstance(source, str) or not source.strip():
        raise DataFormatError("'claim' and 'source' must be non-empty strings.", path=str(path), row=line)
    if obj.get("dataset", dataset) != dataset:
        raise DataFormatError(f"the row belongs to data set {obj.get('dataset')!r}, not {dataset!r}; keep one set per file.", path=str(path), row=line)
    if not isinstance(obj["spans"], list):
        raise DataFormatError("'spans' must be a list of {start, end, text, type} objects.", path=str(path), row=line)
    spans = []
    for k, s in enumerate(obj["spans"]):
        try:
            a, b, typ = s["start"], s["end"], s.get("type") or "unknown"
        except (TypeError, KeyError):
            raise DataFormatError(f"span {k} is not an object with start and end.", path=str(path), row=line) from None
        if not (isinstance(a, int) and isinstance(b, int) and 0 <= a < b <= len(claim)):
            raise DataFormatError(f"span {k} [{a!r}, {b!r}) does not lie inside the claim ({len(claim)} characters); offsets are 0 <= start < end <= len(claim).",
                                  path=str(path), row=line)
        if "text" in s and claim[a:b] != s["text"]:
            raise DataFormatError(f"span {k} [{a}, {b}) holds {claim[a:b]!r}, not its text {s['text']!r}.", path=str(path), row=line)
        spans.append((a, b, str(typ)))
    label = obj["label"]
    if label not in (0, 1) or isinstance(label, bool):
        raise DataFormatError(f"'label' must be 0 (some span) or 1 (no span); got {label!r}.", path=str(path), row=line)
    if (label == 1) != (not spans):
        raise DataFormatError(f"label {label} disagrees with the {len(spans)} span(s): label is 1 exactly when there is no span.", path=str(path), row=line)
    context = obj.get("context")
    if context is not None and not isinstance(context, str):
        raise DataFormatError("'context' must be a string or null.", path=str(path), row=line)
    return SpanRow(id=str(obj["id"]), dataset=dataset, task=str(obj.get("task") or "summarization"), source=source,
                   context=None if context is None or context.strip().lower() in _NO_CONTEXT else context, claim=claim,
                   label=int(label), spans=tuple(spans), split=str(obj.get("split") or "test"), meta=dict(obj.get("meta") or {}))


def load_span_rows(*, dataset: str, split: str | None = None, data_dir: str | Path | None = None) -> list[SpanRow]:
    """Every row of the span set ``dataset`` (only those of ``split`` when given), each checked.

    ``data_dir``: the folder holding ``<dataset>.jsonl.gz`` (default ``$VERIDIC_DATA/spans``). A span outside
    its claim, a span whose text differs from the claim's characters, a label that disagrees with the spans or
    a duplicate id is an error naming the file and line.
    """
    if dataset not in SPAN_DATASETS and data_dir is None:
        raise InputError(f"Unknown span data set {dataset!r}; known: {', '.join(SPAN_DATASETS)}.{did_you_mean(dataset, SPAN_DATASETS)}")
    path = _span_file(dataset, data_dir)
    rows, seen = [], set()
    for line, obj in iter_jsonl(path):
        r = _row(obj, dataset=dataset, path=path, line=line)
        if r.id in seen:
            raise DataFormatError(f"duplicate id {r.id!r}.", path=str(path), row=line)
        seen.add(r.id)
        rows.append(r)
    if not rows:
        raise DataFormatError("the file holds no rows.", path=str(path))
    if split is not None:
        have = sorted({r.split for r in rows})
        rows = [r for r in rows if r.split == split]
        if not rows:
            raise InputError(f"{path} has no row of split {split!r}; its splits: {', '.join(have)}.")
    return rows


def sample(rows: Sequence[SpanRow], n: int, seed: int = 0) -> list[SpanRow]:
    """``n`` rows drawn without replacement with ``random.Random(seed)``, in their file order (all rows when ``n >= len(rows)``).

    >>> sample(list(range(10)), 3, seed=0)
    [0, 6, 9]
    """
    if n < 1:
        raise InputError(f"A sample needs n >= 1 rows; got {n}.")
    if n >= len(rows):
        return list(rows)
    keep = sorted(random.Random(seed).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def evaluation_rows(dataset: str, *, data_dir: str | Path | None = None, limit: int | None = None, seed: int = 0) -> list[SpanRow]:
    """The evaluation rows of ``dataset`` (:data:`EVALUATION_SPLITS`), or a seeded sample of ``limit`` of them."""
    if dataset not in EVALUATION_SPLITS:
        raise InputError(f"Unknown span data set {dataset!r}; known: {', '.join(SPAN_DATASETS)}.{did_you_mean(dataset, SPAN_DATASETS)}")
    rows = load_span_rows(dataset=dataset, split=EVALUATION_SPLITS[dataset], data_dir=data_dir)
    return sample(rows, limit, seed) if limit is not None else rows


_FRANK_CLASSES = {"EntE": "Entity", "PredE": "Predicate", "CirE": "Circumstance", "CorefE": "Coreference", "LinkE": "Link",
                  "Others": "Other", "OutE": "Other", "GramE": "Grammar"}


def coarse_type(t: str) -> str:
    """One name per kind of error across the sets' type inventories (intrinsic/extrinsic folded together).

    >>> coarse_type("Extrinsic Entity Error"), coarse_type("PredE/intrinsic|whole-sentence-fallback"), coarse_type("Factual Hallucination")
    ('Entity', 'Predicate', 'Factual')
    """
    t = t.split("|")[0].strip()
    head = t.split("/")[0]
    if head in _FRANK_CLASSES:
        return _FRANK_CLASSES[head]
    words = t.replace(" Hallucination", "").replace(" Error", "").split()
    if len(words) > 1 and words[0] in ("Intrinsic", "Extrinsic"):
        words = words[1:]
    return " ".join(words) or "unknown"


# ----------------------------------------------------------------------------------- metrics

class _Range(NamedTuple):
    start: int
    end: int


def _mask(claim: str, spans: Sequence[Sequence[Any]]) -> list[bool]:
    m = _char_mask(len(claim), [_Range(s[0], s[1]) for s in spans])
    return [x and not c.isspace() for x, c in zip(m, claim)]


_WORD = re.compile(r"\w+")


def char_counts(claim: str, gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]]) -> tuple[int, int, int]:
    """``(true positive, predicted, gold)`` non-space characters of ``claim``.

    >>> char_counts("The cat sat", gold=[(4, 7)], pred=[(0, 7)])
    (3, 6, 3)
    """
    g, p = _mask(claim, gold), _mask(claim, pred)
    return sum(a and b for a, b in zip(g, p)), sum(p), sum(g)


def token_counts(claim: str, gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]]) -> tuple[int, int, int]:
    """``(true positive, predicted, gold)`` ``\\w+`` tokens; a token counts when any of its characters is marked.

    >>> token_counts("The cat sat", gold=[(4, 7)], pred=[(5, 9)])
    (1, 2, 1)
    """
    g, p = _mask(claim, gold), _mask(claim, pred)
    tp = np_ = ng = 0
    for m in _WORD.finditer(claim):
        gi, pi = any(g[m.start() : m.end()]), any(p[m.start() : m.end()])
        tp += gi and pi
        np_ += pi
        ng += gi
    return tp, np_, ng


def _prf(tp: float, pred: float, gold: float) -> dict[str, Any]:
    tp, pred, gold = float(tp), float(pred), float(gold)  # plain floats in the JSON, whatever the counts came as
    return {"precision": tp / pred if pred else None, "recall": tp / gold if gold else None, "f1": _f1_from(tp, pred, gold),
            "tp": int(tp), "predicted": int(pred), "gold": int(gold)}


def _check(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]]) -> None:
    if len(rows) != len(predictions):
        raise InputError(f"Got {len(rows)} rows but {len(predictions)} predictions; give one list of spans per row.")
    for r, pred in zip(rows, predictions):
        for s in pred:
            if len(s) < 2 or not (isinstance(s[0], int) and isinstance(s[1], int) and 0 <= s[0] < s[1] <= len(r.claim)):
                raise InputError(f"Row {r.id!r}: predicted span {tuple(s)!r} does not lie inside the claim ({len(r.claim)} characters).")


def span_prf(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]]) -> dict[str, Any]:
    """Character-level precision, recall and F1 pooled over ``rows`` (whitespace left out of both masks)."""
    _check(rows, predictions)
    c = [char_counts(r.claim, r.spans, p) for r, p in zip(rows, predictions)]
    return _prf(*(sum(x[k] for x in c) for k in range(3)))


def token_prf(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]]) -> dict[str, Any]:
    """Token-level precision, recall and F1 pooled over ``rows`` (tokens: ``\\w+`` runs)."""
    _check(rows, predictions)
    c = [token_counts(r.claim, r.spans, p) for r, p in zip(rows, predictions)]
    return _prf(*(sum(x[k] for x in c) for k in range(3)))


def example_scores(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]]) -> dict[str, Any]:
    """Example-level scores: flagged = at least one predicted span; gold positive = ``label == 0``.

    ``balanced_accuracy`` is the mean of the recall on positives and on negatives (None when either class is
    absent); ``flag_rate`` is the share flagged, ``base_rate`` the share of gold positives.

    >>> row = SpanRow(id="a", dataset="d", task="t", source="s", context=None, claim="ab", label=0, spans=((0, 1, "x"),), split="test")
    >>> example_scores([row], [[(0, 2)]])["f1"]
    1.0
    """
    _check(rows, predictions)
    n = len(rows)
    flag = [bool(p) for p in predictions]
    pos = [r.label == 0 for r in rows]
    tp = sum(f and g for f, g in zip(flag, pos))
    tn = sum(not f and not g for f, g in zip(flag, pos))
    npos, nneg = sum(pos), n - sum(pos)
    bacc = (tp / npos + tn / nneg) / 2 if npos and nneg else None
    return {**_prf(tp, sum(flag), npos), "balanced_accuracy": bacc, "flagged": sum(flag), "rows": n,
            "flag_rate": sum(flag) / n if n else None, "base_rate": npos / n if n else None}


def type_recall(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]], *,
                by: Callable[[str], str] = coarse_type) -> dict[str, dict[str, Any]]:
    """Character recall inside the gold spans of each type (``by`` maps the data set's type to the reported one)."""
    _check(rows, predictions)
    hit: dict[str, int] = {}
    tot: dict[str, int] = {}
    for r, pred in zip(rows, predictions):
        p = _mask(r.claim, pred)
        groups: dict[str, list[tuple[int, int, str]]] = {}
        for s in r.spans:
            groups.setdefault(by(s[2]), []).append(s)
        for t, spans in groups.items():
            g = _mask(r.claim, spans)
            hit[t] = hit.get(t, 0) + sum(a and b for a, b in zip(g, p))
            tot[t] = tot.get(t, 0) + sum(g)
    return {t: {"recall": hit[t] / tot[t] if tot[t] else None, "chars": tot[t]} for t in sorted(tot, key=lambda t: (-tot[t], t))}


def score_predictions(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]], *, n_boot: int = 1000,
                      seed: int = 0) -> dict[str, Any]:
    """Every metric of the module docstring for one predictor on one set of rows, with bootstrap intervals over rows."""
    import numpy as np

    _check(rows, predictions)
    chars = np.array([char_counts(r.claim, r.spans, p) for r, p in zip(rows, predictions)], dtype=float).reshape(-1, 3)
    toks = np.array([token_counts(r.claim, r.spans, p) for r, p in zip(rows, predictions)], dtype=float).reshape(-1, 3)
    ex = np.array([(bool(p) and r.label == 0, bool(p), r.label == 0) for r, p in zip(rows, predictions)], dtype=float).reshape(-1, 3)

    def ci(counts: Any) -> tuple[float | None, float | None]:
        return _bootstrap(lambda idx: _f1_from(*counts[idx].sum(axis=0)), len(rows), n_boot=n_boot, seed=seed)

    span = {**_prf(*chars.sum(axis=0)), "f1_ci95": ci(chars)}
    example = {**example_scores(rows, predictions), "f1_ci95": ci(ex)}
    return {"span": span, "token": _prf(*toks.sum(axis=0)), "example": example,
            "type_recall": type_recall(rows, predictions), "raw_type_recall": type_recall(rows, predictions, by=str),
            "rows": len(rows)}


# ----------------------------------------------------------------------------------- predictors

class SpanPredictor(Protocol):
    """Anything with ``name`` and ``predict(row) -> [(start, end), ...]`` (character ranges of ``row.claim``).

    A predictor may also offer ``predict_many(rows, progress=False)`` to batch, and ``describe() -> dict``.
    """

    name: str

    def predict(self, row: SpanRow) -> list[tuple[int, int]]: ...


class MarkEverything:
    """Every non-space character of the claim: recall 1 wherever there is something to find.

    >>> MarkEverything().predict(SpanRow(id="a", dataset="d", task="t", source="s", context=None, claim="a bc", label=1, spans=(), split="test"))
    [(0, 1), (2, 4)]
    """

    name = "mark-everything"

    def predict(self, row: SpanRow) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\S+", row.claim)]

    def describe(self) -> dict[str, Any]:
        return {"predictor": self.name, "rule": "every non-space character of the claim"}


_CLAIM_TOKEN = re.compile(r"\w+(?:[.,']\w+)*")  # numbers with inner separators stay whole (veridic.ling.lexical)
_NUM_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
              "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "hundred": "100", "thousand": "1000"}


def _number(t: str) -> str | None:
    t = _NUM_WORDS.get(t, t)
    digits = t.replace(",", "")
    return digits if re.fullmatch(r"\d+(?:\.\d+)?", digits) else None


def absent_words(*, source: str, claim: str) -> list[tuple[int, int]]:
    """The character ranges of ``claim``'s content words that ``source`` never uses (:class:`AbsentWords`' rule).

    >>> absent_words(source="It cost 1000 dollars in Rome.", claim="It cost 1,000 euros in Rome.")
    [(14, 19)]
    """
    words = set(lexical_tokens(source)) | {w.lower() for w in _WORD.findall(source)}
    numbers = {n for n in map(_number, words) if n is not None}
    out = []
    for m in _CLAIM_TOKEN.finditer(claim):
        tok = m.group(0).lower()
        if not content_words(tok) or tok in words:
            continue
        num = _number(tok)
        if num is not None and num in numbers:
            continue
        if num is None and all(p in words or not content_words(p) for p in _WORD.findall(tok)):
            continue
        out.append((m.start(), m.end()))
    return out


class AbsentWords:
    """Content words of the claim that the source never uses (case-insensitive; numbers compared by digits).

    A claim token (numbers keep inner separators: ``1,000``) is kept when its lower-cased form, each of its
    ``\\w+`` pieces ("Coleman's"), or its digits ("1,000" = "1000", "five" = "5") occur in the source; stop
    words (:func:`veridic.ling.lexical.content_words`) are never marked. The query of a query-focused summary
    (``row.context``) is not read: only the source counts as support.

    >>> r = SpanRow(id="a", dataset="d", task="t", source="It cost 1000 dollars in Rome.", context=None,
    ...             claim="It cost 1,000 euros in Rome.", label=0, spans=((14, 19, "x"),), split="test")
    >>> AbsentWords().predict(r)
    [(14, 19)]
    """

    name = "absent-words"

    def predict(self, row: SpanRow) -> list[tuple[int, int]]:
        return absent_words(source=row.source, claim=row.claim)

    def describe(self) -> dict[str, Any]:
        return {"predictor": self.name, "rule": "claim content words whose lower-cased form, pieces or digits the source never uses; stop words never marked",
                "context": "not read"}


class DetectorSpans:
    """The spans of a :class:`~veridic.detect._detector.HallucinationDetector` run on (source, claim).

    The claim is the passage and the source the evidence. ``row.context`` (a QMSum query) is not passed: the
    detector reads a query only to retrieve evidence when none is given, and the scorer it holds is called
    without contexts, so a query-focused summary is judged against its source alone. A claim the detector
    cannot judge (``judged=False``: not English, too short a source) gets no span; the count is in
    :meth:`describe` as ``not_judged``.
    """

    name = "detector"

    def __init__(self, detector: Any, *, batch_size: int = 32, name: str = "detector"):
        if batch_size < 1:
            raise InputError(f"batch_size must be >= 1; got {batch_size}.")
        self.name = name
        self.detector = detector
        self.batch_size = batch_size
        self.not_judged = 0

    def predict(self, row: SpanRow) -> list[tuple[int, int]]:
        return self.predict_many([row])[0]

    def predict_many(self, rows: Sequence[SpanRow], *, progress: bool = False) -> list[list[tuple[int, int]]]:
        from tqdm.auto import tqdm

        out: list[list[tuple[int, int]]] = []
        with tqdm(total=len(rows), desc=self.name, unit="row", disable=not progress) as bar:
            for k in range(0, len(rows), self.batch_size):
                chunk = rows[k : k + self.batch_size]
                res = self.detector.detect_many(passages=[r.claim for r in chunk], evidences=[r.source for r in chunk])
                for r in res:
                    self.not_judged += not r.judged
                    out.append([(s.start, s.end) for s in r.spans])
                bar.update(len(chunk))
        return out

    def describe(self) -> dict[str, Any]:
        d = self.detector.describe() if hasattr(self.detector, "describe") else {"detector": type(self.detector).__name__}
        return {"predictor": self.name, "detector": d, "context": "not passed (the detector reads a query only for retrieval)",
                "not_judged": self.not_judged}


class TaggerSpans:
    """The spans of a learned :class:`~veridic.detect._tagger.SpanTagger` (``predict(sources=, claims=)``) on (source, claim).

    As with :class:`DetectorSpans`, ``row.context`` is not read.
    """

    name = "tagger"

    def __init__(self, tagger: Any, *, batch_size: int = 64):
        if batch_size < 1:
            raise InputError(f"batch_size must be >= 1; got {batch_size}.")
        self.tagger = tagger
        self.batch_size = batch_size

    def predict(self, row: SpanRow) -> list[tuple[int, int]]:
        return self.predict_many([row])[0]

    def predict_many(self, rows: Sequence[SpanRow], *, progress: bool = False) -> list[list[tuple[int, int]]]:
        from tqdm.auto import tqdm

        out: list[list[tuple[int, int]]] = []
        with tqdm(total=len(rows), desc="tagger", unit="row", disable=not progress) as bar:
            for k in range(0, len(rows), self.batch_size):
                chunk = rows[k : k + self.batch_size]
                res = self.tagger.predict(sources=[r.source for r in chunk], claims=[r.claim for r in chunk])
                out.extend([(s.start, s.end) for s in spans] for spans in res)
                bar.update(len(chunk))
        return out

    def describe(self) -> dict[str, Any]:
        d = self.tagger.describe() if hasattr(self.tagger, "describe") else {"tagger": type(self.tagger).__name__}
        return {"predictor": self.name, "tagger": d, "context": "not read"}


#: The trivial baselines, by name; every report carries both.
BASELINES: dict[str, Callable[[], Any]] = {"mark-everything": MarkEverything, "absent-words": AbsentWords}


# ----------------------------------------------------------------------------------- the benchmark

def _run(predictor: Any, rows: Sequence[SpanRow], progress: bool) -> list[list[tuple[int, int]]]:
    if hasattr(predictor, "predict_many"):
        return [list(p) for p in predictor.predict_many(rows, progress=progress)]
    return [list(predictor.predict(r)) for r in rows]


def example_f1_difference(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]],
                          reference: Sequence[Sequence[Sequence[int]]], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Example F1 of ``predictions`` minus that of ``reference`` on the same rows, with a paired bootstrap interval
    (the same resampled rows for both; the resamples of :func:`score_predictions` with the same ``seed``).

    >>> ok = SpanRow(id="a", dataset="d", task="t", source="s", context=None, claim="ab", label=1, spans=(), split="test")
    >>> bad = SpanRow(id="b", dataset="d", task="t", source="s", context=None, claim="ab", label=0, spans=((0, 1, "x"),), split="test")
    >>> round(example_f1_difference([ok, bad], [[], [(0, 1)]], [[(0, 2)], [(0, 2)]], n_boot=0)["diff"], 3)  # 1.0 - 0.667
    0.333
    """
    import numpy as np

    _check(rows, predictions)
    _check(rows, reference)

    def counts(preds: Sequence[Sequence[Sequence[int]]]) -> Any:
        return np.array([(bool(p) and r.label == 0, bool(p), r.label == 0) for r, p in zip(rows, preds)], dtype=float).reshape(-1, 3)

    a, b = counts(predictions), counts(reference)

    def diff(idx: Any) -> float | None:
        fa, fb = _f1_from(*a[idx].sum(axis=0)), _f1_from(*b[idx].sum(axis=0))
        return None if fa is None or fb is None else float(fa - fb)

    d = diff(np.arange(len(rows)))
    return {"diff": d, "ci95": _bootstrap(diff, len(rows), n_boot=n_boot, seed=seed)}


def recall_by_group(rows: Sequence[SpanRow], predictions: Sequence[Sequence[Sequence[int]]], groups: Sequence[str]) -> dict[str, Any]:
    """Character span P/R/F1 within each group of rows (``groups[i]`` names row i's group), e.g. whether a model saw
    the whole source. No intervals: the groups are descriptive."""
    import numpy as np

    _check(rows, predictions)
    if len(groups) != len(rows):
        raise InputError(f"Got {len(rows)} rows but {len(groups)} group names; give one per row.")
    out: dict[str, Any] = {}
    for g in dict.fromkeys(groups):
        idx = [i for i, x in enumerate(groups) if x == g]
        chars = np.array([char_counts(rows[i].claim, rows[i].spans, predictions[i]) for i in idx], dtype=float).reshape(-1, 3)
        out[g] = {"rows": len(idx), "with_span": sum(rows[i].label == 0 for i in idx), **_prf(*chars.sum(axis=0))}
    return out


class SpanCheckpoints:
    """Each predictor's predictions on each set, kept in a folder as they finish, so that a long span benchmark
    (a base-size tagger takes hours on two cores) resumes where it was stopped instead of starting again.

    A file per (predictor, set), written atomically, holds the predictions, the wall time and any abstentions
    counted (``not_judged``). ``stamp.json`` records what the folder was computed for: each predictor's
    :meth:`describe` and the ids and texts of the rows. A folder stamped for anything else is emptied first, with a
    message, so predictions are never reused for another predictor or other rows.

    >>> import tempfile
    >>> r = SpanRow(id="a", dataset="demo", task="t", source="Tom met Ann.", context=None, claim="Tom met Bob.", label=0,
    ...             spans=((8, 11, "entity"),), split="test")
    >>> folder = tempfile.mkdtemp()
    >>> ck = SpanCheckpoints(folder, predictors={"absent-words": AbsentWords()}, data={"demo": [r]})
    >>> ck.save("absent-words", "demo", [[(8, 11)]], 0.5)
    >>> SpanCheckpoints(folder, predictors={"absent-words": AbsentWords()}, data={"demo": [r]}).load("absent-words", "demo")
    ([[(8, 11)]], 0.5)
    """

    STAMP = "stamp.json"

    def __init__(self, folder: str | Path, *, predictors: Mapping[str, Any], data: Mapping[str, Sequence[SpanRow]]):
        import hashlib
        import json

        self.folder = Path(folder)
        self.predictors = predictors
        self.sizes = {name: len(rs) for name, rs in data.items()}
        rows = {name: hashlib.sha256(json.dumps([[r.id, r.source, r.claim] for r in rs]).encode()).hexdigest()
                for name, rs in data.items()}
        self.stamp = {"predictors": {p: _stable_description(v) for p, v in predictors.items()}, "rows": rows}
        stamp_file = self.folder / self.STAMP
        if stamp_file.exists():
            try:
                old = json.loads(stamp_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                old = None
            if old != self.stamp:
                stale = sorted(self.folder.glob("*.predictions.json"))
                print(f"span benchmark: {self.folder} holds predictions for other predictors or rows; "
                      f"computing again (removing {len(stale)} saved files).", flush=True)
                for f in stale:
                    f.unlink()
        self.folder.mkdir(parents=True, exist_ok=True)
        from veridic.io._atomic import atomic_write_text

        atomic_write_text(stamp_file, json.dumps(self.stamp, indent=1, sort_keys=True, default=str) + "\n")

    def _file(self, predictor: str, dataset: str) -> Path:
        return self.folder / (re.sub(r"[^\w.-]+", "_", f"{predictor}--{dataset}") + ".predictions.json")

    def load(self, predictor: str, dataset: str) -> tuple[list[list[tuple[int, int]]], float] | None:
        """The saved predictions and seconds of ``predictor`` on ``dataset``, or None when not finished (or unreadable)."""
        import json

        f = self._file(predictor, dataset)
        try:
            got = json.loads(f.read_text(encoding="utf-8"))
            preds = [[(int(a), int(b)) for a, b in row] for row in got["predictions"]]
            secs, not_judged = float(got["seconds"]), int(got.get("not_judged", 0))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            print(f"span benchmark: {f} is unreadable; computing it again.", flush=True)
            return None
        if dataset in self.sizes and len(preds) != self.sizes[dataset]:
            print(f"span benchmark: {f} holds {len(preds)} rows, not {self.sizes[dataset]}; computing it again.", flush=True)
            return None
        pred = self.predictors[predictor]
        if not_judged and hasattr(pred, "not_judged"):
            pred.not_judged += not_judged  # the abstentions of the resumed part, so describe() counts the whole run
        return preds, secs

    def save(self, predictor: str, dataset: str, predictions: Sequence[Sequence[tuple[int, int]]], seconds: float,
             *, not_judged: int = 0) -> None:
        import json

        from veridic.io._atomic import atomic_write_text

        atomic_write_text(self._file(predictor, dataset), json.dumps(
            {"predictor": predictor, "dataset": dataset, "seconds": seconds, "not_judged": not_judged,
             "predictions": [[list(s) for s in row] for row in predictions]}) + "\n")

    @classmethod
    def remove(cls, folder: str | Path) -> None:
        """Remove a folder's saved predictions and stamp (once the finished report holds what they were for)."""
        folder = Path(folder)
        for f in folder.glob("*.predictions.json"):
            f.unlink()
        (folder / cls.STAMP).unlink(missing_ok=True)
        try:
            folder.rmdir()
        except OSError:
            pass  # something else lives there: leave the folder


def _stable_description(predictor: Any) -> Any:
    """A predictor's :meth:`describe` without the counts that grow while it runs (``not_judged``)."""
    import json

    d = predictor.describe() if hasattr(predictor, "describe") else {"predictor": type(predictor).__name__}
    d = json.loads(json.dumps(d, default=str))
    if isinstance(d, dict):
        d.pop("not_judged", None)
    return d


def span_benchmark(*, predictors: Mapping[str, Any], datasets: Sequence[str] = SPAN_DATASETS, data_dir: str | Path | None = None,
                   limit: int | None = None, seed: int = 0, n_boot: int = 1000, boot_seed: int = 0, progress: bool = False,
                   rows: Mapping[str, Sequence[SpanRow]] | None = None, versus: str | None = "mark-everything",
                   group_of: Callable[[SpanRow], str] | None = None, checkpoint_dir: str | Path | None = None) -> dict[str, Any]:
    """Score every predictor on the evaluation rows of each set in ``datasets``, and on all of them pooled.

    ``limit``: a seeded sample of that many rows per set (:func:`sample` with ``seed``). ``rows``: rows to use
    instead of reading the sets (by set name). ``n_boot`` resamples seeded with ``boot_seed`` give the intervals.
    Each predictor's wall time is reported as ``seconds`` beside its scores. When ``versus`` names one of the
    predictors, every other one also gets ``example_f1_vs``: its example F1 minus that one's, with a paired
    interval (flagging every claim already scores well on example F1, so a flagger is read against it).
    ``group_of`` names a group per row (e.g. whether the tagger saw the whole source): span P/R/F1 per group
    (``by_group``) for every predictor. ``checkpoint_dir`` keeps each predictor's predictions on each set as
    they finish (:class:`SpanCheckpoints`), so a run that is stopped resumes at the next unfinished pair.

    >>> r = SpanRow(id="a", dataset="demo", task="t", source="Tom met Ann.", context=None, claim="Tom met Bob.", label=0,
    ...             spans=((8, 11, "entity"),), split="test")
    >>> rep = span_benchmark(predictors={"absent-words": AbsentWords()}, datasets=["demo"], rows={"demo": [r]}, n_boot=0)
    >>> rep["sets"]["demo"]["predictors"]["absent-words"]["span"]["f1"]
    1.0
    """
    if not predictors:
        raise InputError("Give at least one predictor.")
    if not datasets:
        raise InputError("Give at least one data set.")
    if limit is not None and limit < 1:
        raise InputError(f"limit must be >= 1 rows per set; got {limit}.")
    data = {}
    for name in dict.fromkeys(datasets):
        if rows is not None and name in rows:
            data[name] = sample(rows[name], limit, seed) if limit is not None else list(rows[name])
        else:
            data[name] = evaluation_rows(name, data_dir=data_dir, limit=limit, seed=seed)
        if not data[name]:
            raise InputError(f"Data set {name!r} has no rows to evaluate.")
    sets: dict[str, Any] = {}
    preds: dict[str, dict[str, list[list[tuple[int, int]]]]] = {p: {} for p in predictors}
    saved = SpanCheckpoints(checkpoint_dir, predictors=predictors, data=data) if checkpoint_dir is not None else None
    for name, rs in data.items():
        sets[name] = {"rows": len(rs), "positives": sum(r.label == 0 for r in rs), "split": EVALUATION_SPLITS.get(name) or "all",
                      "with_context": sum(r.context is not None for r in rs), "predictors": {}}
        for pname, pred in predictors.items():
            done = saved.load(pname, name) if saved is not None else None
            if done is not None:
                preds[pname][name], secs = done
            else:
                t = time.perf_counter()
                before = getattr(pred, "not_judged", 0)
                preds[pname][name] = _run(pred, rs, progress)
                secs = time.perf_counter() - t
                if saved is not None:
                    saved.save(pname, name, preds[pname][name], secs, not_judged=getattr(pred, "not_judged", 0) - before)
            sets[name]["predictors"][pname] = {**score_predictions(rs, preds[pname][name], n_boot=n_boot, seed=boot_seed),
                                               "seconds": round(secs, 3)}
        _extras(sets[name]["predictors"], rs, {p: preds[p][name] for p in predictors}, versus, group_of, n_boot, boot_seed)
    pooled_rows = [r for rs in data.values() for r in rs]
    pooled = {"rows": len(pooled_rows), "positives": sum(r.label == 0 for r in pooled_rows), "sets": list(data), "predictors": {}}
    pooled_preds = {p: [x for name in data for x in preds[p][name]] for p in predictors}
    for pname in predictors:
        pooled["predictors"][pname] = {**score_predictions(pooled_rows, pooled_preds[pname], n_boot=n_boot, seed=boot_seed),
                                       "seconds": round(sum(sets[n]["predictors"][pname]["seconds"] for n in data), 3)}
    _extras(pooled["predictors"], pooled_rows, pooled_preds, versus, group_of, n_boot, boot_seed)
    return {
        "sets": sets,
        "pooled": pooled,
        "predictors": {p: (v.describe() if hasattr(v, "describe") else {"predictor": p}) for p, v in predictors.items()},
        "data": {"data_dir": str(data_dir) if data_dir is not None else str(default_data_dir("spans")), "limit": limit, "seed": seed,
                 "ids": {name: [r.id for r in rs] for name, rs in data.items()} if limit is not None else None},
        "bootstrap": {"resamples": n_boot, "seed": boot_seed, "unit": "row", "interval": "95 % percentile", "paired": True},
        "metric": {
            "span": "character-level P/R/F1 pooled over rows; whitespace excluded from gold and predicted masks",
            "token": "token-level P/R/F1 pooled over rows; tokens are \\w+ runs, marked when any character is",
            "example": "flagged = at least one predicted span; positive = label 0 (at least one gold span); balanced accuracy = mean recall of the two classes",
            "type_recall": "share of non-space characters inside gold spans of a type that are predicted (coarse types; raw_type_recall: the set's own)",
        },
    }


def _extras(out: dict[str, Any], rows: Sequence[SpanRow], preds: Mapping[str, Sequence[Sequence[Sequence[int]]]], versus: str | None,
            group_of: Callable[[SpanRow], str] | None, n_boot: int, seed: int) -> None:
    groups = [group_of(r) for r in rows] if group_of is not None else None
    for pname, pp in preds.items():
        if versus in preds and pname != versus:
            out[pname]["example_f1_vs"] = {"reference": versus, **example_f1_difference(rows, pp, preds[versus], n_boot=n_boot, seed=seed)}
        if groups is not None:
            out[pname]["by_group"] = recall_by_group(rows, pp, groups)


def _f(x: float | None, nd: int = 2) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _ci(c: Sequence[float | None] | None) -> str:
    return "" if not c or c[0] is None else f" [{c[0]:.2f}, {c[1]:.2f}]"


def _line(label: str, n: int, pos: int, pname: str, s: dict[str, Any]) -> str:
    sp, ex = s["span"], s["example"]
    types = ", ".join(f"{t} {_f(v['recall'])}" for t, v in s["type_recall"].items())
    return (f"| {label} | {n} ({pos}) | {pname} | {_f(sp['f1'])}{_ci(sp.get('f1_ci95'))} | {_f(sp['precision'])} / {_f(sp['recall'])} "
            f"| {_f(s['token']['f1'])} | {_f(ex['f1'])}{_ci(ex.get('f1_ci95'))} | {_f(ex['balanced_accuracy'])} "
            f"| {_f(ex['flag_rate'])} / {_f(ex['base_rate'])} | {types} |")


def render_markdown(report: dict[str, Any]) -> str:
    """The report of :func:`span_benchmark` as one Markdown table: a line per (set, predictor), then the pooled lines."""
    head = ("| set | rows (with span) | predictor | span F1 [95 % CI] | span P / R | token F1 | example F1 [95 % CI] | BAcc "
            "| flagged / base rate | char recall by gold type |\n|---|---:|---|---|---|---:|---|---:|---|---|\n")
    lines = []
    for name, st in report["sets"].items():
        for pname, s in st["predictors"].items():
            lines.append(_line(name, st["rows"], st["positives"], pname, s))
    po = report["pooled"]
    for pname, s in po["predictors"].items():
        lines.append(_line("**pooled**", po["rows"], po["positives"], pname, s))
    vs = [(label, pname, s["example_f1_vs"]) for label, st in [*report["sets"].items(), ("**pooled**", report["pooled"])]
          for pname, s in st["predictors"].items() if "example_f1_vs" in s]
    if vs:
        lines += ["", f"Example F1 minus {vs[0][2]['reference']}'s on the same rows (paired bootstrap):", "",
                  "| set | predictor | difference [95 % CI] |", "|---|---|---|"]
        lines += [f"| {label} | {pname} | {_f(v['diff'], 3)}{_ci(v.get('ci95'))} |" for label, pname, v in vs]
    grouped = [(label, pname, s["by_group"]) for label, st in [*report["sets"].items(), ("**pooled**", report["pooled"])]
               for pname, s in st["predictors"].items() if "by_group" in s]
    if grouped:
        lines += ["", "Span F1 and recall by row group:", "", "| set | predictor | group | rows (with span) | span F1 | span P / R |",
                  "|---|---|---|---:|---:|---|"]
        lines += [f"| {label} | {pname} | {g} | {v['rows']} ({v['with_span']}) | {_f(v['f1'])} | {_f(v['precision'])} / {_f(v['recall'])} |"
                  for label, pname, groups in grouped for g, v in groups.items()]
    d, b = report["data"], report["bootstrap"]
    which = "all evaluation rows" if d["limit"] is None else f"a seeded sample of {d['limit']} per set (seed {d['seed']})"
    note = (f"\nSpan F1: characters pooled over rows, whitespace excluded; token F1 over `\\w+` tokens; example F1: flagged = any "
            f"predicted span, positive = any gold span; {b['resamples']} bootstrap resamples over rows (seed {b['seed']}). "
            f"Rows: {which}.\n")
    return head + "\n".join(lines) + "\n" + note


def write_span_report(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``spans.json`` and ``spans.md`` into ``out_dir`` (created), each atomically."""
    import json

    from veridic.io._atomic import atomic_write_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    js, md = out / "spans.json", out / "spans.md"
    atomic_write_text(js, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    atomic_write_text(md, render_markdown(report))
    return js, md
