"""The commercially usable model, ``veridic-nli-minilm-commercial``, as shipped: selectable by name, intact, trained
only on inputs whose licences allow commercial use, and its compact forms within the tolerances its card states."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from veridic.nli._backend import embedded_model_path  # noqa: E402

NAME = "veridic-nli-minilm-commercial"
FOLDER = embedded_model_path(NAME)
pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not (FOLDER / "config.json").exists(), reason=f"{NAME} is not in this checkout")]

# The card's bounds for the ONNX int8 copy against the packed weights in fp32 (contrast suite: mean 0.019, max 0.386).
MEAN_TOL, MAX_TOL = 0.05, 0.40
PREMISES = ["A man is sleeping on a couch.", "Paris is the capital of France.",
            "The company hired 200 engineers in 2023.", "The museum opened in 1998 and has 40 rooms."]
HYPOTHESES = ["A person is asleep.", "France's capital is Paris.",
              "The company laid off engineers in 2023.", "The museum opened in 2005."]


@pytest.fixture(scope="module")
def packed():
    from veridic.nli import load_backend

    return load_backend(NAME, kind="torch", dtype="float32")


def test_the_shards_are_what_the_card_names_and_every_input_allows_commercial_use(packed):
    meta = json.loads((FOLDER / "veridic_packed.json").read_text())
    for shard, digest in meta["shards"].items():
        assert hashlib.sha256((FOLDER / shard).read_bytes()).hexdigest() == digest
    assert packed.describe()["revision"] == json.loads((FOLDER / "veridic_model.json").read_text())["revision"]
    summary = json.loads((FOLDER / "training_summary.json").read_text())
    assert summary["config"]["commercial"] is True and summary["stopped_by"] == "completed"
    from veridic.train._licences import LICENCES

    trained = {k for k, v in summary["data"]["real_sets"].items() if isinstance(v, dict) and v["trained"] > 0}
    assert trained and all(LICENCES[s].commercial == "yes" for s in trained)
    card = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert "commercial use allowed" in card and "PRECISION_TABLE" not in card


def test_it_reads_meaning_not_just_words(packed):
    p = packed.predict(PREMISES, HYPOTHESES)  # columns: entailment, neutral, contradiction
    assert p.shape == (4, 3) and np.allclose(p.sum(1), 1.0, atol=1e-4)
    assert p[0].argmax() == 0 and p[1].argmax() == 0  # other words, same meaning
    assert p[2].argmax() == 2 and p[3].argmax() == 2  # a changed action, a changed date


def test_onnx_int8_stays_within_the_card_tolerance(packed, tmp_path, monkeypatch):
    from veridic.nli import load_backend

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    ref = packed.predict(PREMISES, HYPOTHESES)
    fast = load_backend(NAME)  # auto: the ONNX int8 copy, exported into the model cache on first use
    assert fast.describe()["backend"] == "onnx"
    got = fast.predict(PREMISES, HYPOTHESES)
    assert np.abs(got - ref).mean() < MEAN_TOL and np.abs(got - ref).max() < MAX_TOL
    clear = ref.max(1) >= 0.6
    assert clear.sum() >= 3 and (got.argmax(1) == ref.argmax(1))[clear].all()


def test_selected_by_name_with_its_own_combination(tmp_path, monkeypatch):
    import veridic

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path))
    v = veridic.score(sources=PREMISES[:1], claims=HYPOTHESES[:1], model=NAME, method="e-c", backend="torch", dtype="float32")
    assert v[0].score > 0.3
    hybrid = veridic.score(sources=PREMISES[2:3], claims=HYPOTHESES[2:3], model=NAME, backend="torch", dtype="float32")
    assert hybrid[0].label == "unsupported"
    from typer.testing import CliRunner

    from veridic.cli import app

    res = CliRunner().invoke(app, ["score", "-s", PREMISES[0], "-c", HYPOTHESES[0], "--model", NAME, "--method", "e-c",
                                   "--backend", "torch", "--dtype", "float32", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout[res.stdout.index("{"):])["score"] == pytest.approx(v[0].score, abs=1e-6)
