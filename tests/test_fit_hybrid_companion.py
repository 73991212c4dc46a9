"""fit_hybrid's companion join (benchmarks/fit_hybrid.py): a second model's features matched row by row."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from fit_hybrid import evaluate, join_companion  # noqa: E402

from veridic.nli._hybrid import ALL_FEATURES, NLI_FEATURES  # noqa: E402


def row(ds: str, i: int, label: int, ec: float, **extra: float) -> dict:
    return {"dataset": ds, "id": str(i), "task": "summarization" if ds != "c" else "claim", "label": label,
            **{n: ec for n in NLI_FEATURES}, **{n: 0.5 for n in ALL_FEATURES if n not in NLI_FEATURES}, **extra}


def test_the_companion_features_join_by_dataset_and_id_whatever_the_order():
    rows = [row("a", 1, 1, 0.9), row("b", 1, 0, -0.2)]
    comp = [row("b", 1, 0, -0.7), row("a", 1, 1, 0.4)]  # same ids in both sets, other order
    out = join_companion(rows, comp)
    assert [r["ec_mean@companion"] for r in out] == [0.4, -0.7]
    assert [r["ec_mean"] for r in out] == [0.9, -0.2]  # the first model's own features untouched


def test_passes_over_different_rows_or_labels_are_refused():
    with pytest.raises(ValueError, match="different rows: 1 only in the first, 1 only in the companion"):
        join_companion([row("a", 1, 1, 0.1)], [row("a", 2, 1, 0.1)])
    with pytest.raises(ValueError, match="label 1 against the companion's 0"):
        join_companion([row("a", 1, 1, 0.1)], [row("a", 1, 0, 0.1)])


def test_a_combination_of_two_models_ranks_rows_each_model_alone_gets_half_wrong():
    # Model A separates the even rows, model B the odd ones: each alone ranks only its half,
    # their sum separates every row, and LODO weights (fitted on the other sets) must find it.
    rng = np.random.default_rng(0)
    rows, comp = [], []
    for ds in ("a", "b", "c"):
        for i in range(80):
            y = int(rng.random() < 0.5)
            sig, noise = (1.0 if y else -1.0), rng.normal(0, 0.05)
            a, b = (sig, noise) if i % 2 else (noise, sig)
            rows.append(row(ds, i, y, a))
            comp.append(row(ds, i, y, b))
    joined = join_companion(rows, comp)
    res = evaluate(joined, ["ec_mean", "ec_mean@companion"], C=1.0)
    assert res["mean"]["ec_mean"] < 0.9 and res["mean"]["ec_mean@companion"] < 0.9
    assert res["mean"]["hybrid_lodo"] > 0.97


def test_the_same_model_read_with_another_aggregation_is_a_companion(monkeypatch, tmp_path):
    import fit_hybrid

    rng = np.random.default_rng(1)
    labels = {(ds, i): int(rng.random() < 0.5) for ds in ("a", "b", "c") for i in range(40)}
    calls = []

    def fake_features(*, model, out, source_aggregation="max", **_):
        calls.append((model, Path(out).name, source_aggregation))
        Path(out).mkdir(parents=True, exist_ok=True)  # as the real pass does, writing its features there
        shift = 0.3 if source_aggregation == "uncontradicted" else 0.0
        return [row(ds, i, y, (1.0 if y else -1.0) * 0.5 + shift + rng.normal(0, 0.3)) for (ds, i), y in labels.items()]

    monkeypatch.setattr(fit_hybrid, "compute_features", fake_features)
    monkeypatch.setattr(sys, "argv", ["fit_hybrid.py", "--model", "m", "--companion-source-aggregation", "uncontradicted",
                                      "--features", "ec_mean,ec_mean@companion,overlap_bigram", "--out", str(tmp_path / "k")])
    fit_hybrid.main()
    assert calls == [("m", "k", "max"), ("m", "companion", "uncontradicted")]
    assert (tmp_path / "k" / "hybrid_lodo.csv").read_text().count("\n") == 1 + len(labels)


def test_a_named_combination_is_kept_when_asked_though_one_feature_alone_beats_it(monkeypatch, tmp_path):
    import json

    import fit_hybrid

    rng = np.random.default_rng(2)
    rows = []
    for ds in ("a", "b", "c"):
        for i in range(60):
            y = int(rng.random() < 0.5)
            # overlap separates every set; the model's feature points one way in "a" and the other way elsewhere,
            # so a fit that reads it loses held out to overlap alone.
            ec = (1.0 if y else -1.0) * (1 if ds == "a" else -1) + rng.normal(0, 0.3)
            rows.append(row(ds, i, y, ec, overlap_bigram=(0.8 if y else 0.2) + rng.normal(0, 0.2)))
    monkeypatch.setattr(fit_hybrid, "compute_features", lambda **kw: rows)
    for flag, expect in (([], ["overlap_bigram"]), (["--no-single-fallback"], ["ec_mean", "overlap_bigram"])):
        out = tmp_path / ("kept" if flag else "fallback")
        out.mkdir()
        monkeypatch.setattr(sys, "argv", ["fit_hybrid.py", "--features", "ec_mean,overlap_bigram", "--out", str(out), *flag])
        fit_hybrid.main()
        assert json.loads((out / "lodo.json").read_text())["names"] == expect
