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
