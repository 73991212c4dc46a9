"""Training-data licences: every configured set has one, and a commercial model refuses restricted inputs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from veridic.errors import ConfigError
from veridic.train._licences import LICENCES, SOURCE_LICENCES, commercial_problems, licence_rows
from veridic.train._loop import config_from_dict, config_hash, load_config

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted(REPO.glob("configs/**/*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_configured_set_has_a_recorded_licence(path):
    cfg = load_config(path)
    missing = [n for n in cfg.data.sets if n not in LICENCES]
    assert not missing, f"{path.name}: add these sets to veridic.train._licences.LICENCES: {missing}"


def test_every_manifest_set_is_in_the_table():
    from veridic.synth._corpus import DEFAULT_SOURCES

    assert set(DEFAULT_SOURCES) <= set(SOURCE_LICENCES)
    assert all(lic.commercial in {"yes", "no", "unknown"} for lic in LICENCES.values())


def test_the_commercial_config_trains_only_on_cleared_inputs():
    cfg = load_config(REPO / "configs" / "nli-minilm-commercial.yaml")
    assert cfg.commercial
    trained = [n for n, s in cfg.data.sets.items() if s.weight > 0]
    assert trained and all(LICENCES[n].commercial == "yes" for n in trained)
    assert not cfg.contrast.extra_corpora
    assert all(SOURCE_LICENCES[s].commercial == "yes" for s in cfg.contrast.sources)
    # Evaluation-only rows may be restricted: they are never trained on.
    assert any(LICENCES[n].commercial != "yes" for n, s in cfg.data.sets.items() if s.weight == 0)


def test_commercial_refuses_a_non_commercial_set_naming_it():
    raw = yaml.safe_load((REPO / "configs" / "nli-minilm-commercial.yaml").read_text())
    raw["data"]["sets"]["anli"]["weight"] = 0.5
    with pytest.raises(ConfigError, match=r"anli: CC BY-NC 4\.0"):
        config_from_dict(raw)
    raw["data"]["sets"]["anli"]["weight"] = 0.0
    raw["data"]["sets"]["semiauto_nli"]["exclude"] = {}
    with pytest.raises(ConfigError, match="LDC Gigaword"):
        config_from_dict(raw)


def test_commercial_refuses_default_contrast_sources_and_extra_corpora():
    problems = commercial_problems(sets=["snli"], contrast_sources=["pomo_valid", "mnli"], extra_corpora=["f.jsonl.gz"])
    assert [p.split(":")[0] for p in problems] == ["contrast.sources.pomo_valid", "contrast.extra_corpora.f.jsonl.gz"]


def test_the_flag_leaves_earlier_config_hashes_alone():
    # The shipped default's card records this hash; adding the option must not change it.
    assert config_hash(load_config(REPO / "configs" / "nli-minilm-v5.yaml")) == "d5287e6bdd9ada8d"


def test_licence_rows_for_a_card():
    cfg = load_config(REPO / "configs" / "nli-minilm-commercial.yaml")
    rows = licence_rows({"config": cfg.to_dict()})
    names = [r["input"] for r in rows]
    assert names[0] == "backbone all-minilm-l6-v2"
    assert "NLI set snli" in names and "NLI set anli" not in names  # weight 0: not a training input
    assert "contrast corpus text semiauto_wiki" in names and "contrast corpus text pomo_valid" not in names
    assert {r["commercial"] for r in rows} == {"yes"}


def test_a_distilled_model_carries_its_teacher_and_cannot_be_commercial():
    raw = yaml.safe_load((REPO / "configs" / "nli-minilm-commercial.yaml").read_text())
    raw["distill"] = {"enabled": True, "teacher": "teachers/some-model"}
    with pytest.raises(ConfigError, match=r"distill\.teacher: teachers/some-model"):
        config_from_dict(raw)
    raw["commercial"] = False
    rows = licence_rows({"config": config_from_dict(raw).to_dict()})
    teacher = [r for r in rows if r["input"].startswith("distillation teacher")]
    assert teacher == [{"input": "distillation teacher teachers/some-model", "licence": "its training inputs' (list its configs too)",
                        "commercial": "inherits", "note": ""}]
