"""Lexical-overlap baseline scorer (model-free): the lexical half of the hybrid default.

>>> from veridic.factory import build_scorer
>>> build_scorer("overlap").score(sources=["The cat sat."], claims=["The cat ran."])[0].score
0.5
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from veridic.config import ScorerConfig
from veridic.errors import ConfigError, InputError
from veridic.ling.lexical import lexical_features
from veridic.types import Label, Verdict

__all__ = ["OverlapScorer"]


_NGRAMS = {"overlap": 1, "overlap-bigram": 2}


class OverlapScorer:
    """Lexical baseline: the fraction of the claim's n-grams found in the source.

    The n-grams are those of :func:`veridic.ling.lexical.lexical_features`, the same
    features the hybrid scorer combines with NLI, so the baseline rows of a
    benchmark are exactly the lexical half of the shipped default.
    ``ngram=1``: content-word unigrams (lower-cased, stop words removed; a
    claim with no content words falls back to all its tokens). ``ngram=2``:
    bigrams over all lower-cased tokens (removing stop words first would invent
    adjacencies); a one-token claim falls back to the unigram share. A claim
    with no tokens at all (punctuation only) asserts nothing checkable, so it
    scores 1.0. ``e``, ``n``, ``c`` are NaN: this is not a probability model.

    Built by :func:`veridic.factory.build_scorer` from methods ``overlap`` (unigrams) and ``overlap-bigram``.

    >>> OverlapScorer(ScorerConfig(method="overlap-bigram")).score(sources=["a b c"], claims=["a b d"])[0].score
    0.5
    """

    granularity = "document"
    sentence_threshold = 0.5

    def __init__(self, config: ScorerConfig | None = None, backend: Any = None, resources: Any = None) -> None:
        config = config or ScorerConfig(method="overlap")
        ngram = _NGRAMS.get(config.method)
        if ngram is None:
            raise ConfigError(f"OverlapScorer computes methods {', '.join(map(repr, _NGRAMS))}; got method={config.method!r}.")
        self.config = config
        self.ngram = ngram
        # The label is an uncalibrated convenience; the benchmark only ranks by score.
        self.threshold = config.decision_threshold
        self.name = config.label
        self._feature = "overlap_unigram" if ngram == 1 else "overlap_bigram"

    def _one(self, source: str, claim: str) -> float:
        return lexical_features(source=source, claim=claim)[self._feature]

    def score(
        self,
        *,
        sources: Sequence[str],
        claims: Sequence[str],
        contexts: Sequence[str | None] | None = None,
        progress: bool = False,
    ) -> list[Verdict]:
        if len(sources) != len(claims):
            raise InputError(f"sources and claims must be equally long; got {len(sources)} and {len(claims)}.")
        nan = float("nan")
        out = []
        for src, claim in zip(sources, claims):
            s = self._one(src, claim)
            out.append(Verdict(score=s, label=self.decide(s), e=nan, n=nan, c=nan,
                               uncertainty=None, method=self.name, model="none"))
        return out

    def decide(self, score: float, uncertainty: float | None = None) -> Label:
        return "supported" if score >= self.threshold else "unsupported"

    def describe(self) -> dict[str, Any]:
        return {
            "model": None,
            "revision": None,
            "method": "overlap",
            "ngram": self.ngram,
            "features": f"veridic.ling.lexical {self._feature}",
            "mc_samples": 0,
            "granularity": "document",
            "aggregation": "fraction of claim n-grams in source",
            "parameters": 0,
            "model_calls_per_example": 0,
        }
