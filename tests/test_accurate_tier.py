"""The accurate tier, ``veridic-nli-mpnet-l6``, as shipped: selectable by name, intact, and its compact forms within
the tolerances its model card states (measured by benchmarks/precision_tolerance.py on the contrast suite)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from veridic.nli._backend import embedded_model_path  # noqa: E402

NAME = "veridic-nli-mpnet-l6"
FOLDER = embedded_model_path(NAME)
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (FOLDER / "config.json").exists(), reason=f"{NAME} is not in this checkout")]

PREMISES = ["A man is sleeping on a couch.", "The cat chased the dog across the yard.", "Paris is the capital of France.",
            "The company hired 200 engineers in 2023.", "Maria sold her car to John last week."]
HYPOTHESES = ["A person is asleep.", "The dog chased the cat across the yard.", "France's capital is Paris.",
              "The company laid off engineers in 2023.", "John bought Maria's car."]


@pytest.fixture(scope="module")
def packed():
    from veridic.nli import load_backend

    return load_backend(NAME, kind="torch", dtype="float32")


def test_the_shards_are_what_the_card_names(packed):
    meta = json.loads((FOLDER / "veridic_packed.json").read_text())
    for shard, digest in meta["shards"].items():
        assert hashlib.sha256((FOLDER / shard).read_bytes()).hexdigest() == digest
        assert (FOLDER / shard).stat().st_size < 100e6  # under common per-file limits
    assert not (FOLDER / "model.safetensors").exists()  # shipped once, as int8 rows
    assert packed.describe()["revision"] == json.loads((FOLDER / "veridic_model.json").read_text())["revision"]


def test_it_reads_meaning_not_just_words(packed):
    p = packed.predict(PREMISES, HYPOTHESES)  # columns: entailment, neutral, contradiction
    assert p.shape == (5, 3) and np.allclose(p.sum(1), 1.0, atol=1e-4)
    assert p[0].argmax() == 0 and p[2].argmax() == 0  # other words, same meaning
    assert p[3].argmax() == 2  # a changed action
    # The model alone still entails a swap of who did what to whom (its card says so); the default scorer's
    # structure check, which reads the roles from the parse, turns the swap into a contradiction.
    pytest.importorskip("spacy")
    import veridic

    v = veridic.score(sources=PREMISES[1:3], claims=HYPOTHESES[1:3], model=NAME, method="e-c", backend="torch", dtype="float32")
    assert v[0].label == "unsupported" and v[1].label == "supported"


def test_bf16_and_onnx_int8_stay_within_the_card_tolerance(packed, tmp_path, monkeypatch):
    from veridic.nli import load_backend

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    ref = packed.predict(PREMISES, HYPOTHESES)
    bf16 = load_backend(NAME, kind="torch", dtype="bfloat16").predict(PREMISES, HYPOTHESES)
    assert np.abs(bf16 - ref).max() < 0.03
    fast = load_backend(NAME)  # auto: the ONNX int8 copy, exported into the model cache on first use
    assert fast.describe()["backend"] == "onnx"
    got = fast.predict(PREMISES, HYPOTHESES)
    # The card: mean 0.022 and max 0.38 over the contrast suite; a pair near a class boundary may change class.
    assert np.abs(got - ref).mean() < 0.05 and np.abs(got - ref).max() < 0.40
    clear = ref.max(1) >= 0.6
    assert clear.sum() >= 3 and (got.argmax(1) == ref.argmax(1))[clear].all()


def test_selected_by_name_through_the_library_and_the_cli(tmp_path, monkeypatch):
    import veridic

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    v = veridic.score(sources=[PREMISES[0]], claims=[HYPOTHESES[0]], model=NAME, method="e-c", backend="torch", dtype="float32")
    assert v[0].score > 0.3
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["score", "-s", PREMISES[0], "-c", HYPOTHESES[0], "--model", NAME, "--method", "e-c",
                                   "--backend", "torch", "--dtype", "float32", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout[res.stdout.index("{"):])["score"] == pytest.approx(v[0].score, abs=1e-6)
