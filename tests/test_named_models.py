"""Shipped models are selected by name; a known model missing from this copy is a clear error, not a hub lookup."""

from __future__ import annotations

import pytest

from veridic.errors import ModelLoadError
from veridic.nli._models import EMBEDDED_MODEL_NAME, EMBEDDED_MODELS, embedded_model_path, resolve_model_path


def test_the_default_resolves_by_none_embedded_and_its_name():
    if not (embedded_model_path() / "config.json").exists():
        pytest.skip("the embedded model is not in this checkout")
    assert resolve_model_path(None) == resolve_model_path("embedded") == resolve_model_path(EMBEDDED_MODEL_NAME)
    assert resolve_model_path(None)[1] == "embedded"


def test_a_named_model_absent_from_this_copy_says_what_it_is_and_what_to_do(monkeypatch, tmp_path):
    import veridic.nli._models as models

    monkeypatch.setattr(models, "embedded_model_path", lambda name=EMBEDDED_MODEL_NAME: tmp_path / name)
    with pytest.raises(ModelLoadError, match="'veridic-nli-mpnet-base' .*accurate tier.* is not in this copy of veridic.*use the default"):
        resolve_model_path("veridic-nli-mpnet-base")
    assert "veridic-nli-mpnet-base" in EMBEDDED_MODELS


def test_a_shipped_model_is_named_by_its_folder(monkeypatch, tmp_path):
    import veridic.nli._models as models

    (tmp_path / "veridic-nli-mpnet-base").mkdir()
    (tmp_path / "veridic-nli-mpnet-base" / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(models, "embedded_model_path", lambda name=EMBEDDED_MODEL_NAME: tmp_path / name)
    path, kind = resolve_model_path("veridic-nli-mpnet-base")
    assert (path.name, kind) == ("veridic-nli-mpnet-base", "embedded")


def test_a_retired_model_names_its_successor_and_the_commit_that_holds_its_files(monkeypatch, tmp_path):
    import veridic.nli._models as models

    # Even where a copy of its folder lies where shipped models are looked for, the name gives the way forward: it is
    # no longer a name this package ships.
    (tmp_path / "veridic-nli-mpnet-l6").mkdir()
    (tmp_path / "veridic-nli-mpnet-l6" / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(models, "embedded_model_path", lambda name=EMBEDDED_MODEL_NAME: tmp_path / name)
    with pytest.raises(ModelLoadError) as err:
        resolve_model_path("veridic-nli-mpnet-l6")
    message = str(err.value)
    assert "'veridic-nli-mpnet-l6' was retired" in message
    assert "successor is 'veridic-nli-mpnet-base'" in message and "--model veridic-nli-mpnet-base" in message
    assert "git checkout 6edb1d2 -- veridic/models/veridic-nli-mpnet-l6" in message
    assert "veridic-nli-mpnet-l6" not in EMBEDDED_MODELS and models.RETIRED_MODELS["veridic-nli-mpnet-l6"][0] in EMBEDDED_MODELS


def test_the_commercial_model_is_named_and_its_absence_names_its_config(monkeypatch, tmp_path):
    import veridic.nli._models as models

    monkeypatch.setattr(models, "embedded_model_path", lambda name=EMBEDDED_MODEL_NAME: tmp_path / name)
    with pytest.raises(ModelLoadError, match="'veridic-nli-minilm-commercial' .*commercial use.*nli-minilm-commercial.yaml.* is not in this copy"):
        resolve_model_path("veridic-nli-minilm-commercial")


def test_a_mistyped_embedded_name_is_named_as_such_not_sent_to_a_hub():
    with pytest.raises(ModelLoadError, match="'veridic-nli-minilm-commerc' is not a model shipped with veridic.*Did you mean 'veridic-nli-minilm-commercial'"):
        resolve_model_path("veridic-nli-minilm-commerc")
    # a hub id keeps its owner and still resolves as one (loaded, or refused offline, later)
    assert resolve_model_path("someone/veridic-nli-like") == ("someone/veridic-nli-like", "hub")
    assert resolve_model_path("roberta-large-mnli") == ("roberta-large-mnli", "hub")
