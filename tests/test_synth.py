"""Synthetic faithfulness pairs: kinds, labels, changed spans, determinism."""

from __future__ import annotations

import pytest

from veridic.errors import ConfigError
from veridic.synth import KIND_LABELS, KINDS, Document, SyntheticGenerator, SyntheticPair

spacy = pytest.importorskip("spacy")




DOCS = [
    Document("d1", [
        "Maria Lopez, the chief executive of Acme Corp, announced the deal in Madrid on Monday.",
        "The company said profits rose by 12 percent in 2019.",
        "Acme Corp hired 250 engineers from Globex after the merger.",
        "Analysts at Barclays expected the shares to increase sharply.",
        "The board did not approve the plan that was proposed by John Smith.",
        "John Smith founded Globex in 1998 (with two partners) in Chicago.",
    ]),
    Document("d2", [
        "The storm hit the coast of Florida on Tuesday, forcing 3,000 residents to leave their homes.",
        "Officials in Miami opened 12 shelters, which were run by volunteers.",
        "The governor praised the rescue teams for their quick response.",
        "Power was restored to most homes by Friday, according to the utility company.",
        "Peter Brown, a spokesman for the city, is confident the damage will be repaired.",
    ]),
]


@pytest.fixture(scope="module")
def pairs(nlp):
    gen = SyntheticGenerator(nlp=nlp, seed=7)
    return gen.generate(documents=DOCS, counts={k: 3 for k in KINDS})


def test_every_kind_is_produced_with_its_label(pairs):
    kinds = {p.kind for p in pairs}
    assert kinds == set(KINDS)
    for p in pairs:
        assert p.label == KIND_LABELS[p.kind]
        assert p.premise and p.hypothesis


def test_changed_span_round_trips(pairs):
    edited = [p for p in pairs if p.kind in {"entity_swap", "number_change", "negation", "antonym", "swap_args",
                                             "doc_contradiction"}]
    assert edited
    for p in edited:
        assert p.changed_span is not None, p
        s, e = p.changed_span
        assert 0 <= s < e <= len(p.hypothesis)
        new = p.hypothesis[s:e]
        assert new.strip() == new and new
        if p.kind == "entity_swap":
            assert new == p.meta["replaced"] or new not in p.original  # the new entity is new text
            assert p.hypothesis[:s] + p.meta["replaced"] + p.hypothesis[e:] == p.original
        if p.kind == "negation" and p.meta["direction"] == "insert":
            assert "not" in new
    for p in pairs:
        if p.kind in {"extract", "compress", "neutral_same_doc", "neutral_other_doc", "doc_entailment"}:
            assert p.changed_span is None


def test_perturbed_hypothesis_differs_and_premise_has_original(pairs):
    for p in pairs:
        if p.label == "contradiction" and p.kind != "doc_contradiction":
            assert p.hypothesis != p.original
            assert p.original in p.premise
        if p.kind == "compress":
            assert len(p.hypothesis) < len(p.original)
        if p.kind == "neutral_same_doc":
            assert p.hypothesis not in p.premise


def test_entity_swap_prefers_same_document(pairs):
    swaps = [p for p in pairs if p.kind == "entity_swap"]
    assert any(p.meta["source"] == "same_doc" for p in swaps)


def test_deterministic_under_seed(nlp, pairs):
    again = SyntheticGenerator(nlp=nlp, seed=7).generate(documents=DOCS, counts={k: 3 for k in KINDS})
    assert [p.to_dict() for p in again] == [p.to_dict() for p in pairs]
    other = SyntheticGenerator(nlp=nlp, seed=8).generate(documents=DOCS, counts={k: 3 for k in KINDS})
    assert [p.to_dict() for p in other] != [p.to_dict() for p in pairs]


def test_round_trip_dict(pairs):
    for p in pairs:
        assert SyntheticPair.from_dict(p.to_dict()) == p


def test_unknown_kind_is_a_config_error(nlp):
    with pytest.raises(ConfigError, match="did you mean|Did you mean"):
        SyntheticGenerator(nlp=nlp).generate(documents=DOCS, counts={"entity_swp": 1})


def test_pomo_detokeniser():
    from veridic.synth._sources import _detok

    assert _detok("Alice B. Toklas , Stein 's partner , was -LRB- reportedly -RRB- `` jealous '' .") == \
        'Alice B. Toklas, Stein\'s partner, was (reportedly) "jealous".'
