"""VeridicMetric inside deepeval.evaluate and assert_test, offline (no LLM, no network)."""

from __future__ import annotations

import pytest

pytest.importorskip("deepeval", reason="pip install 'veridic[deepeval]'")

from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: E402,F401


@pytest.fixture(autouse=True)
def _offline_deepeval(monkeypatch, tmp_path):
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
    monkeypatch.chdir(tmp_path)  # DeepEval keeps its run files in the working directory


def cases(rows):
    from deepeval.test_case import LLMTestCase

    return [LLMTestCase(input=q, actual_output=a, expected_output=a, retrieval_context=ctx) for q, ctx, a in rows]


def run(rows, metrics, *, run_async=True):
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, DisplayConfig

    res = evaluate(test_cases=cases(rows), metrics=metrics, async_config=AsyncConfig(run_async=run_async),
                   display_config=DisplayConfig(show_indicator=False, print_results=False))
    return {tr.input: {m.name: m for m in tr.metrics_data} for tr in res.test_results}


@pytest.mark.parametrize("run_async", [True, False])
def test_evaluate_gives_veridic_scores_and_reasons(tmp_path, no_network, run_async):
    from deepeval.metrics import ExactMatchMetric

    from veridic.integrations.deepeval import VeridicMetric

    by_input = run(CASES, [VeridicMetric(**FAST), ExactMatchMetric()], run_async=run_async)
    got = [by_input[q]["veridic faithfulness"] for q, _, _ in CASES]
    assert [m.score for m in got] == pytest.approx(cli_scores(good_rows(), tmp_path / "ref"), abs=1e-6)
    assert [m.success for m in got][:2] == [True, False]
    assert "It never hired anyone." in got[1].reason and "closest evidence: context 0" in got[1].reason
    assert all(by_input[q]["Exact Match"].success for q, _, _ in CASES)


def test_assert_test_passes_a_supported_answer_and_fails_an_unsupported_one(no_network):
    from deepeval import assert_test

    from veridic.integrations.deepeval import VeridicMetric

    supported, contradicted = cases(CASES[:2])
    assert_test(supported, [VeridicMetric(**FAST)], run_async=False)
    with pytest.raises(AssertionError, match="veridic faithfulness"):
        assert_test(contradicted, [VeridicMetric(**FAST)], run_async=False)


def test_bad_rows_are_errors_with_reasons_and_the_other_metric_completes(no_network):
    from deepeval.metrics import ExactMatchMetric
    from deepeval.test_case import LLMTestCase

    from veridic.integrations.deepeval import VeridicMetric

    rows = [("no context", None, "Paris is the capital of France."), ("empty", [], "Paris is the capital of France."), ("huge", BAD[4][1], "Paris.")]
    by_input = run(rows, [VeridicMetric(**FAST), ExactMatchMetric()])
    for q, _, _ in rows:
        m = by_input[q]["veridic faithfulness"]
        assert m.score is None and not m.success and m.error  # DeepEval reports the error in place of a reason
        assert by_input[q]["Exact Match"].success
    assert "no context" in by_input["empty"]["veridic faithfulness"].error
    assert "limit is 2,000,000" in by_input["huge"]["veridic faithfulness"].error
    # DeepEval's own schema refuses non-string contexts; a None output is judged and reported
    with pytest.raises(Exception, match="retrieval_context"):  # pydantic ValidationError, whichever version
        LLMTestCase(input="q", actual_output="a", retrieval_context=BAD[2][1])
    metric = VeridicMetric(**FAST)
    assert metric.measure(LLMTestCase(input="q", actual_output=None, retrieval_context=CASES[0][1])) is None
    assert "answer is None" in metric.error and "could not judge" in metric.reason and not metric.is_successful()


@pytest.mark.slow
def test_embedded_model_in_evaluate_equals_veridic_score(tmp_path, no_network):
    from veridic.integrations.deepeval import VeridicMetric

    by_input = run(CASES, [VeridicMetric()])
    got = [by_input[q]["veridic faithfulness"].score for q, _, _ in CASES]
    assert got == pytest.approx(cli_scores(good_rows(), tmp_path / "ref", fast=False), abs=1e-5)
