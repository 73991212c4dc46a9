"""The scorer registry, the lexical baseline and external score files."""

from __future__ import annotations

import math
import sys

import pytest

from veridic import ScorerConfig, build_scorer
from veridic.bench._scorers import get_scorer_spec, load_external_scores, scorer_names
from veridic.errors import ConfigError, DataFormatError, InputError, RegistryError
from veridic.overlap import OverlapScorer


def test_registry_lists_model_and_model_free_scorers():
    names = scorer_names()
    for n in ("e", "e-c", "e-c+mc", "e-c-doc", "overlap", "overlap-bigram"):
        assert n in names
    assert get_scorer_spec("e-c").needs_backend and not get_scorer_spec("overlap").needs_backend


def test_unknown_scorer_suggests_a_name():
    with pytest.raises(RegistryError, match=r"Unknown scorer 'overlp'.*Did you mean 'overlap'"):
        get_scorer_spec("overlp")


def test_model_scorer_without_backend_is_refused():
    with pytest.raises(ConfigError, match="needs a model backend"):
        build_scorer("e-c")


def test_overlap_unigram_uses_content_words_only():
    s = OverlapScorer(ScorerConfig(method="overlap"))
    v = s.score(sources=["The cat sat on the mat in Paris."], claims=["The cat sat in Rome."])[0]
    # content words of the claim: cat, sat, rome -> 2 of 3 found
    assert v.score == pytest.approx(2 / 3)
    assert math.isnan(v.e) and v.uncertainty is None
    assert s.describe()["parameters"] == 0 and s.describe()["model_calls_per_example"] == 0


def test_overlap_is_case_insensitive_and_handles_stopword_only_claims():
    s = OverlapScorer(ScorerConfig(method="overlap"))
    assert s.score(sources=["PARIS is big"], claims=["paris"])[0].score == 1.0
    # Only stop words: fall back to all tokens rather than scoring an empty set.
    assert s.score(sources=["it is"], claims=["it is not"])[0].score == pytest.approx(2 / 3)
    assert s.score(sources=["x"], claims=["?!"])[0].score == 1.0


def test_overlap_bigram():
    s = build_scorer("overlap-bigram")
    assert s.name == "overlap-bigram"
    assert s.score(sources=["the red fox jumps"], claims=["red fox sleeps"])[0].score == pytest.approx(1 / 2)


def test_external_scores_single_and_named_columns(tmp_path):
    p = tmp_path / "published.csv"
    p.write_text("id,score\na,0.5\nb,-1\n", encoding="utf-8")
    (ext,) = load_external_scores(path=p)
    assert ext.name == "published" and ext.lookup(ids=["b", "a"], dataset="d") == [-1.0, 0.5]
    q = tmp_path / "many.jsonl"
    q.write_text('{"id": "a", "t5": 0.9, "q2": 0.1}\n{"id": "b", "t5": 0.2, "q2": 0.3}\n', encoding="utf-8")
    names = [e.name for e in load_external_scores(path=q)]
    assert names == ["t5", "q2"]


def test_external_scores_missing_id_is_a_clear_error(tmp_path):
    p = tmp_path / "s.csv"
    p.write_text("id,score\na,0.5\n", encoding="utf-8")
    (ext,) = load_external_scores(path=p)
    with pytest.raises(InputError, match=r"has no score for 2 of the 3 rows of dataset 'toy': ids 'b', 'c'"):
        ext.lookup(ids=["a", "b", "c"], dataset="toy")


@pytest.mark.parametrize("body,msg", [
    ("id,score\na,high\n", "row 1: column 'score' must hold numbers"),
    ("id,score\na,nan\n", "row 1: column 'score' is 'nan'"),
    ("id,score\na,1\na,2\n", "row 2: id 'a' appears twice"),
    ("key,score\na,1\n", "needs an 'id' column"),
])
def test_external_scores_bad_rows(tmp_path, body, msg):
    p = tmp_path / "s.csv"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(DataFormatError, match=msg):
        load_external_scores(path=p)


def test_nli_factory_builds_a_real_scorer_around_a_backend(tiny_backend):
    s = build_scorer("e-c-doc", backend=tiny_backend)
    d = s.describe()
    assert s.name == "e-c-doc" and d["method"] == "e-c" and d["granularity"] == "document"
    v = s.score(sources=["The cat sat on the mat."], claims=["The cat sat."])
    assert len(v) == 1 and -1.0 <= v[0].score <= 1.0


def _install_plugin(tmp_path, monkeypatch, entry_points: str, module: str) -> None:
    """A fake installed distribution: a module plus a dist-info folder whose entry points importlib.metadata reads."""
    (tmp_path / "veridic_demo_plugin.py").write_text(module, encoding="utf-8")
    info = tmp_path / "veridic_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: veridic-demo-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[veridic.scorers]\n" + entry_points, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "veridic_demo_plugin", raising=False)


PLUGIN = '''
from veridic.config import ScorerConfig
from veridic.overlap import OverlapScorer


def bigram(backend):
    """Bigram overlap, registered again by a plugin."""
    return OverlapScorer(ScorerConfig(method="overlap-bigram"))


bigram.needs_backend = False
'''


def test_a_scorer_plugin_is_found_by_entry_point_and_imported_on_demand(tmp_path, monkeypatch):
    from veridic import registry as reg

    _install_plugin(tmp_path, monkeypatch, "demo-bigram = veridic_demo_plugin:bigram\n", PLUGIN)
    monkeypatch.setattr(reg.SCORERS, "_entries", dict(reg.SCORERS._entries))
    assert "demo-bigram" in scorer_names()
    assert "veridic_demo_plugin" not in sys.modules  # listing names imports nothing
    spec = get_scorer_spec("demo-bigram")
    assert spec.needs_backend is False and spec.summary.startswith("Bigram overlap")
    s = build_scorer("demo-bigram")
    assert s.name == "demo-bigram"
    assert s.score(sources=["the red fox jumps"], claims=["red fox sleeps"])[0].score == pytest.approx(1 / 2)


def test_a_plugin_cannot_shadow_a_builtin_and_a_broken_one_says_why(tmp_path, monkeypatch):
    from veridic import registry as reg

    _install_plugin(tmp_path, monkeypatch, "overlap = veridic_demo_plugin:bigram\nbroken = veridic_demo_plugin:missing\n", PLUGIN)
    monkeypatch.setattr(reg.SCORERS, "_entries", dict(reg.SCORERS._entries))
    with pytest.warns(UserWarning, match="'overlap', which is already taken"):
        assert "overlap" in scorer_names()
    assert get_scorer_spec("overlap").factory is reg.SCORERS._entries["overlap"].factory
    with pytest.warns(UserWarning), pytest.raises(RegistryError, match="broken.*failed to import: AttributeError"):
        get_scorer_spec("broken")
    with pytest.warns(UserWarning), pytest.raises(RegistryError, match="Unknown scorer 'brokn'.*Did you mean 'broken'"):
        get_scorer_spec("brokn")
