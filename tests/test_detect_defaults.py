"""What `veridic detect` and `build_detector` load with no backend flag: the library's default (auto).

The tiny model ships an int8 ONNX export, as the embedded model does, so `auto` resolves to ONNX int8.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("onnxruntime")


def _kind(scorer) -> str:
    return scorer.backend.describe()["backend"]


def test_build_detector_defaults_to_the_auto_backend(tiny_int8_dir, nlp):
    from veridic.detect.cli import build_detector

    det = build_detector(model=str(tiny_int8_dir))
    assert _kind(det.scorer) == "onnx" and det.scorer.backend.file.name == "model.int8.onnx"
    assert _kind(build_detector(model=str(tiny_int8_dir), backend="torch").scorer) == "torch"


def test_build_detector_with_mc_dropout_resolves_to_torch(tiny_int8_dir, nlp):
    from veridic.config import ScorerConfig
    from veridic.detect.cli import build_detector

    det = build_detector(config=ScorerConfig(method="e-c", mc_samples=2), model=str(tiny_int8_dir))
    assert _kind(det.scorer) == "torch"


def test_rerank_works_on_the_onnx_backend(tiny_int8_dir, nlp, tmp_path):
    from veridic.detect.cli import build_detector
    from veridic.retrieve import Document, EvidenceIndex

    docs = [Document(doc_id="cat.txt", title="Cats", text="A cat sat on the mat in Paris. The cat was black."),
            Document(doc_id="spain.txt", title="Spain", text="The company hired engineers in Spain in 2023.")]
    EvidenceIndex.build(documents=docs, encoder=None).save(tmp_path / "idx")
    det = build_detector(model=str(tiny_int8_dir), index=str(tmp_path / "idx"), rerank=True)
    assert det.retriever.reranker is det.scorer.backend and _kind(det.scorer) == "onnx"
    hits = det.retriever.search(query="The cat hired engineers.", k=2, mode="bm25", rerank=True)
    assert len(hits) == 2 and all(h.nli_relevance is not None and 0.0 <= h.nli_relevance <= 1.0 for h in hits)


def test_detect_cli_defaults_to_the_auto_backend(tiny_int8_dir, nlp):
    from typer.testing import CliRunner

    from veridic.cli import app

    args = ["detect", "--model", str(tiny_int8_dir), "--evidence", "A cat sat on the mat in Paris.", "--passage", "A cat sat in Spain.", "--json"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    shipped = json.loads(r.output)["detector"]  # the pipeline: the shipped tagger over the rule detector
    assert shipped["tagger"]["tagger"].endswith("veridic-tagger-mpnet-l6") and shipped["detector"]["scorer"]["backend"]["backend"] == "onnx"
    r = CliRunner().invoke(app, [*args, "--backend", "torch", "--tagger", "none"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["detector"]["scorer"]["backend"]["backend"] == "torch"


def test_detect_cli_phrase_spans_reach_the_detector(tiny_int8_dir, nlp):
    from typer.testing import CliRunner

    from veridic.cli import app

    args = ["detect", "--model", str(tiny_int8_dir), "--evidence", "A cat sat on the mat in Paris.", "--passage", "A cat sat in Spain.", "--json",
            "--tagger", "none"]
    plain = json.loads(CliRunner().invoke(app, args).output)["detector"]
    r = CliRunner().invoke(app, [*args, "--sentence-spans"])
    assert r.exit_code == 0, r.output
    det = json.loads(r.output)["detector"]
    # Phrase spans are the default; --sentence-spans turns them off.
    assert (plain["phrase_spans"], det["phrase_spans"]) == (True, False)
    assert (plain["phrase_max_e"], plain["phrase_min_gain"]) == (0.25, 0.3)


def test_bench_phrase_flags_keep_the_detectors_defaults_and_are_checked(tiny_int8_dir, nlp):
    from typer.testing import CliRunner

    from veridic.cli import app

    args = ["detect", "bench", "suite", "--model", str(tiny_int8_dir), "--limit", "1", "--n-boot", "10", "--phrase-spans"]
    r = CliRunner().invoke(app, [*args, "--phrase-max-e", "1.0"])
    assert r.exit_code == 0, r.output
    det = json.loads(r.output[r.output.index("{"):])["detector"]
    assert (det["phrase_max_e"], det["phrase_min_gain"]) == (1.0, 0.3)  # the unset one stays the detector's
    r = CliRunner().invoke(app, [*args, "--phrase-min-gain", "1.5"])
    assert r.exit_code == 2
    assert "phrase_min_gain must lie in [0, 1]; got 1.5" in r.output
