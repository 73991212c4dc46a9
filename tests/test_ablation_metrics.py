"""Margin arithmetic of factual ablation and its bootstrap CIs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.ablation._metrics import LOG_100, LOG_1000, bootstrap_ci, margin_accuracy, parse_margins, summarize
from veridic.errors import ConfigError, InputError

finite = st.floats(min_value=-50, max_value=50, allow_nan=False)


def test_margins_are_natural_logs():
    assert LOG_100 == pytest.approx(4.605170, abs=1e-6)
    assert LOG_1000 == pytest.approx(6.907755, abs=1e-6)


def test_margin_means_times_less_likely():
    # y is 1000x less likely under g' than under g: passes m = log 100, fails m = log 1000 (strict >).
    d = math.log(0.5) - math.log(0.0005)
    assert margin_accuracy(differences=[d], margin=LOG_100) == 1.0
    assert margin_accuracy(differences=[999.0 / 1000 * LOG_1000], margin=LOG_1000) == 0.0
    # 50x less likely: an accuracy success, not a margin success.
    d50 = math.log(50)
    assert margin_accuracy(differences=[d50], margin=0.0) == 1.0
    assert margin_accuracy(differences=[d50], margin=LOG_100) == 0.0


def test_ties_fail():
    assert margin_accuracy(differences=[0.0, 0.0, 1e-9], margin=0.0) == pytest.approx(1 / 3)
    assert margin_accuracy(differences=[2.0], margin=2.0) == 0.0


def test_matches_the_authors_formula():
    # score_zeroshot_gpt2.py: sum(v[1] - v[0] > margin) / len, with v = (nll_true, nll_false).
    rng = np.random.default_rng(0)
    nll_true, nll_false = rng.gamma(5, 3, 50), rng.gamma(5, 3, 50)
    theirs = sum((f - t) > LOG_100 for t, f in zip(nll_true, nll_false)) / 50
    ours = margin_accuracy(differences=list((-nll_true) - (-nll_false)), margin=LOG_100)
    assert ours == pytest.approx(theirs)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=1, max_size=40), st.floats(min_value=0, max_value=10), st.floats(min_value=0, max_value=10), st.randoms())
def test_properties(diffs, m1, m2, rnd):
    lo, hi = sorted((m1, m2))
    assert margin_accuracy(differences=diffs, margin=hi) <= margin_accuracy(differences=diffs, margin=lo)  # monotone
    shuffled = list(diffs)
    rnd.shuffle(shuffled)
    assert margin_accuracy(differences=shuffled, margin=lo) == margin_accuracy(differences=diffs, margin=lo)  # order-free
    assert 0.0 <= margin_accuracy(differences=diffs, margin=lo) <= 1.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.booleans(), min_size=2, max_size=60))
def test_bootstrap_ci_brackets_the_estimate(successes):
    lo, hi = bootstrap_ci(successes=successes, n_resamples=300, seed=1)
    p = float(np.mean(successes))
    assert 0.0 <= lo <= p + 1e-9 and p - 1e-9 <= hi <= 1.0


def test_group_bootstrap_is_seeded_and_not_narrower_for_correlated_pairs():
    # Pairs that always agree: resampling pairs must not shrink the CI below resampling items.
    s = [True, True, False, False] * 10
    groups = [str(i // 2) for i in range(40)]
    a = bootstrap_ci(successes=s, groups=groups, n_resamples=2000, seed=3)
    assert a == bootstrap_ci(successes=s, groups=groups, n_resamples=2000, seed=3)
    b = bootstrap_ci(successes=s, n_resamples=2000, seed=3)
    assert (a[1] - a[0]) >= (b[1] - b[0]) - 0.02


def test_summarize_reports_every_margin():
    rows = summarize(differences=[5.0, 0.5, -1.0, 7.0], margins=(0.0, LOG_100, LOG_1000), n_resamples=50)
    assert [r.name for r in rows] == ["accuracy", "margin_accuracy@4.605", "margin_accuracy@6.908"]
    assert [r.value for r in rows] == [0.75, 0.5, 0.25]
    assert all(r.greater_is_better and r.n == 4 for r in rows)


def test_validation_messages():
    with pytest.raises(InputError, match="finite"):
        margin_accuracy(differences=[float("nan")], margin=0.0)
    with pytest.raises(InputError, match="non-empty"):
        margin_accuracy(differences=[], margin=0.0)
    with pytest.raises(ConfigError, match=">= 0"):
        margin_accuracy(differences=[1.0], margin=-1.0)
    with pytest.raises(ConfigError, match="logN"):
        parse_margins("0,lg100")
    assert parse_margins("0,log100") == (0.0, LOG_100)
