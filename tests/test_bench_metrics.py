"""Property and reference tests of the benchmark statistics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from veridic.bench import _metrics as M
from veridic.errors import InputError

# Labelled score lists with both classes; small integer scores force ties.
labelled = st.integers(min_value=4, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n).filter(lambda y: 0 < sum(y) < len(y)),
        st.lists(st.integers(-5, 5), min_size=n, max_size=n),
    )
)


@settings(max_examples=60, deadline=None)
@given(labelled)
def test_auc_equals_mann_whitney_u(data):
    y, s = data
    y, s = np.array(y), np.array(s, dtype=float)
    u = mannwhitneyu(s[y == 1], s[y == 0], alternative="two-sided").statistic
    assert M.roc_auc(labels=y, scores=s) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(labelled, st.randoms(use_true_random=False))
def test_auc_is_invariant_to_row_order(data, rnd):
    y, s = data
    idx = list(range(len(y)))
    rnd.shuffle(idx)
    assert M.roc_auc(labels=y, scores=s) == pytest.approx(M.roc_auc(labels=[y[i] for i in idx], scores=[s[i] for i in idx]))


@settings(max_examples=40, deadline=None)
@given(labelled)
def test_label_flip_gives_one_minus_auc(data):
    y, s = data
    flipped = [1 - v for v in y]
    assert M.roc_auc(labels=flipped, scores=s) == pytest.approx(1.0 - M.roc_auc(labels=y, scores=s))


@settings(max_examples=40, deadline=None)
@given(labelled)
def test_auc_ignores_monotone_rescaling(data):
    y, s = data
    assert M.roc_auc(labels=y, scores=[3 * v - 7 for v in s]) == pytest.approx(M.roc_auc(labels=y, scores=s))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(15, 80), st.floats(0.0, 2.0))
def test_bootstrap_ci_contains_the_point_estimate(seed, n, shift):
    rng = np.random.default_rng(seed)
    y = np.r_[np.ones(n), np.zeros(n)].astype(int)
    s = rng.normal(size=2 * n) + shift * y
    ci = M.bootstrap_auc(labels=y, scores=s, n_resamples=300, seed=seed)
    assert ci.low <= ci.estimate <= ci.high
    assert ci.estimate == pytest.approx(M.roc_auc(labels=y, scores=s))


def test_bootstrap_ci_narrows_with_n():
    rng = np.random.default_rng(1)
    widths = []
    for n in (30, 300, 3000):
        y = np.r_[np.ones(n), np.zeros(n)].astype(int)
        s = rng.normal(size=2 * n) + 0.8 * y
        ci = M.bootstrap_auc(labels=y, scores=s, n_resamples=400, seed=0)
        widths.append(ci.high - ci.low)
    assert widths[0] > widths[1] > widths[2]
    # Roughly 1/sqrt(n): a 10x larger sample gives a ~3x narrower interval.
    assert 2.0 < widths[0] / widths[1] < 4.5


def test_bootstrap_is_seeded_and_stratified():
    y = [1] * 5 + [0] * 50
    s = list(range(55))
    a = M.bootstrap_auc(labels=y, scores=s, n_resamples=200, seed=3)
    b = M.bootstrap_auc(labels=y, scores=s, n_resamples=200, seed=3)
    assert np.array_equal(a.distribution, b.distribution)
    # Stratified resampling keeps both classes in every resample, so no resample is undefined.
    assert np.isfinite(a.distribution).all()


def test_approximate_randomization_identical_scorers_p_is_one():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200)
    s = rng.normal(size=200) + y
    t = M.approximate_randomization(labels=y, scores_a=s, scores_b=s, trials=500, seed=0)
    assert t.diff == 0.0
    assert t.p_value == 1.0


def test_approximate_randomization_monotone_copy_is_identical():
    # Rank normalisation: a rescaled copy of a scorer is the same ranking, so p stays 1.
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 150)
    s = rng.normal(size=150) + y
    assert M.approximate_randomization(labels=y, scores_a=s, scores_b=np.exp(s), trials=300).p_value == 1.0


def test_approximate_randomization_clearly_better_scorer_has_small_p():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 200)
    good = y + 0.3 * rng.normal(size=200)
    noise = rng.normal(size=200)
    t = M.approximate_randomization(labels=y, scores_a=good, scores_b=noise, trials=2000, seed=0)
    assert t.diff > 0.3
    assert t.p_value < 0.01
    assert t.p_value == pytest.approx(1 / 2001)  # (count + 1) / (trials + 1) with count = 0


def test_approximate_randomization_is_symmetric_in_direction():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 120)
    a, b = y + rng.normal(size=120), rng.normal(size=120)
    ab = M.approximate_randomization(labels=y, scores_a=a, scores_b=b, trials=500, seed=4)
    ba = M.approximate_randomization(labels=y, scores_a=b, scores_b=a, trials=500, seed=4)
    assert ab.diff == pytest.approx(-ba.diff)
    assert ab.p_value == pytest.approx(ba.p_value)


def test_mean_tests_and_cis_combine_datasets():
    rng = np.random.default_rng(5)
    tests, dists, ests = [], [], []
    for k in range(3):
        y = rng.integers(0, 2, 100)
        a, b = y + rng.normal(size=100), rng.normal(size=100)
        tests.append(M.approximate_randomization(labels=y, scores_a=a, scores_b=b, trials=300, seed=k))
        ci = M.bootstrap_auc(labels=y, scores=a, n_resamples=300, seed=k)
        dists.append(ci.distribution)
        ests.append(ci.estimate)
    mean = M.mean_approximate_randomization(tests=tests)
    assert mean.diff == pytest.approx(np.mean([t.diff for t in tests]))
    assert mean.p_value < 0.01
    est, lo, hi = M.mean_ci(distributions=dists, estimates=ests)
    assert lo <= est <= hi
    # Averaging three independent datasets narrows the interval below a single one's.
    single = np.quantile(dists[0], [0.025, 0.975])
    assert hi - lo < single[1] - single[0]


def test_fit_threshold_maximises_balanced_accuracy():
    y = [0, 0, 0, 1, 1, 1]
    s = [0.1, 0.2, 0.5, 0.4, 0.8, 0.9]
    t = M.fit_threshold(labels=y, scores=s)
    preds = [int(v >= t) for v in s]
    best = M.threshold_metrics(labels=y, predictions=preds).balanced_accuracy
    for cand in sorted(set(s)) + [1.0]:
        assert M.threshold_metrics(labels=y, predictions=[int(v >= cand) for v in s]).balanced_accuracy <= best + 1e-12
    assert t not in s  # a midpoint, never a fitted row's own score


@settings(max_examples=40, deadline=None)
@given(labelled, st.integers(0, 1000))
def test_crossfit_classifies_each_row_with_the_other_folds_threshold(data, seed):
    y, s = np.array(data[0]), np.array(data[1], dtype=float)
    if min((y == 0).sum(), (y == 1).sum()) < 2:
        with pytest.raises(InputError, match="at least 2 rows of each class"):
            M.crossfit_predictions(labels=y, scores=s, rng=np.random.default_rng(seed))
        return
    cf = M.crossfit_predictions(labels=y, scores=s, rng=np.random.default_rng(seed))
    for f in (0, 1):
        fitted_on_f = M.fit_threshold(labels=y[cf.folds == f], scores=s[cf.folds == f])
        assert cf.fold_thresholds[f] == fitted_on_f
        others = cf.folds != f
        assert np.array_equal(cf.predictions[others], (s[others] >= fitted_on_f).astype(int))


def test_crossfit_never_fits_on_the_rows_it_classifies(monkeypatch):
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(20), np.zeros(20)].astype(int)
    s = rng.permutation(np.arange(40, dtype=float))  # unique scores identify rows
    calls: list[set[float]] = []
    real = M.fit_threshold

    def spy(*, labels, scores):
        calls.append(set(np.asarray(scores).tolist()))
        return real(labels=labels, scores=scores)

    monkeypatch.setattr(M, "fit_threshold", spy)
    cf = M.crossfit_predictions(labels=y, scores=s, rng=np.random.default_rng(1))
    assert len(calls) == 2
    for f, fitted_rows in enumerate(calls):
        classified_with_this = set(s[cf.folds != f].tolist())
        assert fitted_rows.isdisjoint(classified_with_this)


def test_metrics_reject_single_class_and_nan_with_clear_messages():
    with pytest.raises(InputError, match="needs both faithful"):
        M.roc_auc(labels=[1, 1], scores=[0.1, 0.2])
    with pytest.raises(InputError, match="finite"):
        M.roc_auc(labels=[0, 1], scores=[0.1, float("nan")])
    with pytest.raises(InputError, match="0/1"):
        M.roc_auc(labels=[0, 2], scores=[0.1, 0.2])


def test_pr_auc_of_each_class():
    y = [0, 0, 1, 1]
    s = [0.1, 0.4, 0.35, 0.8]
    assert M.pr_auc(labels=y, scores=s) == pytest.approx((1 + 2 / 3) / 2)
    assert M.pr_auc(labels=y, scores=s, positive=0) == pytest.approx((1 + 2 / 3) / 2)
