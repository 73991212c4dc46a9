"""The runner: threshold provenance, caching, comparisons and the report."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from veridic.bench._cache import ScoreCache
from veridic.bench._datasets import load_dataset_file
from veridic.bench._metrics import fit_threshold, roc_auc
from veridic.bench._report import build_report, write_report
from veridic.bench._runner import run_benchmark
from veridic.errors import ConfigError, RegistryError, VeridicError
from veridic.types import Verdict


class TableScorer:
    """A fake scorer: the score of a claim is read from a table (claims must be in it)."""

    def __init__(self, table: dict[str, float], *, name: str = "table", method: str = "fake") -> None:
        self.table = table
        self.name = name
        self.method = method
        self.calls = 0

    def score(self, *, sources, claims, contexts=None, progress=False):
        self.calls += 1
        return [Verdict(score=self.table[c], label="supported", e=self.table[c], n=0.0, c=0.0, uncertainty=None,
                        method=self.method, model="fake") for c in claims]

    def describe(self):
        return {"model": "fake", "revision": "r1", "method": self.method, "parameters": 1_000_000, "model_calls_per_example": 1}


def _dataset(path: Path, name: str, scored: list[tuple[float, int]]):
    rows = [{"id": f"{name}-{i}", "dataset": name, "source": "src", "claim": f"{name} claim {i} {s}", "label": y}
            for i, (s, y) in enumerate(scored)]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    (ds,) = load_dataset_file(path=path)
    table = {r["claim"]: s for r, (s, _) in zip(rows, scored)}
    return ds, table


def test_threshold_from_a_dev_split_is_recorded_and_never_refitted(tmp_path):
    # On the dev split the best cut is between 0.1 and 0.3 (-> 0.2); on the evaluated split it would be 0.7.
    dev, t1 = _dataset(tmp_path / "dev.jsonl", "evalset_dev", [(0.1, 0), (0.1, 0), (0.3, 1), (0.3, 1)])
    ev, t2 = _dataset(tmp_path / "ev.jsonl", "evalset", [(0.5, 0), (0.5, 0), (0.5, 0), (0.9, 1), (0.9, 1)])
    scorer = TableScorer(t1 | t2)
    res = run_benchmark(datasets=[ev], scorers=[scorer], threshold_datasets=[dev], threshold_from=["dev.jsonl"], n_resamples=50)
    r = res.result(dataset="evalset", scorer="table")
    assert r.threshold.kind == "dev_split" and r.threshold.threshold == pytest.approx(0.2)
    assert r.threshold.threshold != fit_threshold(labels=r.run.labels, scores=r.run.scores)
    assert r.balanced_accuracy == 0.5  # everything >= 0.2: honest, not the in-sample 1.0
    block = build_report(result=res, command="test")["results"]["evalset"]["table"]
    assert block["threshold"] == pytest.approx(0.2)
    assert block["threshold_source"]["kind"] == "dev_split" and block["threshold_source"]["fit_datasets"] == ["evalset_dev"]


def test_threshold_split_overlapping_the_evaluated_rows_is_refused(tmp_path):
    ev, t = _dataset(tmp_path / "ev.jsonl", "evalset", [(0.5, 0), (0.9, 1), (0.4, 0), (0.8, 1)])
    with pytest.raises(ConfigError, match="shares 4 rows .* with the evaluated"):
        run_benchmark(datasets=[ev], scorers=[TableScorer(t)], threshold_datasets=[ev], n_resamples=10)


def test_crossfit_thresholds_are_recomputable_from_the_report(tmp_path):
    rng = np.random.default_rng(0)
    scored = [(float(s), int(y)) for y, s in zip(rng.integers(0, 2, 80), rng.normal(size=80))]
    scored = [(s + 0.8 * y, y) for s, y in scored]
    ds, table = _dataset(tmp_path / "x.jsonl", "xs", scored)
    res = run_benchmark(datasets=[ds], scorers=[TableScorer(table)], n_resamples=50)
    block = build_report(result=res, command="t")["results"]["xs"]["table"]
    src = block["threshold_source"]
    assert src["kind"] == "cross_fit"
    rows = block["scores"]
    for f in (0, 1):
        fold = [r for r in rows if r["fold"] == f]
        fitted = fit_threshold(labels=[r["label"] for r in fold], scores=[r["score"] for r in fold])
        assert src["fold_thresholds"][f] == pytest.approx(fitted)
        for r in rows:
            if r["fold"] != f:
                assert r["prediction"] == int(r["score"] >= fitted)
    assert block["threshold"] == pytest.approx(np.mean(src["fold_thresholds"]))


def test_scores_are_cached_and_reused(tmp_path):
    ds, table = _dataset(tmp_path / "x.jsonl", "xs", [(0.1, 0), (0.9, 1), (0.2, 0), (0.8, 1)])
    cache = ScoreCache(directory=tmp_path / "cache")
    first = TableScorer(table)
    r1 = run_benchmark(datasets=[ds], scorers=[first], cache=cache, n_resamples=20)
    second = TableScorer({k: -1.0 for k in table})  # would give other scores if it were called
    r2 = run_benchmark(datasets=[ds], scorers=[second], cache=cache, n_resamples=20)
    assert first.calls == 1 and second.calls == 0
    assert r2.result(dataset="xs", scorer="table").run.timing == "cache"
    assert np.array_equal(r1.result(dataset="xs", scorer="table").run.scores, r2.result(dataset="xs", scorer="table").run.scores)
    # A different describe() (another method) is another key: the model runs again.
    third = TableScorer(table, method="other")
    run_benchmark(datasets=[ds], scorers=[third], cache=cache, n_resamples=20)
    assert third.calls == 1
    cached = json.loads(next((tmp_path / "cache").rglob("*.json")).read_text())
    assert set(cached["scores"]["xs-0"]) == {"score", "e", "n", "c", "uncertainty"}


def test_comparisons_per_dataset_and_mean(tmp_path):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 120)
    ds, _ = _dataset(tmp_path / "x.jsonl", "xs", [(0.0, int(v)) for v in y])
    claims = [ex.pair.claim for ex in ds.examples]
    good = TableScorer({c: float(v + 0.3 * rng.normal()) for c, v in zip(claims, y)}, name="good")
    bad = TableScorer({c: float(rng.normal()) for c in claims}, name="bad")
    res = run_benchmark(datasets=[ds], scorers=[good, bad], compare=[("good", "bad")], n_resamples=100, ar_trials=500)
    per, mean = res.comparisons
    assert (per.dataset, mean.dataset) == ("xs", "mean")
    assert per.p_value < 0.01 and per.diff > 0 and per.diff_ci_low > 0
    with pytest.raises(RegistryError, match="--compare names 'nope'"):
        run_benchmark(datasets=[ds], scorers=[good, bad], compare=[("good", "nope")], n_resamples=10)


def test_scorer_returning_nan_fails_loudly(tmp_path):
    ds, table = _dataset(tmp_path / "x.jsonl", "xs", [(0.1, 0), (0.9, 1)])
    bad = TableScorer({k: float("nan") for k in table})
    with pytest.raises(VeridicError, match="non-finite scores .* does not drop rows silently"):
        run_benchmark(datasets=[ds], scorers=[bad], n_resamples=10)


def test_report_holds_every_documented_key(tmp_path):
    ds, table = _dataset(tmp_path / "x.jsonl", "xs", [(0.1, 0), (0.9, 1), (0.2, 0), (0.8, 1), (0.5, 1), (0.4, 0)])
    res = run_benchmark(datasets=[ds], scorers=[TableScorer(table)], n_resamples=30)
    paths = write_report(result=res, out_dir=tmp_path / "out", command="veridic bench ...")
    rep = json.loads(paths["json"].read_text())
    for k in ("schema_version", "veridic_version", "created", "command", "settings", "metrics", "scorers", "datasets",
              "results", "mean", "comparisons", "threshold_fits", "cost", "figures"):
        assert k in rep
    block = rep["results"]["xs"]["table"]
    for k in ("n", "n_pos", "auc", "auc_ci_low", "auc_ci_high", "pr_auc", "balanced_accuracy", "f1_faithful",
              "f1_unfaithful", "threshold", "threshold_source", "seconds_per_example", "scores"):
        assert k in block
    # Anyone can recompute the AUC from the stored per-example scores.
    assert block["auc"] == pytest.approx(roc_auc(labels=[r["label"] for r in block["scores"]], scores=[r["score"] for r in block["scores"]]))
    # Every key of the report is documented.
    doc = (Path(__file__).resolve().parents[1] / "docs" / "report_schema.md").read_text()
    for k in list(rep) + list(block) + list(block["threshold_source"]) + list(rep["settings"]) + list(rep["mean"]["table"]):
        assert f"`{k}`" in doc, f"report key {k!r} is not documented in docs/report_schema.md"
