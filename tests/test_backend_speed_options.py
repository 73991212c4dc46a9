"""The backend's speed options: int8 (torch dynamic quantisation, the ONNX int8 file), one pair per call for
quantised models (scores independent of batch mates) and running repeated pairs once."""

from __future__ import annotations

import numpy as np
import pytest

from veridic.errors import ConfigError

PREM = ["The company hired 200 engineers in 2023.", "A cat sat on the mat.", "Short.", "Paris is in France, said the mayor of paris."]
HYP = ["The company laid off engineers.", "A cat sat.", "A much longer hypothesis than its premise.", "Paris is in Spain."]


@pytest.fixture(scope="module")
def int8_backend(tiny_nli_dir):
    from veridic.nli import load_backend

    return load_backend(tiny_nli_dir, dtype="int8", batch_size=8)


def test_int8_quantises_the_linear_layers_and_stays_close_to_float32(int8_backend, tiny_backend):
    import torch

    quantised = [m for m in int8_backend.model.modules() if type(m).__module__.startswith("torch.ao.nn.quantized")]
    assert quantised, "no Linear layer was quantised"
    assert not any(type(m) is torch.nn.Linear for m in int8_backend.model.modules())
    assert int8_backend.describe()["dtype"] == "int8"
    ref = tiny_backend.predict(PREM, HYP)
    got = int8_backend.predict(PREM, HYP)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(got, ref, atol=0.05)
    assert not np.array_equal(got, ref)  # it really runs the quantised weights


def test_int8_scores_of_a_pair_do_not_depend_on_its_batch_mates(int8_backend):
    together = int8_backend.predict(PREM, HYP)
    for i in range(len(PREM)):
        alone = int8_backend.predict([PREM[i]], [HYP[i]])
        np.testing.assert_array_equal(alone[0], together[i])
    assert int8_backend._batches([5, 3, 9], 8) == [[1], [0], [2]]


def test_int8_keeps_mc_dropout(int8_backend):
    a = int8_backend.predict(PREM[:2], HYP[:2], mc_samples=4, seed=1)
    b = int8_backend.predict(PREM[:2], HYP[:2], mc_samples=4, seed=1)
    assert a.shape == (2, 4, 3)
    np.testing.assert_array_equal(a, b)
    assert a[0].std(axis=0).max() > 0  # dropout is on


def test_int8_on_a_gpu_is_refused_before_loading(tiny_nli_dir, monkeypatch):
    import torch

    from veridic.cli_options import check_model_flags
    from veridic.nli import load_backend

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(ConfigError, match="CPU only"):
        load_backend("/nowhere/at/all", dtype="int8", device="cuda")
    with pytest.raises(ConfigError, match="CPU only"):
        check_model_flags(backend="torch", device="auto", dtype="int8")
    assert check_model_flags(backend="torch", device="cpu", dtype="int8") == "cpu"


def test_repeated_pairs_run_once(tiny_backend, monkeypatch):
    seen = []
    inner = type(tiny_backend)._predict

    def spy(self, premises, hypotheses, **kw):
        seen.append(list(zip(premises, hypotheses)))
        return inner(self, premises, hypotheses, **kw)

    monkeypatch.setattr(type(tiny_backend), "_predict", spy)
    prem = [PREM[0], PREM[1], PREM[0], PREM[0]]
    hyp = [HYP[0], HYP[1], HYP[0], HYP[2]]
    got = tiny_backend.predict(prem, hyp)
    assert seen == [[(PREM[0], HYP[0]), (PREM[1], HYP[1]), (PREM[0], HYP[2])]]
    np.testing.assert_array_equal(got[0], got[2])
    ref = inner(tiny_backend, prem, hyp)
    np.testing.assert_allclose(got, ref, atol=1e-6)
    mc = tiny_backend.predict(prem, hyp, mc_samples=3, seed=2)
    assert mc.shape == (4, 3, 3)
    np.testing.assert_array_equal(mc[0], mc[2])


def test_onnx_int8_runs_one_pair_per_call_and_dtype_picks_the_file(tiny_nli_dir, tmp_path):
    pytest.importorskip("onnxruntime")
    from veridic.nli import export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "x")
    int8 = load_backend(tmp_path / "x", kind="onnx", dtype="int8", batch_size=8)
    fp32 = load_backend(tmp_path / "x", kind="onnx", dtype="float32", batch_size=8)
    assert int8.file.name == "model.int8.onnx" and int8.one_pair_per_call
    assert fp32.file.name == "model.onnx" and not fp32.one_pair_per_call
    together = int8.predict(PREM, HYP)
    for i in range(len(PREM)):
        np.testing.assert_array_equal(int8.predict([PREM[i]], [HYP[i]])[0], together[i])
    with pytest.raises(ConfigError, match="float32.*int8"):
        load_backend(tmp_path / "x", kind="onnx", dtype="bfloat16")


def test_file_tokenizer_encodes_as_the_transformers_tokenizer(tiny_nli_dir):
    from transformers import AutoTokenizer

    from veridic.nli._backend import _FileTokenizer

    hf = AutoTokenizer.from_pretrained(tiny_nli_dir)
    ft = _FileTokenizer(tiny_nli_dir)
    prem = PREM + [" ".join(PREM) * 3]
    hyp = HYP + [" ".join(HYP)]
    for m in (128, 24):  # 24 truncates both sides of the last pairs
        enc = hf(prem, hyp, truncation=True, max_length=m, padding=False)
        assert ft.pairs(prem, hyp, m) == (enc["input_ids"], enc["token_type_ids"])
    for t in prem:
        assert ft.offsets(t) == [tuple(o) for o in hf(t, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]]
        assert ft.count(t) == len(hf(t, add_special_tokens=False)["input_ids"])
    assert ft.model_max_length == hf.model_max_length


def test_onnx_backend_loads_without_torch_and_builds_the_torch_windows(tiny_nli_dir, tiny_backend, tmp_path):
    # transformers imports torch (seconds of a one-pair run): the ONNX backend reads tokenizer.json and config.json itself.
    pytest.importorskip("onnxruntime")
    import subprocess
    import sys

    from veridic.nli import export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "x", quantize=False)
    b = load_backend(tmp_path / "x", kind="onnx")
    assert b.max_length == tiny_backend.max_length
    assert b.label_map == tiny_backend.label_map
    code = ("import sys; from veridic.nli import load_backend; b = load_backend(sys.argv[1], kind='onnx'); "
            "b.predict(['A cat sat on the mat.'], ['A cat sat.']); print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "x")], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr


def test_onnx_threads_follow_omp_num_threads(tiny_nli_dir, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from veridic.nli import export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "x", quantize=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    opts = load_backend(tmp_path / "x", kind="onnx").session.get_session_options()
    assert opts.intra_op_num_threads == 1
    assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert load_backend(tmp_path / "x", kind="onnx", threads=2).session.get_session_options().intra_op_num_threads == 2


def test_auto_backend_picks_onnx_int8_only_where_it_runs_the_configuration(tiny_nli_dir, tmp_path):
    pytest.importorskip("onnxruntime")
    import shutil

    from veridic.factory import load_scorer
    from veridic.nli import export_onnx
    from veridic.nli._backend import resolve_backend_kind

    assert resolve_backend_kind("auto", model=tiny_nli_dir) == "torch"  # no ONNX export beside the weights
    model = tmp_path / "m"
    shutil.copytree(tiny_nli_dir, model)
    export_onnx(model=model, out_dir=model / "onnx")
    assert resolve_backend_kind("auto", model=model) == "onnx"
    assert resolve_backend_kind("auto", model=model, dtype="int8") == "onnx"
    assert resolve_backend_kind("auto", model=model, mc_samples=15) == "torch"  # dropout needs torch
    assert resolve_backend_kind("auto", model=model, dtype="float32") == "torch"
    assert resolve_backend_kind("torch", model=model) == "torch"
    s = load_scorer("e-c", model=model, reuse=False)
    assert s.backend.describe()["backend"] == "onnx" and s.backend.file.name == "model.int8.onnx"
    mc = load_scorer("e-c", model=model, mc_samples=3, reuse=False)
    assert mc.backend.describe()["backend"] == "torch"
    assert load_scorer("e-c", model=model, backend="torch", reuse=False).backend.describe()["backend"] == "torch"
    # A model whose card found its int8 copy too far from its weights declines it; asked for by name, ONNX still runs.
    (model / "veridic_model.json").write_text('{"name": "m", "auto_backend": "torch"}', encoding="utf-8")
    assert resolve_backend_kind("auto", model=model) == "torch"
    assert load_scorer("e-c", model=model, reuse=False).backend.describe()["backend"] == "torch"
    assert load_scorer("e-c", model=model, backend="onnx", reuse=False).backend.describe()["backend"] == "onnx"


def test_auto_backend_ignores_an_export_made_from_other_weights(tiny_nli_dir, tmp_path, caplog):
    pytest.importorskip("onnxruntime")
    import json
    import shutil

    from veridic.nli import export_onnx
    from veridic.nli._backend import resolve_backend_kind

    model = tmp_path / "m"
    shutil.copytree(tiny_nli_dir, model)
    files = export_onnx(model=model, out_dir=model / "onnx")
    assert json.loads(files["record"].read_text())["weights"]
    assert resolve_backend_kind("auto", model=model) == "onnx"
    other = make_other_weights(tmp_path / "other")
    shutil.copy(other / "model.safetensors", model / "model.safetensors")  # retrained, not re-exported
    assert resolve_backend_kind("auto", model=model) == "torch"
    assert "Re-export" in caplog.text


def make_other_weights(path):
    from conftest import make_tiny_nli

    return make_tiny_nli(path, seed=1)
