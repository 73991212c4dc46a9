"""The NLI-classifier baseline with a fake scorer (the real one needs the embedded NLI model)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from veridic import ScorerConfig, build_scorer
from veridic.ablation._data import AblationExample
from veridic.ablation._nli_baseline import nli_baseline


class FakeScorer:
    """Score = fraction of the claim's words found in the source (ties possible)."""

    def __init__(self):
        self.calls = []

    def score(self, *, sources, claims, contexts=None, progress=False):
        self.calls.append((list(sources), list(claims)))
        out = []
        for s, c in zip(sources, claims):
            words = c.lower().split()
            out.append(SimpleNamespace(score=sum(w in s.lower().split() for w in words) / len(words)))
        return out

    def describe(self):
        return {"scorer": "fake", "aggregation": {"claim": "mean"}}


EX = [
    AblationExample(grounding="four miners stuck", ablated_grounding="two miners stuck", context="", target="four miners", id="1", group="a"),
    AblationExample(grounding="two miners stuck", ablated_grounding="four miners stuck", context="", target="two miners", id="2", group="a"),
    AblationExample(grounding="in june", ablated_grounding="in july", context="", target="it rained", id="3", group="b"),  # a tie
]


def test_counts_wins_of_the_true_grounding_and_ties_fail():
    fake = FakeScorer()
    r = nli_baseline(examples=EX, scorer=fake, n_resamples=100)
    assert r.accuracy == pytest.approx(2 / 3) and r.ties == 1 and r.n == 3
    assert r.name == "nli-mean" and r.ci_low <= r.accuracy <= r.ci_high
    # One batched call: targets against g, then against g'.
    (sources, claims), = fake.calls
    assert sources == [e.grounding for e in EX] + [e.ablated_grounding for e in EX]
    assert claims == [e.target for e in EX] * 2
    assert "scores_grounded" not in r.to_dict() and len(r.to_dict(with_scores=True)["scores_ablated"]) == 3


def test_works_with_veridic_nli_scorer_on_a_tiny_model(tiny_backend):

    for agg in ("mean", "min"):
        scorer = build_scorer(ScorerConfig(method="e-c", granularity="sentence", claim_aggregation=agg, structure_check=False), backend=tiny_backend)
        r = nli_baseline(examples=EX, scorer=scorer, n_resamples=20)
        assert 0.0 <= r.accuracy <= 1.0 and r.scorer["aggregation"]["claim"] == agg
