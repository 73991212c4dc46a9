"""VeridicFaithfulness inside ragas.evaluate, offline (no LLM configured, no network)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("ragas", reason="pip install 'veridic[ragas]'")

from ragas import EvaluationDataset, evaluate  # noqa: E402
from ragas.metrics import ExactMatch  # noqa: E402
from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: E402,F401

from veridic.integrations.ragas import VeridicFaithfulness  # noqa: E402


@pytest.fixture(autouse=True)
def _no_tracking(monkeypatch):
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")


def dataset(rows):
    return EvaluationDataset.from_list([{"user_input": q, "retrieved_contexts": ctx, "response": a, "reference": a} for q, ctx, a in rows])


def test_evaluate_gives_veridic_scores_with_reasons_in_the_traces(tmp_path, no_network):
    metric = VeridicFaithfulness(**FAST)
    result = evaluate(dataset(CASES), metrics=[metric, ExactMatch()], show_progress=False, raise_exceptions=True)
    assert result["veridic_faithfulness"] == pytest.approx(cli_scores(good_rows(), tmp_path), abs=1e-6)
    assert result["exact_match"] == [1.0] * len(CASES)
    trace = result.traces[1]["veridic_faithfulness"]["veridic"]["output"]
    assert trace["label"] == "unsupported" and "It never hired anyone." in trace["reason"]
    assert trace["sentences"][1]["evidence"]["context"] == 0
    df = result.to_pandas()
    assert list(df["veridic_faithfulness"]) == pytest.approx(result["veridic_faithfulness"])


def test_bad_rows_score_nan_and_the_other_metric_completes(no_network):
    # RAGAS's own schema refuses a non-string context before the run (its message names the field).
    with pytest.raises(Exception, match="retrieved_contexts"):
        dataset([BAD[2]])
    rows = [CASES[0], BAD[1], BAD[3], BAD[4]]
    result = evaluate(dataset(rows), metrics=[VeridicFaithfulness(**FAST), ExactMatch()], show_progress=False, raise_exceptions=True)
    scores = result["veridic_faithfulness"]
    assert not math.isnan(scores[0]) and all(math.isnan(s) for s in scores[1:])
    assert len(result["exact_match"]) == len(rows)
    errors = [result.traces[i]["veridic_faithfulness"]["veridic"]["output"]["error"] for i in range(1, 4)]
    assert "no context" in errors[0] and "answer is None" in errors[1] and "limit is 2,000,000" in errors[2]


def test_single_turn_score_outside_evaluate():
    from ragas.dataset_schema import SingleTurnSample

    s = SingleTurnSample(user_input=CASES[0][0], response=CASES[0][2], retrieved_contexts=CASES[0][1])
    assert VeridicFaithfulness(**FAST).single_turn_score(s) > 0.5


@pytest.mark.slow
def test_embedded_model_in_evaluate_equals_veridic_score(tmp_path, no_network):
    result = evaluate(dataset(CASES), metrics=[VeridicFaithfulness()], show_progress=False, raise_exceptions=True)
    assert result["veridic_faithfulness"] == pytest.approx(cli_scores(good_rows(), tmp_path, fast=False), abs=1e-5)
