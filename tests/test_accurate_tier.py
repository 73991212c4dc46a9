"""The base-size NLI models, as shipped: selectable by name, intact, and their compact forms within the tolerances
each model card states (measured by benchmarks/precision_tolerance.py on the contrast suite)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from veridic.nli._backend import embedded_model_path  # noqa: E402

#: Per model, the bounds its card states: bf16 against the packed weights in fp32 (largest class-probability change),
#: and the ONNX int8 copy's mean and largest change.
CARD_BOUNDS = {"veridic-nli-mpnet-base": (0.04, 0.12, 0.80)}
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=sorted(CARD_BOUNDS))
def name(request):
    if not (embedded_model_path(request.param) / "config.json").exists():
        pytest.skip(f"{request.param} is not in this checkout")
    return request.param

PREMISES = ["A man is sleeping on a couch.", "The cat chased the dog across the yard.", "Paris is the capital of France.",
            "The company hired 200 engineers in 2023.", "Maria sold her car to John last week."]
HYPOTHESES = ["A person is asleep.", "The dog chased the cat across the yard.", "France's capital is Paris.",
              "The company laid off engineers in 2023.", "John bought Maria's car."]


@pytest.fixture(scope="module")
def packed(name):
    from veridic.nli import load_backend

    return load_backend(name, kind="torch", dtype="float32")


def test_the_shards_are_what_the_card_names(name, packed):
    folder = embedded_model_path(name)
    meta = json.loads((folder / "veridic_packed.json").read_text())
    for shard, digest in meta["shards"].items():
        assert hashlib.sha256((folder / shard).read_bytes()).hexdigest() == digest
        assert (folder / shard).stat().st_size < 100e6  # under common per-file limits
    assert not (folder / "model.safetensors").exists()  # shipped once, as int8 rows
    assert packed.describe()["revision"] == json.loads((folder / "veridic_model.json").read_text())["revision"]


def test_it_reads_meaning_not_just_words(name, packed):
    p = packed.predict(PREMISES, HYPOTHESES)  # columns: entailment, neutral, contradiction
    assert p.shape == (5, 3) and np.allclose(p.sum(1), 1.0, atol=1e-4)
    assert p[0].argmax() == 0 and p[2].argmax() == 0  # other words, same meaning
    assert p[3].argmax() == 2  # a changed action
    # A model alone may still entail a swap of who did what to whom (the cards say how often); the default scorer's
    # structure check, which reads the roles from the parse, turns the swap into a contradiction.
    pytest.importorskip("spacy")
    import veridic

    v = veridic.score(sources=PREMISES[1:3], claims=HYPOTHESES[1:3], model=name, method="e-c", backend="torch", dtype="float32")
    assert v[0].label == "unsupported" and v[1].label == "supported"


def test_bf16_and_onnx_int8_stay_within_the_card_tolerance(name, packed, tmp_path, monkeypatch):
    from veridic.nli import load_backend

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    ref = packed.predict(PREMISES, HYPOTHESES)
    bf16 = load_backend(name, kind="torch", dtype="bfloat16").predict(PREMISES, HYPOTHESES)
    bf16_max, onnx_mean, onnx_max = CARD_BOUNDS[name]
    assert np.abs(bf16 - ref).max() < bf16_max
    # auto: the ONNX int8 copy, exported into the model cache on first use, unless the card found it too far from the
    # weights and the model declines it ("auto_backend": "torch"); asked for by name, the copy is still built.
    declines = json.loads((embedded_model_path(name) / "veridic_model.json").read_text()).get("auto_backend") == "torch"
    assert load_backend(name).describe()["backend"] == ("torch" if declines else "onnx")
    fast = load_backend(name, kind="onnx")
    assert fast.describe()["backend"] == "onnx"
    got = fast.predict(PREMISES, HYPOTHESES)
    # Each card states the mean and largest change over the contrast suite; a pair near a class boundary may change class.
    assert np.abs(got - ref).mean() < onnx_mean and np.abs(got - ref).max() < onnx_max
    clear = ref.max(1) >= 0.6
    if not declines:  # a copy that runs by default keeps every clear class; a declined one need not
        assert clear.sum() >= 3 and (got.argmax(1) == ref.argmax(1))[clear].all()


def test_selected_by_name_through_the_library_and_the_cli(name, tmp_path, monkeypatch):
    import veridic

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    v = veridic.score(sources=[PREMISES[0]], claims=[HYPOTHESES[0]], model=name, method="e-c", backend="torch", dtype="float32")
    assert v[0].score > 0.3
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["score", "-s", PREMISES[0], "-c", HYPOTHESES[0], "--model", name, "--method", "e-c",
                                   "--backend", "torch", "--dtype", "float32", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout[res.stdout.index("{"):])["score"] == pytest.approx(v[0].score, abs=1e-6)
