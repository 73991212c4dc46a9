"""Distillation: teacher logits cached and resumable, the mixed loss, and a resumable distilled run."""

from __future__ import annotations

import json
import time

import pytest

torch = pytest.importorskip("torch")

from test_train import _toy_config, _toy_data, _weights  # noqa: E402

from veridic.errors import ConfigError  # noqa: E402
from veridic.train._data import Example  # noqa: E402
from veridic.train._distill import distill_loss, teacher_logits  # noqa: E402
from veridic.train._loop import Trainer, config_from_dict, config_hash, nli_loss  # noqa: E402


def test_loss_with_alpha_zero_is_the_gold_loss():
    logits = torch.tensor([[1.0, 0.2, -0.5], [0.1, 0.3, 2.0]])
    labels = torch.tensor([0, 3])
    teacher = torch.tensor([[-3.0, 0.0, 3.0], [3.0, 0.0, 0.0]])
    assert torch.allclose(distill_loss(logits, labels, teacher, temperature=2.0, alpha=0.0), nli_loss(logits, labels))


def test_soft_part_is_zero_for_the_teacher_itself_and_positive_otherwise():
    t = torch.tensor([[2.0, 0.5, -1.0], [0.0, 0.0, 1.0]])
    labels = torch.tensor([0, 2])
    assert float(distill_loss(t, labels, t, temperature=3.0, alpha=1.0)) == pytest.approx(0.0, abs=1e-6)
    other = torch.tensor([[-1.0, 0.5, 2.0], [1.0, 0.0, 0.0]])
    assert float(distill_loss(other, labels, t, temperature=3.0, alpha=1.0)) > 0.1


def test_teacher_logits_resume_after_a_deadline_and_match(tmp_path, tiny_nli_dir, monkeypatch):
    import veridic.train._distill as distill

    monkeypatch.setattr(distill, "_CHUNK", 4)
    exs = [Example(f"premise {i} is here .", f"hypothesis {i % 3}", i % 3, "toy") for i in range(10)]
    full = teacher_logits(examples=exs, teacher=tiny_nli_dir, cache_dir=tmp_path / "a", max_length=32, progress=False)
    assert full.shape == (10, 3)
    # A deadline in the past labels nothing; the next call labels everything, identically.
    assert teacher_logits(examples=exs, teacher=tiny_nli_dir, cache_dir=tmp_path / "b", max_length=32,
                          deadline=time.monotonic() - 1, progress=False) is None
    assert json.loads((tmp_path / "b" / "teacher_logits.json").read_text())["done"] == 0
    again = teacher_logits(examples=exs, teacher=tiny_nli_dir, cache_dir=tmp_path / "b", max_length=32, progress=False)
    assert (again == full).all()
    with pytest.raises(ConfigError, match="other pairs or another teacher"):
        teacher_logits(examples=exs[:5], teacher=tiny_nli_dir, cache_dir=tmp_path / "b", max_length=32, progress=False)


def test_a_packed_teacher_labels_as_its_full_precision_weights_do(tmp_path, tiny_nli_dir):
    """A shipped base-size model is packed (int8 rows): it teaches as its dequantised weights, within the rounding."""
    from veridic.nli.packed import is_packed, write_packed

    packed = tmp_path / "packed"
    write_packed(model_dir=tiny_nli_dir, out_dir=packed)
    assert is_packed(packed) and not (packed / "model.safetensors").exists()
    exs = [Example(f"A man walks {i} dogs in the park .", f"A man walks {i % 4} dogs .", i % 3, "toy") for i in range(12)]
    full = teacher_logits(examples=exs, teacher=tiny_nli_dir, cache_dir=tmp_path / "a", max_length=32, progress=False)
    got = teacher_logits(examples=exs, teacher=packed, cache_dir=tmp_path / "b", max_length=32, progress=False)
    assert got.shape == full.shape and not (got == full).all()  # read from the int8 shards, not from fp32 weights
    assert abs(got - full).max() < 0.05 * (abs(full).max() + 1.0)


def _distill_config(model_dir, teacher):
    raw = _toy_config(model_dir)
    raw["distill"] = {"enabled": True, "teacher": str(teacher), "temperature": 2.0, "alpha": 0.7, "max_length": 64}
    return config_from_dict(raw)


def test_a_distilled_run_cut_in_two_gives_the_same_weights(tmp_path, tiny_nli_dir):
    data_dir = _toy_data(tmp_path / "data")
    cfg = _distill_config(tiny_nli_dir, tiny_nli_dir)
    assert config_hash(cfg) != config_hash(config_from_dict(_toy_config(tiny_nli_dir)))
    final_a = Trainer(config=cfg, output_dir=tmp_path / "a", data_dir=data_dir).train()
    assert (tmp_path / "a" / "teacher_logits.npy").exists()
    Trainer(config=cfg, output_dir=tmp_path / "b", data_dir=data_dir).train(stop_after_steps=2)
    final_b = Trainer(config=cfg, output_dir=tmp_path / "b", data_dir=data_dir).train()
    wa, wb = _weights(final_a), _weights(final_b)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    # The teacher changes what is learnt.
    plain = Trainer(config=config_from_dict(_toy_config(tiny_nli_dir)), output_dir=tmp_path / "c", data_dir=data_dir).train()
    wc = _weights(plain)
    assert any(not torch.equal(wa[k], wc[k]) for k in wa)


def test_distill_config_is_checked():
    with pytest.raises(ConfigError, match="distill.teacher"):
        config_from_dict({"distill": {"enabled": True}})
    with pytest.raises(ConfigError, match="alpha"):
        config_from_dict({"distill": {"enabled": True, "teacher": "x", "alpha": 1.5}})
