import numpy as np
import pytest

from veridic import ScorerConfig, build_scorer

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
    from veridic.nli import export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "o", quantize=False)
    b = load_backend(tmp_path / "o", kind="onnx")
    with pytest.raises(ConfigError, match="torch backend"):
        build_scorer(ScorerConfig(method="e-c", mc_samples=15, structure_check=False), backend=b)


def test_an_exported_model_scores_with_the_default_method(tiny_nli_dir, tmp_path):
    # The default method (hybrid) needs the model's hybrid weights: export carries them, the CLI path scores.
    import json
    import shutil

    from typer.testing import CliRunner

    from veridic.cli import app
    from veridic.nli._backend import embedded_model_path

    model = tmp_path / "model"
    shutil.copytree(tiny_nli_dir, model)
    shutil.copy(embedded_model_path() / "hybrid.json", model / "hybrid.json")
    r = CliRunner().invoke(app, ["export", "onnx", "--model", str(model), "--output", str(tmp_path / "x"), "--no-quantize"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "x" / "hybrid.json").read_text() == (model / "hybrid.json").read_text()
    r = CliRunner().invoke(app, ["score", "--backend", "onnx", "--model", str(tmp_path / "x"), "--source", "A cat sat on the mat.",
                                 "--claim", "A cat sat.", "--json"])
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    assert v["method"] == "hybrid" and 0.0 <= v["score"] <= 1.0


def test_onnx_backend_refuses_a_gpu_device_before_loading(tmp_path):
    from veridic.errors import ConfigError
    from veridic.nli import load_backend

    with pytest.raises(ConfigError, match="device must be"):
        load_backend(tmp_path / "nowhere", kind="onnx", device="tpu")


def test_int8_products_are_exact_on_every_cpu():
    # 255 × 127 twice is 64,770: past the 16-bit pair sums that CPUs without VNNI use for int8 products unless told
    # otherwise (there the product below came out 1,048,544). The same int8 model must score the same on every CPU.
    import onnxruntime as ort
    from onnx import parser

    from veridic.nli._backend import ort_session_options

    k = 64
    model = parser.parse_model(f"""
        <ir_version: 8, opset_import: ["" : 13]>
        int8product (uint8[n, {k}] a) => (int32[n, 2] y)
        <int8[{k}, 2] b = {{{", ".join(["127"] * 2 * k)}}}>
        {{ y = MatMulInteger(a, b) }}
    """)
    session = ort.InferenceSession(model.SerializeToString(), sess_options=ort_session_options(threads=1),
                                   providers=["CPUExecutionProvider"])
    activations = np.full((3, k), 255, dtype=np.uint8)
    assert session.run(None, {"a": activations})[0].tolist() == [[k * 255 * 127] * 2] * 3


def test_the_backend_uses_those_options(tiny_nli_dir, tmp_path):
    from veridic.nli import export_onnx, load_backend

    export_onnx(model=tiny_nli_dir, out_dir=tmp_path / "x")
    opts = load_backend(tmp_path / "x", kind="onnx", dtype="int8").session.get_session_options()
    assert opts.get_session_config_entry("session.x64quantprecision") == "1"
