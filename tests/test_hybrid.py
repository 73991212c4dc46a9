import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scorer import SRC, WordBackend

from veridic import ScorerConfig, build_scorer
from veridic.errors import ConfigError
from veridic.ling.lexical import lexical_features
from veridic.nli._hybrid import ALL_FEATURES, HybridWeights, fit_hybrid


def test_lexical_features_catch_novel_numbers_and_names():
    f = lexical_features(source="Alice paid 30 dollars in Paris on Monday.", claim="Alice paid 40 dollars in Rome.")
    assert f["novel_numbers"] == 1.0
    assert f["novel_names"] == 1.0  # "Rome" (Alice starts the sentence, so it is not counted)
    g = lexical_features(source="Alice paid thirty dollars.", claim="She paid 30 dollars.")
    assert g["novel_numbers"] == 1.0  # "thirty" is not normalised, "two" .. "twelve" are
    h = lexical_features(source="He has two cats.", claim="He has 2 cats.")
    assert h["novel_numbers"] == 0.0
    same = lexical_features(source=SRC, claim=SRC)
    assert same["overlap_unigram"] == same["overlap_bigram"] == 1.0 and same["novel_names"] == 0.0


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=80), st.text(min_size=1, max_size=80))
def test_lexical_features_are_bounded(source, claim):
    for v in lexical_features(source=source, claim=claim).values():
        assert 0.0 <= v <= 1.0


def _weights():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, len(ALL_FEATURES)))
    y = (x[:, 0] + 0.5 * x[:, 4] > 0).astype(int)
    return fit_hybrid(features=x, labels=y, names=ALL_FEATURES), x, y


def test_fit_hybrid_learns_a_separable_rule_and_round_trips(tmp_path):
    w, x, y = _weights()
    from sklearn.metrics import roc_auc_score

    assert roc_auc_score(y, w.logit(x)) > 0.97
    w.save(tmp_path / "h.json")
    w2 = HybridWeights.load(tmp_path / "h.json")
    np.testing.assert_allclose(w2.logit(x), w.logit(x))


def test_weights_are_validated():
    with pytest.raises(ConfigError, match="unknown features"):
        HybridWeights(("nope",), (0.0,), (1.0,), (1.0,), 0.0)
    with pytest.raises(ConfigError, match="inconsistent"):
        HybridWeights(("ec_min",), (0.0, 1.0), (1.0,), (1.0,), 0.0)
    with pytest.raises(ConfigError, match="NaN"):
        fit_hybrid(features=np.array([[np.nan]]), labels=np.array([1]), names=["ec_min"])


def test_hybrid_scorer_ranks_an_invented_number_below_a_supported_claim(tmp_path):
    HybridWeights(("ec_min", "novel_numbers"), (0.0, 0.0), (1.0, 1.0), (2.0, -3.0), 0.0).save(tmp_path / "h.json")
    s = build_scorer(ScorerConfig(method="hybrid", hybrid_weights=str(tmp_path / "h.json"), structure_check=False), backend=WordBackend())
    good, bad = s.score(sources=[SRC, SRC], claims=["Bob joined in 2005.", "Bob joined in 2009."])
    assert 0.0 <= bad.score < good.score <= 1.0
    assert good.sentences and good.evidence  # the NLI verdict's details are kept
    assert s.describe()["hybrid_features"] == ["ec_min", "novel_numbers"]


def test_weights_reading_a_second_model_are_refused_by_the_one_model_scorer(tmp_path):
    # fit_hybrid.py --companion can fit such weights for measurement; the scorer has one backend, so it must say
    # so instead of failing on a missing feature at the first row.
    HybridWeights(("ec_mean", "ec_mean@companion"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 0.0).save(tmp_path / "h.json")
    with pytest.raises(ConfigError, match="second model's features"):
        build_scorer(ScorerConfig(method="hybrid", hybrid_weights=str(tmp_path / "h.json"), structure_check=False), backend=WordBackend())
    with pytest.raises(ConfigError, match="unknown features"):
        HybridWeights(("ec_mean@other",), (0.0,), (1.0,), (1.0,), 0.0)


def test_hybrid_without_weights_says_how_to_get_them(tmp_path):
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")  # a model folder with no hybrid.json beside it

    class NoWeights(WordBackend):
        default_hybrid_weights = None
        model_id = str(tmp_path)

    with pytest.raises(ConfigError, match="fit_hybrid"):
        build_scorer(ScorerConfig(method="hybrid", structure_check=False), backend=NoWeights())


def test_hybrid_weights_found_beside_the_model_from_cli_and_api(tiny_nli_dir, tmp_path):
    import json
    import shutil

    from typer.testing import CliRunner

    import veridic
    from veridic.cli import app

    model = tmp_path / "m"
    shutil.copytree(tiny_nli_dir, model)
    w, _, _ = _weights()
    w.save(model / "hybrid.json")
    r = CliRunner().invoke(app, ["score", "--model", str(model), "--method", "hybrid", "--source", "Bob joined in 2005.", "--claim", "Bob joined in 2009.", "--json"])
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    assert 0.0 <= v["score"] <= 1.0 and v["method"] == "hybrid"
    api = veridic.score(sources=["Bob joined in 2005."], claims=["Bob joined in 2009."], model=model, method="hybrid")[0]
    assert api.score == v["score"]


def test_nli_features_read_the_chosen_windows_entailment_and_contradiction():
    from veridic.nli._hybrid import NLI_FEATURES, features_from_verdict

    sc = build_scorer(ScorerConfig(method="e-c"), backend=WordBackend())
    claim = "Alice went to Paris. Bob went to the moon."
    (v,) = sc.score(sources=[SRC], claims=[claim])
    f = features_from_verdict(v, source=SRC, claim=claim)
    assert set(NLI_FEATURES) <= set(f)
    e = [s.e for s in v.sentences]
    assert len(e) == 2 and f["e_mean"] == pytest.approx(sum(e) / 2) and f["e_min"] == pytest.approx(min(e))
    assert f["ec_mean"] == pytest.approx(sum(s.e - s.c for s in v.sentences) / 2)
    # entailment alone never reads below entailment minus contradiction
    assert f["e_mean"] >= f["ec_mean"]
