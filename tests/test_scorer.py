import numpy as np
import pytest
from fakes import FakeNLIBackend as WordBackend

from veridic import ScorerConfig, build_scorer
from veridic.errors import ConfigError, InputError, RegistryError

# These tests exercise the model path, so verbatim support (a claim sentence copied from the source is entailed
# without asking the model) is off; tests/test_structure_check.py covers it.
SRC = "Alice founded Acme in 2001. Acme makes rockets. Bob joined in 2005. The firm is in Ohio."


def test_sentence_level_min_and_mean_pooling():
    b = WordBackend()
    claim = "Acme makes rockets. Bob founded Zeta."
    # whole_source=True: the whole source is one more window, so "Bob" and "founded" are found together.
    v_min = build_scorer(ScorerConfig(method="e", verbatim_support=False, claim_aggregation="min", whole_source=True, structure_check=False), backend=b).score(sources=[SRC], claims=[claim])[0]
    v_mean = build_scorer(ScorerConfig(method="e", verbatim_support=False, claim_aggregation="mean", whole_source=True, structure_check=False), backend=b).score(sources=[SRC], claims=[claim])[0]
    s1, s2 = [s.score for s in v_min.sentences]
    assert s1 == pytest.approx(0.9)  # all three words found in one window
    assert s2 == pytest.approx(0.9 * 2 / 3)  # "zeta" is nowhere
    # The default leaves the whole-source pair out: no two-sentence window holds both "Bob" and "founded".
    v_default = build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False), backend=b).score(sources=[SRC], claims=[claim])[0]
    assert v_default.sentences[1].score == pytest.approx(0.9 / 3)
    assert len(b.calls[-1][0]) == 3 + 3  # 3 two-sentence windows per claim sentence, none of the whole source
    assert v_min.score == pytest.approx(min(s1, s2))
    assert v_mean.score == pytest.approx((s1 + s2) / 2)
    softmin = build_scorer(ScorerConfig(method="e", verbatim_support=False, claim_aggregation="softmin", whole_source=True, structure_check=False), backend=b).score(sources=[SRC], claims=[claim])[0]
    assert min(s1, s2) <= softmin.score <= (s1 + s2) / 2


def test_evidence_offsets_point_into_the_source():
    b = WordBackend()
    v = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=b).score(sources=[SRC], claims=["Bob joined in 2005."])[0]
    ev = v.sentences[0].evidence
    assert SRC[ev.start : ev.end] == ev.text
    assert "Bob joined in 2005." in ev.text
    claim_span = v.sentences[0].span
    assert claim_span.start == 0 and claim_span.end == len("Bob joined in 2005.")


def test_e_minus_c_uses_contradiction():
    b = WordBackend()
    e = build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False), backend=b).score(sources=[SRC], claims=["Bob never joined."])[0]
    ec = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=b).score(sources=[SRC], claims=["Bob never joined."])[0]
    assert ec.score == pytest.approx(e.e - e.c)
    assert ec.c > 0


def test_document_granularity_scores_the_whole_claim_against_chunks():
    b = WordBackend()
    long_src = " ".join(f"Sentence number {i} talks about topic {i}." for i in range(40))
    v = build_scorer(ScorerConfig(method="e", verbatim_support=False, granularity="document", structure_check=False), backend=b).score(sources=[long_src], claims=["topic 33 talks"])[0]
    premises, hyps, _ = b.calls[0]
    assert len(premises) > 1 and all(h == "topic 33 talks" for h in hyps)
    assert all(b.count_tokens(p) + b.count_tokens(h) <= b.max_length for p, h in zip(premises, hyps))
    assert v.score == pytest.approx(0.9)
    assert "topic 33" in v.evidence[0].text


def test_max_windows_prefilter_keeps_the_relevant_window():
    b = WordBackend()
    src = " ".join(f"Filler sentence {i} here." for i in range(30)) + " Zorro rode a horse."
    v = build_scorer(ScorerConfig(method="e", verbatim_support=False, max_windows=3, structure_check=False), backend=b).score(sources=[src], claims=["Zorro rode a horse."])[0]
    assert len(b.calls[0][0]) == 3
    assert v.score == pytest.approx(0.9)


def test_windows_of_several_lengths_are_the_union_of_each_lengths_windows():
    src = " ".join(f"Filler sentence {i} here." for i in range(12)) + " Zorro rode a horse. It was black."
    claim = "Zorro rode a black horse."

    def pairs(lengths):
        b = WordBackend()
        v = build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False, max_windows=2, window_sentences=lengths),
                         backend=b).score(sources=[src], claims=[claim])[0]
        return b.calls[0][0], v

    one, v1 = pairs(1)
    two, v2 = pairs(2)
    both, v12 = pairs([2, 1])
    # Each length keeps its own max_windows: the pool is exactly the two readings' windows, shorter windows first.
    assert both == list(dict.fromkeys(one + two)) and len(both) == 4
    # The best window of either length decides: "black" and "horse" meet only in the two-sentence window.
    assert v12.score == pytest.approx(max(v1.score, v2.score)) and v12.score > v1.score
    assert v12.evidence[0].text == "Zorro rode a horse. It was black."
    d = build_scorer(ScorerConfig(method="e", window_sentences=[2, 1]), backend=WordBackend()).describe()
    assert d["window_sentences"] == (1, 2) and d["model_calls_per_example"].startswith("S·2·min(W, 4)")


def test_a_short_source_is_judged_once_when_two_window_lengths_cover_it_alike():
    b = WordBackend()
    build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False, window_sentences=[1, 2]), backend=b).score(
        sources=["Acme makes rockets."], claims=["Acme makes rockets."])
    assert b.calls[0][0] == ["Acme makes rockets."]


def test_mc_dropout_reports_mean_and_spread():
    b = WordBackend()
    v = build_scorer(ScorerConfig(method="e", verbatim_support=False, mc_samples=15, structure_check=False), backend=b).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert v.uncertainty is not None and v.uncertainty > 0
    assert v.score == pytest.approx(0.9, abs=0.02)
    assert b.calls[-1][2] == 15


def test_abstain_rule_needs_and_uses_uncertainty():
    b = WordBackend()
    with pytest.raises(ConfigError, match="mc_samples"):
        build_scorer(ScorerConfig(method="e-c", verbatim_support=False, abstain_above=0.1, structure_check=False), backend=b)
    v = build_scorer(ScorerConfig(method="e", verbatim_support=False, mc_samples=5, abstain_above=1e-9, structure_check=False), backend=b).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert v.label == "abstain"


def test_threshold_sets_the_label():
    b = WordBackend()
    s = build_scorer(ScorerConfig(method="e", verbatim_support=False, threshold=0.95, structure_check=False), backend=b)
    assert s.score(sources=[SRC], claims=["Acme makes rockets."])[0].label == "unsupported"
    s = build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False), backend=b)
    assert s.score(sources=[SRC], claims=["Acme makes rockets."])[0].label == "supported"


@pytest.mark.parametrize(
    "sources, claims, match",
    [
        (["x"], [""], "Pair 0: the claim is empty"),
        (["  "], ["x"], "Pair 0: the source is empty"),
        (["x", "y"], ["x"], "2 sources but 1 claims"),
        ("a source", ["x"], "lists of strings"),
        (["x"], [float("nan")], "NaN"),
        (["x"], [3], "must be a string"),
    ],
)
def test_bad_input_gets_a_clear_error(sources, claims, match):
    with pytest.raises(InputError, match=match):
        build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=WordBackend()).score(sources=sources, claims=claims)


def test_bad_options_are_rejected():
    b = WordBackend()
    with pytest.raises(RegistryError, match="Unknown scorer 'ec'.*Did you mean 'e-c'"):
        build_scorer(ScorerConfig(method="ec", verbatim_support=False, structure_check=False), backend=b)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="Did you mean 'mean'"):
        build_scorer(ScorerConfig(method="e-c", verbatim_support=False, claim_aggregation="maen", structure_check=False), backend=b)
    with pytest.raises(ConfigError, match="mc_samples"):
        build_scorer(ScorerConfig(method="e-c", verbatim_support=False, mc_samples=1, structure_check=False), backend=b)
    for bad in (0, [1, 1], [], [1, 0], [1, "2"], 1.5):
        with pytest.raises(ConfigError, match="window_sentences"):
            ScorerConfig(window_sentences=bad)  # type: ignore[arg-type]
    # One length in a list is that length: the same reading and the same cache key.
    assert ScorerConfig(window_sentences=[3]) == ScorerConfig(window_sentences=3)


def test_context_is_prepended_only_when_asked():
    b = WordBackend()
    build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False), backend=b).score(sources=[SRC], claims=["Bob joined."], contexts=[["Who joined?"]])
    assert not any("Who joined?" in p for p in b.calls[-1][0])
    build_scorer(ScorerConfig(method="e", verbatim_support=False, context_mode="premise", structure_check=False), backend=b).score(sources=[SRC], claims=["Bob joined."], contexts=[["Who joined?"]])
    assert all(p.startswith("Who joined?\n") for p in b.calls[-1][0])


def test_empty_batch_returns_empty_list():
    assert build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=WordBackend()).score(sources=[], claims=[]) == []


# ---------------------------------------------------------------- real (tiny) torch model
def test_mc_dropout_is_deterministic_and_independent_of_batch(tiny_backend):
    s = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, mc_samples=6, seed=3, structure_check=False), backend=tiny_backend)
    a = s.score(sources=[SRC], claims=["Acme makes rockets."])[0]
    b = s.score(sources=[SRC], claims=["Acme makes rockets."])[0]
    c = s.score(sources=["Other text entirely.", SRC], claims=["Something else.", "Acme makes rockets."])[1]
    assert a.score == b.score == c.score
    assert a.uncertainty == c.uncertainty and a.uncertainty > 0
    d = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, mc_samples=6, seed=4, structure_check=False), backend=tiny_backend).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert d.score != a.score


def test_torch_backend_batching_does_not_change_scores(tiny_nli_dir):
    from veridic.nli import load_backend

    prem = [SRC, "A cat sat on the mat.", "Short.", SRC + " " + SRC]
    hyp = ["Acme makes rockets.", "A dog sat.", "Long hypothesis with many words in it.", "Bob."]
    p1 = load_backend(tiny_nli_dir, dtype="float32", batch_size=1).predict(prem, hyp)
    p4 = load_backend(tiny_nli_dir, dtype="float32", batch_size=4).predict(prem, hyp)
    np.testing.assert_allclose(p1, p4, atol=1e-5)
    np.testing.assert_allclose(p1.sum(axis=1), 1.0, atol=1e-6)
    assert not np.isnan(p1).any()


def test_mc_dropout_is_off_outside_mc(tiny_backend):
    p = tiny_backend.predict([SRC], ["Acme."])
    q = tiny_backend.predict([SRC], ["Acme."])
    np.testing.assert_array_equal(p, q)
    assert not tiny_backend.model.training


def test_cached_backend_shares_calls_and_returns_identical_results(tiny_backend):
    from veridic.nli import CachedBackend

    cb = CachedBackend(tiny_backend)
    e = build_scorer(ScorerConfig(method="e", verbatim_support=False, structure_check=False), backend=cb).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    misses = cb.misses
    ec = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=cb).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert cb.misses == misses and cb.hits >= misses  # the second scorer made no new model call
    direct = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, structure_check=False), backend=tiny_backend).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert ec.score == direct.score and e.e == direct.e
    mc1 = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, mc_samples=4, structure_check=False), backend=cb).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    mc2 = build_scorer(ScorerConfig(method="e-c", verbatim_support=False, mc_samples=4, structure_check=False), backend=tiny_backend).score(sources=[SRC], claims=["Acme makes rockets."])[0]
    assert mc1.score == mc2.score and mc1.uncertainty == mc2.uncertainty


def test_disk_cache_survives_a_new_wrapper(tiny_backend, tmp_path):
    from veridic.nli import CachedBackend

    db = tmp_path / "nli-cache"
    first = CachedBackend(tiny_backend, path=db)
    a = first.predict([SRC, "x y"], ["Acme.", "z"])
    second = CachedBackend(tiny_backend, path=db)
    b = second.predict([SRC, "x y"], ["Acme.", "z"])
    np.testing.assert_array_equal(a, b)
    assert second.misses == 0 and second.hits == 2
    m1 = first.predict([SRC], ["Acme."], mc_samples=3, seed=1)
    m2 = CachedBackend(tiny_backend, path=db).predict([SRC], ["Acme."], mc_samples=3, seed=1)
    np.testing.assert_array_equal(m1, m2)


class _FailsAfter(WordBackend):
    """Raises on the ``n``-th predict call, as a run stopped mid-way would."""

    def __init__(self, n):
        super().__init__()
        self.n = n

    def predict(self, premises, hypotheses, **kw):
        if len(self.calls) + 1 >= self.n:
            raise KeyboardInterrupt
        return super().predict(premises, hypotheses, **kw)


def test_disk_cache_keeps_finished_chunks_of_a_stopped_run(tmp_path):
    from veridic.nli import CachedBackend

    db = tmp_path / "nli-cache"
    prem = [f"word{i} " * (i + 1) for i in range(7)]
    hyp = [f"word{i}" for i in range(7)]
    with pytest.raises(KeyboardInterrupt):
        CachedBackend(_FailsAfter(3), path=db, chunk_size=3).predict(prem, hyp, mc_samples=2, seed=5)
    resumed = CachedBackend(WordBackend(), path=db, chunk_size=3)
    got = resumed.predict(prem, hyp, mc_samples=2, seed=5)
    assert resumed.hits == 6 and resumed.misses == 1  # two chunks of 3 were committed before the stop
    np.testing.assert_array_equal(got, WordBackend().predict(prem, hyp, mc_samples=2, seed=5))
    assert [len(c[0]) for c in resumed.inner.calls] == [1]


def test_cached_backend_rejects_a_bad_chunk_size():
    from veridic.nli import CachedBackend

    with pytest.raises(ConfigError, match="chunk_size"):
        CachedBackend(WordBackend(), chunk_size=0)


def test_disk_cache_keys_a_model_folder_by_its_real_path(tmp_path, monkeypatch):
    from veridic.nli import CachedBackend

    real = tmp_path / "models" / "nli"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    db = tmp_path / "nli-cache"
    a = WordBackend()
    a.model_id = str(real)
    CachedBackend(a, path=db).predict(["x y"], ["x"])
    monkeypatch.chdir(tmp_path)
    b = WordBackend()
    b.model_id = "link"  # same folder, reached through a relative symlink
    cb = CachedBackend(b, path=db)
    cb.predict(["x y"], ["x"])
    assert cb.hits == 1 and b.calls == []
    c = WordBackend()
    c.model_id = "some-hub/model"  # not a folder: kept as given, so a different key
    other = CachedBackend(c, path=db)
    other.predict(["x y"], ["x"])
    assert other.misses == 1


def test_disk_cache_keeps_exact_int8_predictions_apart_from_earlier_ones(tmp_path):
    from veridic.nli import CachedBackend

    class _Exact(WordBackend):
        def describe(self):
            return {**super().describe(), "int8_products": "exact"}

    db = tmp_path / "nli-cache"
    CachedBackend(WordBackend(), path=db).predict(["x y"], ["x"])
    exact = CachedBackend(_Exact(), path=db)
    exact.predict(["x y"], ["x"])
    assert exact.misses == 1 and exact.hits == 0
    again = CachedBackend(_Exact(), path=db)
    again.predict(["x y"], ["x"])
    assert again.hits == 1
