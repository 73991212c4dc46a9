"""VeridicEvaluator in a Haystack evaluation pipeline, offline (no LLM, no network)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("haystack", reason="pip install 'veridic[haystack]'")

from haystack import Pipeline  # noqa: E402
from haystack.components.evaluators import AnswerExactMatchEvaluator  # noqa: E402
from haystack.evaluation import EvaluationRunResult  # noqa: E402
from test_integrations_common import BAD, CASES, FAST, cli_scores, good_rows, no_network  # noqa: E402,F401

from veridic.integrations.haystack import VeridicEvaluator  # noqa: E402


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch):
    monkeypatch.setenv("HAYSTACK_TELEMETRY_ENABLED", "False")


def run(rows, evaluator):
    p = Pipeline()
    p.add_component("veridic", evaluator)
    p.add_component("exact", AnswerExactMatchEvaluator())
    answers = [a for _, _, a in rows]
    return p.run({"veridic": {"questions": [q for q, _, _ in rows], "contexts": [c for _, c, _ in rows], "predicted_answers": answers},
                  "exact": {"ground_truth_answers": [a or "" for a in answers], "predicted_answers": [a or "" for a in answers]}})


def test_pipeline_gives_veridic_scores_reasons_and_an_aggregate(tmp_path, no_network):
    out = run(CASES, VeridicEvaluator(**FAST))
    ref = cli_scores(good_rows(), tmp_path)
    assert out["veridic"]["individual_scores"] == pytest.approx(ref, abs=1e-6)
    assert out["veridic"]["score"] == pytest.approx(sum(ref) / len(ref))
    res = out["veridic"]["results"]
    assert res[0]["passing"] and not res[1]["passing"] and "It never hired anyone." in res[1]["reason"]
    ev = res[3]["sentences"][0]["evidence"]
    assert ev["context"] == 0 and CASES[3][1][0][ev["start"]:ev["end"]] == ev["text"]
    assert out["exact"]["score"] == 1.0
    report = EvaluationRunResult("veridic", inputs={"question": [q for q, _, _ in CASES]},
                                 results={"veridic": out["veridic"], "exact": out["exact"]})
    assert report.aggregated_report(output_format="json")["score"][0] == pytest.approx(out["veridic"]["score"])


def test_bad_rows_score_nan_with_an_error_and_the_pipeline_completes(no_network):
    rows = [CASES[0], BAD[0], BAD[1], BAD[2], BAD[3], BAD[4]]
    out = run(rows, VeridicEvaluator(**FAST))
    scores = out["veridic"]["individual_scores"]
    assert not math.isnan(scores[0]) and all(math.isnan(s) for s in scores[1:])
    assert out["veridic"]["score"] == pytest.approx(scores[0])
    errors = [r["error"] for r in out["veridic"]["results"][1:]]
    for e, msg in zip(errors, ["no context", "no context", "context 1 is a int", "answer is None", "limit is 2,000,000"]):
        assert msg in e
    assert len(out["exact"]["individual_scores"]) == len(rows)


def test_the_component_serialises_in_a_pipeline():
    p = Pipeline()
    p.add_component("veridic", VeridicEvaluator(config="e-c", backend="dummy", structure_check=False))
    again = Pipeline.loads(p.dumps(), allowed_modules=["veridic.integrations.haystack"])
    comp = again.get_component("veridic")
    assert comp.judge.config == p.get_component("veridic").judge.config and comp.backend == "dummy"


@pytest.mark.slow
def test_embedded_model_in_a_pipeline_equals_veridic_score(tmp_path, no_network):
    out = run(CASES, VeridicEvaluator())
    assert out["veridic"]["individual_scores"] == pytest.approx(cli_scores(good_rows(), tmp_path, fast=False), abs=1e-5)
