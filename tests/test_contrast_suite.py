"""The contrast suite's per-rule accuracy and its oracle threshold for baselines."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from veridic.bench._contrast import CONTRAST_SUITE, TARGET_GROUPS, load_suite_rules, oracle_threshold, rule_accuracy, wilson
from veridic.errors import InputError


def test_rule_accuracy_groups_and_balance():
    rows = [{"id": str(i), "label": i % 2, "rule": "role_swap" if i % 2 == 0 else "passive_keep_roles"} for i in range(10)]
    scores = {str(i): (0.9 if i % 2 else -0.9) for i in range(10)}
    scores["0"] = 0.5  # one role swap judged entailed
    acc = rule_accuracy(rows=rows, scores=scores, threshold=0.0)
    assert acc["role_swap"]["accuracy"] == pytest.approx(0.8) and acc["role_swap"]["n"] == 5
    assert acc["passive_keep_roles"]["accuracy"] == 1.0
    assert acc["group:argument swaps"]["accuracy"] == pytest.approx(0.8)
    assert acc["_all"]["balanced_accuracy"] == pytest.approx(0.9)
    lo, hi = acc["role_swap"]["ci95"]
    assert lo < 0.8 < hi


def test_missing_or_nan_score_is_an_error():
    rows = [{"id": "a", "label": 1, "rule": "synonym"}]
    with pytest.raises(InputError, match="no score"):
        rule_accuracy(rows=rows, scores={}, threshold=0.0)
    with pytest.raises(InputError, match="no usable score"):
        rule_accuracy(rows=rows, scores={"a": float("nan")}, threshold=0.0)


@settings(deadline=None)  # timing varies on a shared CPU
@given(st.integers(0, 50), st.integers(1, 50))
def test_wilson_contains_the_proportion(k, n):
    k = min(k, n)
    lo, hi = wilson(k, n)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


@settings(deadline=None, max_examples=50)
@given(st.lists(st.tuples(st.floats(-1, 1, allow_nan=False), st.booleans()), min_size=2, max_size=30))
@example([(1.0, True), (0.9999999999999999, False)])  # adjacent floats: their midpoint rounds onto the larger one
def test_oracle_threshold_is_at_least_as_good_as_any_score_cut(pairs):
    rows = [{"id": str(i), "label": int(y), "rule": "x"} for i, (_, y) in enumerate(pairs)]
    scores = {str(i): s for i, (s, _) in enumerate(pairs)}
    best = rule_accuracy(rows=rows, scores=scores, threshold=oracle_threshold(rows=rows, scores=scores))["_all"]["balanced_accuracy"]
    for s, _ in pairs:
        assert best >= rule_accuracy(rows=rows, scores=scores, threshold=s)["_all"]["balanced_accuracy"] - 1e-12


def test_shipped_suite_is_large_checked_and_covers_the_targets():
    rows = load_suite_rules(CONTRAST_SUITE)
    assert len(rows) >= 500
    rules = {r["rule"] for r in rows}
    for group, members in TARGET_GROUPS.items():
        assert sum(r["rule"] in members for r in rows) >= 30, group
    assert rules <= set(__import__("veridic.synth._contrast", fromlist=["RULES"]).RULES)
    raw = [json.loads(x) for x in CONTRAST_SUITE.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert all(r["meta"]["check"] in {"kept", "fixed", "hand"} for r in raw)
    assert len({r["id"] for r in raw}) == len(raw)


def test_bench_contrast_writes_per_rule_report(tmp_path):
    import typer
    from typer.testing import CliRunner

    from veridic.bench.cli import bench

    app = typer.Typer()
    app.command()(bench)
    res = CliRunner().invoke(app, ["--data", "contrast", "--scorer", "e-c", "--scorer", "overlap-bigram", "--backend", "dummy",
                                   "--no-cache", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    rep = json.loads((tmp_path / "contrast.json").read_text())["contrast"]
    assert rep["e-c"]["_all"]["threshold_kind"] == "own" and rep["e-c"]["_all"]["threshold"] == 0.0
    assert rep["overlap-bigram"]["_all"]["threshold_kind"] == "oracle"
    assert rep["e-c"]["_all"]["n"] >= 500 and "group:argument swaps" in rep["e-c"]
    assert "| **argument swaps** |" in (tmp_path / "contrast.md").read_text()
