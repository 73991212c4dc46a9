"""AIS agreement statistics: hand-computed examples, reference implementations and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.ais import (
    ItemVotes,
    Judgment,
    agreement,
    consensus,
    expert_agreement,
    fleiss_kappa,
    krippendorff_alpha,
    macro_f1,
    pairwise_agreement,
    significance,
    system_scores,
    votes_from_judgments,
)
from veridic.errors import ConfigError, InputError

counts_strategy = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)).filter(lambda t: sum(t) >= 2), min_size=2, max_size=30)


def test_fleiss_kappa_hand_computed():
    # P_i = 1, 1, 0 -> P = 2/3; p_j = (1/2, 1/2) -> Pe = 1/2; kappa = (2/3 - 1/2) / (1/2)
    assert fleiss_kappa([[2, 0], [0, 2], [1, 1]]) == pytest.approx(1 / 3)


def test_krippendorff_alpha_hand_computed():
    # coincidences o00 = 2, o11 = 2, o01 = o10 = 1; n = 6; Do = 2/6, De = 2*3*3/(6*5) = 0.6
    assert krippendorff_alpha([[2, 0], [0, 2], [1, 1]]) == pytest.approx(1 - (2 / 6) / 0.6)


def test_pairwise_and_f1_hand_computed():
    assert pairwise_agreement([[3, 0], [2, 1]]) == pytest.approx((3 + 1) / 6)
    # yes-class F1 = 6/7, no-class F1 = 2/3
    assert macro_f1(tp=3, fp=1, fn=0, tn=1) == pytest.approx((6 / 7 + 2 / 3) / 2)


@settings(max_examples=60, deadline=None)
@given(counts_strategy)
def test_fleiss_matches_statsmodels_with_constant_raters(rows):
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    n = 5
    table = np.array([[a, n - a] for a, _ in rows], dtype=float)
    ours = fleiss_kappa(table)
    p_e = ((table.sum(0) / table.sum()) ** 2).sum()
    if math.isclose(p_e, 1.0):
        assert ours == 1.0
    else:
        assert ours == pytest.approx(sm.fleiss_kappa(table, method="fleiss"))


@settings(max_examples=60, deadline=None)
@given(counts_strategy, st.randoms(use_true_random=False))
def test_statistics_do_not_depend_on_item_order(rows, rnd):
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    for fn in (krippendorff_alpha, fleiss_kappa, pairwise_agreement):
        a, b = fn(rows), fn(shuffled)
        assert (a is None and b is None) or a == pytest.approx(b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(2, 7)), min_size=2, max_size=20))
def test_perfect_agreement_gives_one(units):
    rows = [(n, 0) if yes else (0, n) for yes, n in units]
    assert krippendorff_alpha(rows) == 1.0
    assert pairwise_agreement(rows) == 1.0
    if any(y for y, _ in units) and not all(y for y, _ in units):
        assert fleiss_kappa(rows) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(counts_strategy)
def test_alpha_is_invariant_to_swapping_categories_and_bounded(rows):
    swapped = [(b, a) for a, b in rows]
    a1, a2 = krippendorff_alpha(rows), krippendorff_alpha(swapped)
    assert a1 == pytest.approx(a2)
    assert a1 <= 1.0 + 1e-9
    pa = pairwise_agreement(rows)
    assert 0.0 <= pa <= 1.0


def test_alpha_matches_reliability_matrix_form():
    kd = pytest.importorskip("krippendorff")
    data = np.array([[1, 1, 0, 1, np.nan], [1, 0, 0, 1, 1], [1, 1, 0, np.nan, 1]], dtype=float)  # raters x units
    counts = [[np.sum(col == 1), np.sum(col == 0)] for col in data.T]
    assert krippendorff_alpha(counts) == pytest.approx(kd.alpha(reliability_data=data, level_of_measurement="nominal"))


def test_consensus_majority_ties_and_flags():
    votes = [
        ItemVotes(item="a", system="s", int_yes=3, int_no=2, ais_yes=1, ais_no=2),
        ItemVotes(item="b", system="s", int_yes=2, int_no=2, flags=1),
        ItemVotes(item="c", system="s", int_yes=1, int_no=1, flags=3),
        ItemVotes(item="d", system="s", int_yes=4, int_no=0, ais_yes=2, ais_no=2),
    ]
    c = {x.item: x for x in consensus(votes)}
    assert (c["a"].interpretable, c["a"].attributable) == (True, False)
    assert c["b"].interpretable is None and c["b"].int_tie
    assert c["c"].flagged
    assert c["d"].attributable is None and c["d"].ais_tie
    row = system_scores(list(c.values()))[0]
    assert (row.n, row.flag_pct, row.int_pct, row.ais_pct, row.int_ties, row.ais_ties) == (4, 25.0, 100.0, 0.0, 1, 1)


def test_sampled_counts_missing_items_as_not_interpretable():
    cs = consensus([ItemVotes(item=str(i), system="s", int_yes=5, ais_yes=5) for i in range(3)])
    assert system_scores(cs, sampled=4)[0].int_pct == 75.0
    with pytest.raises(ConfigError, match="sampled=2"):
        system_scores(cs, sampled=2)


def test_votes_from_judgments_counts_only_consistent_answers():
    js = [
        Judgment(item="x", rater="a", system="s", interpretable=True, attributable=True),
        Judgment(item="x", rater="b", system="s", interpretable=False, attributable=True),  # stage 2 ignored
        Judgment(item="x", rater="c", system="s", flagged=True, interpretable=True),  # a flag is only a flag
    ]
    (v,) = votes_from_judgments(js)
    assert (v.int_yes, v.int_no, v.ais_yes, v.ais_no, v.flags) == (1, 1, 1, 0, 1)
    with pytest.raises(InputError, match="two systems"):
        votes_from_judgments(js + [Judgment(item="x", rater="d", system="t", interpretable=True)])


def test_agreement_rejects_unknown_stage():
    with pytest.raises(ConfigError, match="stage must be one of"):
        agreement([], stage="both")  # type: ignore[arg-type]


def test_significance_paired_and_unpaired():
    good = [ItemVotes(item=f"g{i}", system="good", int_yes=5, ais_yes=5) for i in range(60)]
    bad = [ItemVotes(item=f"b{i}", system="bad", int_yes=5, ais_yes=1, ais_no=4) for i in range(60)]
    same = [ItemVotes(item=f"s{i}", system="same", int_yes=5, ais_yes=5 if i else 0, ais_no=0 if i else 5) for i in range(60)]
    cs = consensus(good + bad + same)
    unpaired = significance(cs, metric="ais", n_resamples=2000, seed=1)
    assert unpaired.best == "good" and unpaired.significant("bad") and not unpaired.significant("same")
    assert unpaired.paired == {"bad": False, "same": False}
    key = {f"{p}{i}": str(i) for p in "gbs" for i in range(60)}
    paired = significance(cs, metric="ais", pair_key=key, n_resamples=2000, seed=1)
    assert paired.paired == {"bad": True, "same": True} and paired.significant("bad")
    assert paired.p_values["bad"] < 0.001


def test_expert_agreement():
    expert = {"a": True, "b": False, "c": None}
    js = [Judgment(item="a", rater="r1", interpretable=True), Judgment(item="a", rater="r2", interpretable=False),
          Judgment(item="b", rater="r1", interpretable=False), Judgment(item="c", rater="r1", interpretable=True)]
    a = expert_agreement(js, expert=expert, stage="int")
    assert a.n_ratings == 3 and a.pairwise == pytest.approx(2 / 3)
    assert a.f1 == pytest.approx(macro_f1(tp=1, fp=0, fn=1, tn=1))
