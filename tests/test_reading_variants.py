"""The registered reading selection (benchmarks/reading_variants.py): its grid, its held-out choice and its rule."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from reading_variants import CURRENT, TASKS, _config, choose, select, variants  # noqa: E402

SETS = [s for members in TASKS.values() for s in members]


def _dev(auc: dict[str, dict[str, float]], *, n: int = 40, shift: dict[str, float] | None = None) -> dict:
    """A dev step's output: per set, labels and, for the current reading and any variant, scores whose AUC the
    test controls (a variant's scores are the current ones plus ``shift`` times the label)."""
    rng = np.random.default_rng(0)
    labels = {s: [i % 2 for i in range(n)] for s in SETS}
    base = {s: rng.normal(size=n) for s in SETS}
    scores = {v: {s: list(base[s] + (shift or {}).get(v, 0.0) * np.array(labels[s])) for s in SETS} for v in auc}
    return {"auc": {**auc, "overlap": dict.fromkeys(SETS, 0.6), "overlap-bigram": dict.fromkeys(SETS, 0.65)},
            "scores": scores, "labels": labels}


def _flat(value: float = 0.70) -> dict[str, dict[str, float]]:
    return {v: dict.fromkeys(SETS, value) for v in variants()}


def _plan() -> dict:
    return {v: {"pairs": 100 + i} for i, v in enumerate(variants())}


def test_the_grid_holds_the_current_reading_and_every_reading_builds_a_valid_config():
    grid = variants()
    assert len(grid) == 19 and CURRENT in grid
    cur = _config(CURRENT)
    assert (cur.method, cur.window_sentences, cur.max_windows, cur.claim_aggregation, cur.granularity) == ("e-c", 2, 4, "mean", "sentence")
    assert _config("doc-chunks").granularity == "document"
    assert len({_config(v).name for v in grid}) == 19  # one score-cache entry per reading
    assert sorted(s for m in TASKS.values() for s in m) == sorted(set(SETS))  # every set in exactly one task


def test_choose_takes_the_best_mean_and_breaks_ties_towards_the_current_reading_then_fewer_pairs():
    auc = _flat()
    cost = {v: 10 for v in auc}
    assert choose(auc, on=SETS, cost=cost) == CURRENT  # all equal: the current reading
    cost_cheap = {**cost, CURRENT: 10, "w1-k4-min": 10}
    auc["w1-k4-min"] = dict.fromkeys(SETS, 0.75)
    assert choose(auc, on=SETS, cost=cost_cheap) == "w1-k4-min"
    auc["w3-k8-mean"] = dict.fromkeys(SETS, 0.75)
    assert choose(auc, on=SETS, cost={**cost, "w3-k8-mean": 5}) == "w3-k8-mean"  # tie: fewer pairs


def test_a_reading_that_wins_one_set_only_is_never_chosen_for_that_set():
    auc = _flat()
    auc["w1-k8-min"] = {**dict.fromkeys(SETS, 0.70), "wice_dev": 0.95}
    res = select(dev_res=_dev(auc), plan_res=_plan())
    assert res["lodo"]["wice_dev"]["chosen"] == CURRENT  # chosen on the other seven, where it only ties
    assert res["loto"]["claims"]["chosen"] == CURRENT
    assert res["best_on_all"] == "w1-k8-min"  # in-sample it wins, which is why the rule reads the held-out means
    assert res["lodo_mean"] == pytest.approx(0.70)
    assert not res["rule_dev"]["b_lodo_margin"] and not res["passes_dev"]


def test_a_reading_better_everywhere_passes_the_dev_part_of_the_rule_and_a_significant_loss_fails_it():
    auc = _flat()
    auc["w3-k4-mean"] = dict.fromkeys(SETS, 0.76)
    res = select(dev_res=_dev(auc, shift={"w3-k4-mean": 1.5}), plan_res=_plan())
    assert res["best_on_all"] == "w3-k4-mean"
    assert all(r["chosen"] == "w3-k4-mean" for r in res["lodo"].values())
    assert res["lodo_mean"] == pytest.approx(0.76) and res["loto_mean"] == pytest.approx(0.76)
    assert res["passes_dev"] and not res["significantly_worse"]
    worse = select(dev_res=_dev(auc, shift={"w3-k4-mean": -1.5}), plan_res=_plan())
    assert set(worse["significantly_worse"]) == set(SETS) and not worse["rule_dev"]["d_no_set_worse"]


def test_the_second_grid_adds_two_pooled_lengths_and_two_averages_of_first_grid_readings():
    from reading_variants import AVERAGES, _components, averages, readings

    r1, r2 = variants("r1"), variants("r2")
    assert set(r2) - set(r1) == {"u12-k4", "u13-k4"} and all(r2[v] == r1[v] for v in r1)
    assert _config("u13-k4").window_sentences == (1, 3) and _config("u13-k4").max_windows == 4
    assert readings("r1") == list(r1) and set(readings("r2")) == set(r2) | set(AVERAGES)
    assert all(set(parts) <= set(r1) for parts in averages("r2").values()) and averages("r1") == {}
    assert _components("a13-k4") == ("w1-k4-mean", "w3-k4-mean") and _components(CURRENT) == (CURRENT,)
    with pytest.raises(ValueError, match="unknown grid"):
        variants("r5")


def test_the_third_grid_is_the_current_reading_with_and_without_the_other_windows_contradiction():
    r1, r3 = variants("r1"), variants("r3")
    assert list(r3) == [CURRENT, "w2-k4-mean-u"] and r3[CURRENT] == r1[CURRENT]
    cur, unc = _config(CURRENT), _config("w2-k4-mean-u")
    assert (cur.source_aggregation, unc.source_aggregation) == ("max", "uncontradicted")
    # Only the aggregation differs, so the two readings put the same pairs to the model.
    assert cur.replace(source_aggregation="uncontradicted", name=unc.name) == unc


def test_an_average_is_selected_on_its_own_auc_with_the_pairs_of_both_its_readings():
    from reading_variants import readings

    auc = {v: dict.fromkeys(SETS, 0.70) for v in readings("r2")}
    auc["a12-k4"] = dict.fromkeys(SETS, 0.78)
    plan = {v: {"pairs": 100} for v in readings("r2")}
    res = select(dev_res=_dev(auc, shift={"a12-k4": 1.5}), plan_res=plan, grid="r2")
    assert res["best_on_all"] == "a12-k4" and res["passes_dev"]
    assert set(res["variants"]) == set(readings("r2"))


def test_an_average_scores_each_row_by_the_mean_of_its_two_readings():
    from reading_variants import add_averages

    labels = {"frank_test": [0, 0, 1, 1]}
    # Each reading ranks one positive below a negative; their mean ranks every positive first.
    scores = {"w1-k4-mean": {"frank_test": [0.0, 0.5, 0.4, 0.9]}, "w2-k4-mean": {"frank_test": [0.5, 0.0, 0.9, 0.4]},
              "w3-k4-mean": {"frank_test": [0.0, 0.0, 0.1, 0.1]}}
    res = add_averages({"labels": labels, "scores": scores, "auc": {}}, grid="r2")
    assert res["scores"]["a12-k4"]["frank_test"] == pytest.approx([0.25, 0.25, 0.65, 0.65])
    assert res["auc"]["a12-k4"]["frank_test"] == 1.0
    assert res["auc"]["a13-k4"]["frank_test"] == 0.875


def test_a_named_candidate_gets_its_own_paired_test_even_when_the_selection_keeps_the_current_reading():
    auc = {CURRENT: dict.fromkeys(SETS, 0.80), "w2-k4-mean-u": dict.fromkeys(SETS, 0.60)}
    dev = _dev(auc, shift={CURRENT: 1.5})  # the current reading's scores follow the labels, the candidate's do not
    res = select(dev_res=dev, plan_res={v: {"pairs": 100} for v in auc}, grid="r3", candidate="w2-k4-mean-u")
    assert res["best_on_all"] == CURRENT and res["candidate"] == "w2-k4-mean-u"
    assert set(res["candidate_paired"]) == set(SETS)
    assert all(r["diff"] < 0 and r["p"] < 0.05 for r in res["candidate_paired"].values())
    assert "candidate_paired" not in select(dev_res=dev, plan_res={v: {"pairs": 100} for v in auc}, grid="r3")


def test_the_fourth_grid_gates_the_other_windows_contradiction_by_shared_content_words():
    r4 = variants("r4")
    assert list(r4) == [CURRENT, "w2-k4-mean-r"]
    assert _config("w2-k4-mean-r") == _config(CURRENT).replace(source_aggregation="uncontradicted-relevant", name=_config("w2-k4-mean-r").name)
