"""scripts/ship_model.py with weights that came back packed from a lent GPU: shipped as they are, never quantised twice."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"})


def _tiny_run(tmp_path: Path) -> Path:
    """A run folder whose final/ export is a tiny random BERT classifier with its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    run = tmp_path / "run"
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32, num_labels=3)
    BertForSequenceClassification(cfg).save_pretrained(run / "final")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *[f"w{i}" for i in range(35)]]) + "\n")
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(run / "final")
    return run


def test_a_packed_run_ships_its_own_shards(tmp_path):
    from transformers import BertForSequenceClassification

    from veridic.nli.packed import read_packed

    run = _tiny_run(tmp_path)
    (run / "training_summary.json").write_text(json.dumps({"config_hash": "abc123", "steps": 3}))
    out, back = tmp_path / "out", tmp_path / "back"
    assert _run("scripts/frozen_split.py", "pack-int8", "--run", str(run), "--out", str(out)).returncode == 0
    done = _run("scripts/frozen_split.py", "unpack-int8", "--src", *map(str, out.glob("return-*")), "--run", str(back))
    assert done.returncode == 0, done.stderr
    dest = tmp_path / "dest"
    refused = _run("scripts/ship_model.py", "--run", str(back), "--name", "veridic-nli-mpnet-base", "--dest", str(dest))
    assert refused.returncode != 0 and "ship them with --packed" in refused.stderr
    shipped = _run("scripts/ship_model.py", "--run", str(back), "--name", "veridic-nli-mpnet-base", "--dest", str(dest), "--packed")
    assert shipped.returncode == 0, shipped.stderr[-2000:]
    shards = sorted(p.name for p in dest.glob("packed-*.safetensors"))
    assert shards and all((dest / n).read_bytes() == (back / "packed" / n).read_bytes() for n in shards)
    assert not (dest / "model.safetensors").exists() and not (dest / "onnx").exists()
    meta = json.loads((dest / "veridic_model.json").read_text())
    assert meta["config_hash"] == "abc123" and meta["revision"].startswith("sha256:") and "auto_backend" not in meta
    assert json.loads((dest / "tokenizer_config.json").read_text())["model_max_length"] == 256
    again = _run("scripts/ship_model.py", "--run", str(back), "--name", "veridic-nli-mpnet-base", "--dest", str(tmp_path / "d2"),
                 "--packed", "--auto-backend", "torch")
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((tmp_path / "d2" / "veridic_model.json").read_text())["auto_backend"] == "torch"
    original = BertForSequenceClassification.from_pretrained(run / "final").state_dict()
    weights = read_packed(dest)
    w = "classifier.weight"
    assert (weights[w] - original[w]).abs().max() <= original[w].abs().max() / 127  # int8 rows, once


def test_a_damaged_shard_is_refused_before_anything_ships(tmp_path):
    back = tmp_path / "back" / "packed"
    back.mkdir(parents=True)
    (back / "packed-00000.safetensors").write_bytes(b"not the shard")
    (back / "veridic_packed.json").write_text(json.dumps({"format": "veridic-int8-rows-v1",
                                                          "shards": {"packed-00000.safetensors": "0" * 64}}))
    dest = tmp_path / "dest"
    done = _run("scripts/ship_model.py", "--run", str(tmp_path / "back"), "--name", "veridic-nli-mpnet-base", "--dest", str(dest), "--packed")
    assert done.returncode != 0 and "damaged" in done.stderr
    assert not list(dest.glob("packed-*"))


def test_with_onnx_ships_the_int8_copy_of_the_packed_weights(tmp_path):
    pytest.importorskip("onnxruntime")
    run = _tiny_run(tmp_path)
    refused = _run("scripts/ship_model.py", "--run", str(run), "--dest", str(tmp_path / "x"), "--with-onnx")
    assert refused.returncode != 0 and "--with-onnx goes with --packed" in refused.stderr
    dest = tmp_path / "dest"
    done = _run("scripts/ship_model.py", "--run", str(run), "--dest", str(dest), "--packed", "--with-onnx")
    assert done.returncode == 0, done.stderr[-2000:]
    meta = json.loads((dest / "veridic_model.json").read_text())
    assert not (dest / "model.safetensors").exists() and list(dest.glob("packed-*.safetensors"))
    assert sorted(p.name for p in (dest / "onnx").iterdir()) == ["export.json", "model.int8.onnx"]  # the rest is read from dest
    assert json.loads((dest / "onnx" / "export.json").read_text())["weights"] == f"packed:{meta['revision']}"
    assert meta["weights"].endswith("+ onnx/model.int8.onnx")


def test_a_tagger_ships_packed_under_its_name_with_the_shipped_inference_settings(tmp_path):
    run = _tiny_run(tmp_path)
    fitted = {"max_length": 256, "threshold": 0.35, "flag_threshold": 0.55, "config": {"epochs": 1.0}}
    (run / "final" / "tagger.json").write_text(json.dumps(fitted))
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "tagger.json").write_text(json.dumps({"threshold": 0.25, "flag_threshold": 0.6, "piece_sentences": 1,
                                                     "pipeline": {"content_words": True, "fixes_explain": True}, "dtype": "auto"}))
    dest = tmp_path / "veridic-tagger-mpnet-base"
    done = _run("scripts/ship_model.py", "--run", str(run), "--name", "veridic-tagger-mpnet-base", "--dest", str(dest),
                "--settings-from", str(shipped))
    assert done.returncode == 0, done.stderr
    meta = json.loads((dest / "tagger.json").read_text())
    # how it is read comes from the shipped tagger; what training fitted (thresholds) stays its own
    assert meta["piece_sentences"] == 1 and meta["pipeline"] == {"content_words": True, "fixes_explain": True} and meta["dtype"] == "auto"
    assert meta["threshold"] == 0.35 and meta["flag_threshold"] == 0.55
    card = json.loads((dest / "veridic_model.json").read_text())
    assert card["name"] == "veridic-tagger-mpnet-base" and "veridic-nli-mpnet-base" in card["backbone"]
    assert not (dest / "model.safetensors").exists() and list(dest.glob("packed-*.safetensors"))
    refused = _run("scripts/ship_model.py", "--run", str(run), "--name", "veridic-nli-mpnet-base", "--dest", str(tmp_path / "x"),
                   "--settings-from", str(shipped))
    assert refused.returncode != 0 and "--settings-from goes with a tagger" in refused.stderr
