"""Weight averaging of fine-tunes of one architecture (benchmarks/interpolate_weights.py)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from conftest import REPO, make_tiny_nli

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")


@pytest.fixture()
def interp(monkeypatch):
    spec = importlib.util.spec_from_file_location("interpolate_weights", REPO / "benchmarks" / "interpolate_weights.py")
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "interpolate_weights", mod)
    spec.loader.exec_module(mod)
    return mod


def test_average_is_weighted_mean_and_keeps_integer_buffers(interp):
    a = {"w": torch.tensor([0.0, 3.0]), "ids": torch.tensor([0, 1])}
    b = {"w": torch.tensor([3.0, 0.0]), "ids": torch.tensor([5, 6])}
    c = {"w": torch.tensor([6.0, 6.0]), "ids": torch.tensor([7, 8])}
    out = interp.average([a, b, c], [1, 1, 1])
    assert torch.allclose(out["w"], torch.tensor([3.0, 3.0]))
    assert out["ids"].tolist() == [0, 1]  # a buffer, taken from the first checkpoint
    out = interp.average([a, b], [3, 1])  # normalised: 0.75 * a + 0.25 * b
    assert torch.allclose(out["w"], torch.tensor([0.75, 2.25]))


def test_average_refuses_mismatched_checkpoints(interp):
    a = {"w": torch.zeros(2)}
    with pytest.raises(ValueError, match="differing names"):
        interp.average([a, {"v": torch.zeros(2)}], [1, 1])
    with pytest.raises(ValueError, match=r"shapes \(w: \(3,\) against \(2,\)\)"):
        interp.average([a, {"w": torch.zeros(3)}], [1, 1])
    with pytest.raises(ValueError, match="non-negative"):
        interp.average([a, a], [1, -1])
    with pytest.raises(ValueError, match="two or more"):
        interp.average([a], [1])


def test_cli_soup_of_saved_and_packed_models(interp, tmp_path):
    from safetensors.torch import load_file

    from veridic.nli.packed import read_packed, write_packed

    m1 = make_tiny_nli(tmp_path / "m1", seed=1)
    m2 = make_tiny_nli(tmp_path / "m2", seed=2)
    m3 = make_tiny_nli(tmp_path / "m3", seed=3)
    packed = tmp_path / "m1-packed"
    write_packed(model_dir=m1, out_dir=packed)
    out = tmp_path / "soup" / "final"
    assert interp.main(["--models", str(packed), str(m2), str(m3), "--out", str(out)]) == 0

    got = load_file(str(out / "model.safetensors"))
    parts = [read_packed(packed), load_file(str(m2 / "model.safetensors")), load_file(str(m3 / "model.safetensors"))]
    key = "bert.encoder.layer.0.attention.self.query.weight"
    assert torch.allclose(got[key], sum(p[key] for p in parts) / 3, atol=1e-6)
    assert not torch.allclose(got[key], parts[1][key])  # really an average, not a copy
    record = json.loads((out / "soup.json").read_text())
    assert record["weights"] == pytest.approx([1 / 3] * 3) and record["models"][0] == str(packed)
    assert (out / "config.json").exists() and (out / "vocab.txt").exists()
    assert not list(out.glob("packed-*")) and not (out / "veridic_packed.json").exists()

    # the two-model form is the same computation
    out2 = tmp_path / "ab"
    assert interp.main(["--a", str(m2), "--b", str(m3), "--alpha", "0.25", "--out", str(out2)]) == 0
    ab = load_file(str(out2 / "model.safetensors"))
    assert torch.allclose(ab[key], 0.75 * parts[1][key] + 0.25 * parts[2][key], atol=1e-6)


def test_cli_errors(interp, tmp_path, capsys):
    m1 = make_tiny_nli(tmp_path / "m1", seed=1)
    with pytest.raises(SystemExit):
        interp.main(["--models", str(m1), str(tmp_path / "absent"), "--out", str(tmp_path / "o")])
    assert "not a model folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        interp.main(["--models", str(m1), str(m1), "--a", str(m1), "--out", str(tmp_path / "o")])
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text("{}")
    with pytest.raises(SystemExit, match="found neither"):
        interp.main(["--models", str(m1), str(other), "--out", str(tmp_path / "o")])
    assert not (tmp_path / "o").exists()


def test_cli_refuses_a_missing_tagger_config_before_averaging(interp, tmp_path, capsys):
    m1, m2 = make_tiny_nli(tmp_path / "m1", seed=1), make_tiny_nli(tmp_path / "m2", seed=2)
    out = tmp_path / "soup" / "final"
    with pytest.raises(SystemExit):
        interp.main(["--models", str(m1), str(m2), "--out", str(out), "--tagger-config-from", str(tmp_path / "none.json")])
    assert "no tagger.json" in capsys.readouterr().err and not out.exists()  # refused before any work
