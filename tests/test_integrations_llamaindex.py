"""VeridicEvaluator in LlamaIndex's evaluation API and BatchEvalRunner, offline (no LLM, no network)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("llama_index.core", reason="pip install 'veridic[llamaindex]'")

from llama_index.core.base.response.schema import Response  # noqa: E402
from llama_index.core.evaluation import BatchEvalRunner  # noqa: E402
from llama_index.core.schema import NodeWithScore, TextNode  # noqa: E402
from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: E402,F401

from veridic.integrations.llamaindex import VeridicEvaluator  # noqa: E402


def response(answer, contexts):
    return Response(response=answer, source_nodes=[NodeWithScore(node=TextNode(text=c), score=1.0) for c in contexts])


def test_batch_runner_gives_veridic_scores_with_feedback(tmp_path, no_network):
    runner = BatchEvalRunner({"veridic": VeridicEvaluator(**FAST)}, workers=4)
    res = runner.evaluate_responses(queries=[q for q, _, _ in CASES], responses=[response(a, ctx) for _, ctx, a in CASES])["veridic"]
    assert [r.score for r in res] == pytest.approx(cli_scores(good_rows(), tmp_path), abs=1e-6)
    assert [r.passing for r in res][:2] == [True, False]
    assert "It never hired anyone." in res[1].feedback
    detail = json.loads(res[3].feedback.splitlines()[-1])
    ev = detail["sentences"][0]["evidence"]
    assert ev["context"] == 0 and CASES[3][1][0][ev["start"]:ev["end"]] == ev["text"]


def test_string_inputs_and_bad_rows(no_network):
    runner = BatchEvalRunner({"veridic": VeridicEvaluator(**FAST)}, workers=2)
    rows = [CASES[0], BAD[1], BAD[3], BAD[4]]
    res = runner.evaluate_response_strs(queries=[q for q, _, _ in rows], response_strs=[a for _, _, a in rows],
                                        contexts_list=[ctx for _, ctx, _ in rows])["veridic"]
    assert res[0].passing and not res[0].invalid_result
    for r, msg in zip(res[1:], ["no context", "answer is None", "limit is 2,000,000"]):
        assert r.invalid_result and r.score is None and not r.passing and msg in r.invalid_reason


def test_evaluate_with_non_string_contexts_is_an_invalid_result(no_network):
    r = VeridicEvaluator(**FAST).evaluate(query="q", response=CASES[0][2], contexts=BAD[2][1])
    assert r.invalid_result and "context 1 is a int" in r.invalid_reason


@pytest.mark.slow
def test_embedded_model_in_the_batch_runner_equals_veridic_score(tmp_path, no_network):
    runner = BatchEvalRunner({"veridic": VeridicEvaluator()}, workers=4)
    res = runner.evaluate_responses(queries=[q for q, _, _ in CASES], responses=[response(a, ctx) for _, ctx, a in CASES])["veridic"]
    assert [r.score for r in res] == pytest.approx(cli_scores(good_rows(), tmp_path, fast=False), abs=1e-5)
