"""One way to build a scorer: equal configurations give equal scorers through every entry point.

The entry points — ``build_scorer``, ``load_scorer``, ``veridic.score``, the service's loader, AutoAIS and
the framework integrations — all end in :func:`veridic.factory.build_scorer`; a configuration drawn at random
must give the same scorer class, the same description and the same scores through each.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import veridic
from veridic import ScorerConfig, build_scorer, load_scorer
from veridic.errors import ConfigError
from veridic.nli import load_backend

SOURCES = ["Google acquired YouTube in 2006. The deal cost 1.65 billion dollars. It closed in November.",
           "The museum opened in 1990 and is in Oslo."]
CLAIMS = ["YouTube acquired Google in 2006. The deal closed in November.", "The museum is in Oslo."]


@st.composite
def configs(draw) -> ScorerConfig:
    method = draw(st.sampled_from(["e", "e-c", "hybrid", "overlap", "overlap-bigram"]))
    if method.startswith("overlap"):
        return ScorerConfig(method=method)
    options = {
        "method": method,
        "granularity": "sentence" if method == "hybrid" else draw(st.sampled_from(["sentence", "document"])),
        "claim_aggregation": draw(st.sampled_from(["mean", "min", "softmin"])),
        "max_windows": draw(st.sampled_from([None, 1, 4])),
        "window_sentences": draw(st.integers(1, 3)),
        "structure_check": draw(st.booleans()),
        "verbatim_support": draw(st.booleans()),
        "mc_samples": draw(st.sampled_from([0, 0, 3])),
        "seed": draw(st.integers(0, 3)),
    }
    try:
        return ScorerConfig(**options)
    except ConfigError:
        assume(False)
        raise


def _fingerprint(scorer, verdicts):
    d = scorer.describe()
    return (type(scorer).__name__, scorer.config, scorer.name, scorer.threshold, scorer.sentence_threshold, scorer.granularity,
            d.get("structure_check"), d.get("method"), [round(v.score, 9) for v in verdicts], [v.label for v in verdicts])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cfg=configs())
def test_equal_configs_give_equal_scorers_through_every_entry_point(cfg):
    from veridic.ais._auto import AutoAIS
    from veridic.integrations._core import Judge
    from veridic.service import load_service_scorer

    dummy = load_backend(kind="dummy")
    direct = build_scorer(cfg, backend=dummy)
    ref = _fingerprint(direct, direct.score(sources=SOURCES, claims=CLAIMS))
    again = build_scorer(ScorerConfig.from_options(cfg.to_dict()), backend=load_backend(kind="dummy"))
    built = [
        again,
        load_scorer(cfg, backend="dummy"),
        load_service_scorer(cfg, backend="dummy", max_mc_samples=cfg.mc_samples),
        AutoAIS(backend=dummy, config=cfg).scorer,
        Judge(config=cfg, backend="dummy").scorer,
    ]
    for s in built:
        assert _fingerprint(s, s.score(sources=SOURCES, claims=CLAIMS)) == ref
    via_api = veridic.score(sources=SOURCES, claims=CLAIMS, config=cfg, backend="dummy")
    assert [round(v.score, 9) for v in via_api] == ref[-2]


def test_the_structure_check_follows_the_config_not_the_way_the_scorer_was_built():
    dummy = load_backend(kind="dummy")
    on = build_scorer(ScorerConfig(method="e-c"), backend=dummy)
    off = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=dummy)
    assert on.describe()["structure_check"] is not None and off.describe()["structure_check"] is None
    # The swapped claim is a contradiction only where the config asks for the check.
    v_on, v_off = (s.score(sources=SOURCES[:1], claims=["YouTube acquired Google in 2006."])[0] for s in (on, off))
    assert v_on.sentences[0].conflict is not None and v_on.score < v_off.score


def test_one_function_builds_scorers():
    import veridic.bench
    import veridic.factory
    import veridic.registry
    import veridic.service

    assert veridic.build_scorer is veridic.factory.build_scorer
    for module in (veridic.registry, veridic.service, veridic.bench, veridic.api):
        assert getattr(module, "build_scorer", veridic.build_scorer) is veridic.build_scorer


def test_an_unknown_method_is_an_error_never_a_silent_default():
    with pytest.raises(veridic.RegistryError, match="Unknown scorer 'e_n'"):
        ScorerConfig(method="e_n")
