import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from veridic import ScorerConfig, build_scorer
from veridic.aggregate import SOURCE_AGGREGATIONS, discount_by_contradiction
from veridic.errors import ConfigError
from veridic.nli._dummy import CONTRA, ENTAIL, DummyNLIBackend

# The user's example: the source puts the new station in Malargüe and names Cebreros for another one.
SRC = "The new station is in Malargüe, Argentina. It has a 35-metre antenna. ESA also runs a station in Cebreros, Spain."


class PlaceBackend(DummyNLIBackend):
    """Entails everything, except that a window naming Malargüe contradicts a claim naming Cebreros."""

    def predict(self, premises, hypotheses, *, mc_samples=0, seed=0, progress=False):
        self.calls.append((list(premises), list(hypotheses), mc_samples))
        out = np.array([CONTRA if ("Malargüe" in p and "Cebreros" in h) else ENTAIL for p, h in zip(premises, hypotheses)], dtype=float)
        return np.repeat(out[:, None, :], mc_samples, axis=1) if mc_samples else out


def _score(claim: str, agg: str, **kw):
    cfg = ScorerConfig(method="e-c", source_aggregation=agg, structure_check=False, verbatim_support=False, **kw)
    return build_scorer(cfg, backend=PlaceBackend()).score(sources=[SRC], claims=[claim])[0]


def test_a_window_that_contradicts_overrules_one_that_supports():
    claim = "The new station is in Cebreros, Spain."
    kept, nowhere = _score(claim, "max"), _score(claim, "uncontradicted")
    assert kept.label == "supported" and kept.score == pytest.approx(ENTAIL[0] - ENTAIL[2])
    assert nowhere.label == "unsupported"
    assert nowhere.c == pytest.approx(CONTRA[2])
    # e keeps the best window's share of what contradiction leaves: 0.9 × 0.12 / 0.98.
    assert nowhere.e == pytest.approx(ENTAIL[0] * (1 - CONTRA[2]) / (ENTAIL[0] + ENTAIL[1]))
    assert nowhere.score == pytest.approx(nowhere.e - nowhere.c)
    # The evidence is still the window that supports the claim, with offsets into the source.
    ev = nowhere.sentences[0].evidence
    assert ev == kept.sentences[0].evidence and "Cebreros" in SRC[ev.start:ev.end]


def test_nothing_changes_when_no_window_contradicts():
    claim = "It has a 35-metre antenna."
    assert _score(claim, "uncontradicted") == _score(claim, "max")


def test_monte_carlo_samples_are_discounted_too():
    v = _score("The new station is in Cebreros, Spain.", "uncontradicted", mc_samples=3)
    assert v.c == pytest.approx(CONTRA[2]) and v.uncertainty == pytest.approx(0.0)


def test_an_unknown_aggregation_names_the_known_ones():
    with pytest.raises(ConfigError, match="uncontradicted"):
        ScorerConfig(source_aggregation="uncontradictd")
    assert "uncontradicted" in SOURCE_AGGREGATIONS


probs = arrays(np.float64, (5, 3), elements=st.floats(0.0, 1.0)).map(lambda a: a / np.maximum(a.sum(axis=1, keepdims=True), 1e-9))


@given(best=probs.filter(lambda a: np.allclose(a.sum(axis=1), 1.0)), c_any=arrays(np.float64, (5,), elements=st.floats(0.0, 1.0)))
def test_discounting_keeps_a_distribution_and_raises_only_contradiction(best, c_any):
    out = discount_by_contradiction(best, c_any)
    assert out.shape == best.shape
    assert np.allclose(out.sum(axis=1), 1.0)
    assert np.all(out[:, 2] >= best[:, 2] - 1e-12)
    assert np.all((out[:, 2] >= c_any - 1e-12) | (best[:, :2].sum(axis=1) == 0))
    assert np.all(out[:, 0] <= best[:, 0] + 1e-12)
    # Entailment and neutral keep their proportion.
    assert np.allclose(out[:, 0] * best[:, 1], out[:, 1] * best[:, 0], atol=1e-9)
    # A contradiction elsewhere weaker than the best window's own changes nothing.
    assert np.allclose(discount_by_contradiction(best, np.zeros(5)), best)


class ArgentinaBackend(PlaceBackend):
    """Entails everything, except that a window naming Argentina contradicts a claim naming Cebreros."""

    def predict(self, premises, hypotheses, *, mc_samples=0, seed=0, progress=False):
        out = np.array([CONTRA if ("Argentina" in p and "Cebreros" in h) else ENTAIL for p, h in zip(premises, hypotheses)], dtype=float)
        return np.repeat(out[:, None, :], mc_samples, axis=1) if mc_samples else out


def _gated(claim: str, agg: str):
    cfg = ScorerConfig(method="e-c", source_aggregation=agg, structure_check=False, verbatim_support=False)
    return build_scorer(cfg, backend=ArgentinaBackend()).score(sources=[SRC], claims=[claim])[0]


def test_the_relevant_variant_counts_only_windows_holding_half_the_claims_content_words():
    # "new" and "station" of four content words: the Malargüe window is relevant enough to contradict.
    relevant = "The new station is in Cebreros, Spain."
    assert _gated(relevant, "uncontradicted-relevant").label == "unsupported"
    # One content word of five ("station"): under the gate the Malargüe window says nothing about this claim.
    aside = "ESA runs a station in Cebreros, Spain."
    assert _gated(aside, "uncontradicted").label == "unsupported"
    assert _gated(aside, "uncontradicted-relevant") == _gated(aside, "max")
