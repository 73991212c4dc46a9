import numpy as np
import pytest

pytest.importorskip("onnxruntime")


def test_export_and_int8_backend_agree_with_torch(tiny_nli_dir, tmp_path):
    from veridic.nli import export_onnx, load_backend

    files = export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "onnx")
    assert files["fp32"].exists() and files["int8"].exists()
    prem = ["The company hired 200 engineers in 2023.", "A cat sat on the mat.", "Short."]
    hyp = ["The company laid off engineers.", "A cat sat.", "A much longer hypothesis than its premise."]
    ref = load_backend(tiny_nli_dir, dtype="float32").predict(prem, hyp)
    fp32 = load_backend(tmp_path / "onnx", kind="onnx", file="model.onnx").predict(prem, hyp)
    int8 = load_backend(tmp_path / "onnx", kind="onnx").predict(prem, hyp)
    np.testing.assert_allclose(fp32, ref, atol=1e-4)
    np.testing.assert_allclose(int8, ref, atol=0.05)


def test_onnx_backend_refuses_mc_dropout(tiny_nli_dir, tmp_path):
    from veridic.errors import ConfigError
    from veridic.nli import NLIScorer, export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "o", quantize=False)
    b = load_backend(tmp_path / "o", kind="onnx")
    with pytest.raises(ConfigError, match="torch backend"):
        NLIScorer(backend=b, mc_samples=15)
