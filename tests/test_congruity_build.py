"""Distractors of paper 000 (§2.2, §2.3) satisfy the overlap constraints; references exclude the gold."""

from __future__ import annotations

import random

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.congruity._build import build_claim_items, build_description_items, build_references, overlaps
from veridic.congruity._data import CongruityExample, Fact, facts_by_entity
from veridic.errors import InputError
from veridic.ling.lexical import content_words, tokens

WORDS = ["poet", "senator", "drummer", "chef", "banker", "actor", "coach", "lawyer", "painter", "mayor", "judge", "pilot", "nurse", "author", "critic"]
PLACES = ["Ohio", "Peru", "Rome", "Oslo", "Lima", "Kyiv", "Cairo", "Dakar"]


def _corpus(seed: int, n: int) -> list[CongruityExample]:
    rng = random.Random(seed)
    people = [f"Person{i} Name{i}" for i in range(max(3, n // 2))]
    out = []
    for i in range(n):
        ent = rng.choice(people)
        k = people.index(ent)
        job = WORDS[k % len(WORDS)]
        other = WORDS[(k + 3) % len(WORDS)]
        facts = (Fact(text=job, used=True), Fact(text=f"born in {PLACES[k % len(PLACES)]}", used=False), Fact(text=other, used=False))
        gold = rng.choice([f"the {job}", f"a famous {job}", job])
        art = f"art{rng.randrange(max(2, n // 2))}"
        ctx = f"{' '.join(rng.sample(WORDS + PLACES, 4))} said {ent} , [DESC] , on {rng.choice(PLACES)} ."
        out.append(CongruityExample(id=f"r{i}", article_id=art, entity=ent, context=ctx, gold=gold, facts=facts, entity_id=f"Q{k}"))
    return out


def _check_constraints(items, examples):
    known = facts_by_entity(examples)
    by_id = {e.id: e for e in examples}
    assert items, "expected at least one item"
    for it in items:
        e = by_id[it.id]
        gold_words = set(content_words(e.gold)) | set(content_words(it.options["accurate"]))
        target = known[e.entity_key] | set(tokens(e.entity))
        assert set(it.options) == {"accurate", "incongruous", "nonfactual", "both"}
        for cls in ("incongruous", "nonfactual", "both"):
            assert not overlaps(it.options[cls], gold_words), (cls, it.options)
        for cls in ("nonfactual", "both"):
            assert not overlaps(it.options[cls], target), (cls, it.options)
        assert len({o.lower() for o in it.options.values()}) == 4


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 40))
def test_claim_distractors_satisfy_overlap_constraints(seed, n):
    exs = _corpus(seed, n)
    items, stats = build_claim_items(examples=exs, seed=seed, nonfactual="neighbour")
    assert stats.n_items == len(items) and stats.n_items + sum(stats.skipped.values()) == len(exs)
    if items:
        _check_constraints(items, exs)
        for it in items:  # claim task: accurate is a used claim, incongruous an unused one of the same entity
            e = next(x for x in exs if x.id == it.id)
            assert it.options["accurate"] in {f.text for f in e.facts if f.used}
            assert it.options["incongruous"] in {f.text for f in e.facts if not f.used}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 40))
def test_description_distractors_satisfy_overlap_constraints(seed, n):
    exs = _corpus(seed, n)
    items, _ = build_description_items(examples=exs, seed=seed, nonfactual="neighbour")
    if items:
        _check_constraints(items, exs)
        for it in items:
            e = next(x for x in exs if x.id == it.id)
            assert it.options["accurate"] == e.gold
            # incongruous = the same entity's description from another article
            assert any(x.gold == it.options["incongruous"] and x.entity_key == e.entity_key and x.article_id != e.article_id for x in exs)


def test_accurate_claim_is_the_used_claim_with_most_overlap():
    e = CongruityExample(id="1", article_id="a", entity="Ann Lee", context="Ann Lee , [DESC] , said .", gold="the Pulitzer Prize-winning writer",
                         facts=(Fact(text="journalist", used=True), Fact(text="winner of the Pulitzer Prize", used=True), Fact(text="born in Ohio")))
    others = [CongruityExample(id=str(i), article_id=f"b{i}", entity=f"X{i} Y", context="X , [DESC] .", gold=g, facts=(Fact(text=g, used=True), Fact(text="citizen of Mars")))
              for i, g in enumerate(["drummer", "chef", "banker", "mayor"])]
    items, _ = build_claim_items(examples=[e, *others], seed=0, nonfactual="neighbour")
    assert items[0].id == "1" and items[0].options["accurate"] == "winner of the Pulitzer Prize"


def test_nonfactual_prefers_another_entity_of_the_same_article():
    a = CongruityExample(id="1", article_id="a", entity="Ann Lee", context="Ann Lee , [DESC] , said .", gold="senator", facts=(Fact(text="senator", used=True), Fact(text="born in Ohio")))
    b = CongruityExample(id="2", article_id="a", entity="Bo Ray", context="Bo Ray , [DESC] , said .", gold="drummer", facts=(Fact(text="drummer", used=True), Fact(text="born in Peru")))
    rest = [CongruityExample(id=str(i), article_id=f"c{i}", entity=f"Z{i} Q", context="Z , [DESC] .", gold=g, facts=(Fact(text=g, used=True), Fact(text="citizen of Mars")))
            for i, g in enumerate(["chef", "banker", "mayor", "pilot"], 3)]
    items, stats = build_claim_items(examples=[a, b, *rest], seed=0)
    first = next(it for it in items if it.id == "1")
    assert first.options["nonfactual"] == "drummer" and first.source["nonfactual"] == "same-article"
    assert stats.sources["nonfactual:same-article"] >= 1


def test_references_exclude_gold_and_entity_facts():
    e = CongruityExample(id="1", article_id="a", entity="Ann Lee", context="Voters cheered as Ann Lee , [DESC] , spoke in Ohio about the senator role .",
                         gold="the senator", facts=(Fact(text="senator", used=True), Fact(text="born in Ohio"), Fact(text="senator from Ohio")), previous="A rally.")
    ref = build_references(examples=[e])[0]
    assert ref.accurate == "the senator"
    assert "senator" not in ref.incongruous.split() and "ohio" in ref.incongruous.split()
    # nonfactual (PoMo-style, §6): the context minus everything true of the entity
    assert "senator" not in ref.nonfactual.split() and "ohio" not in ref.nonfactual.split() and "voters" in ref.nonfactual.split()
    assert "lee" not in ref.nonfactual.split()


def test_build_rejects_empty_input():
    with pytest.raises(InputError, match="No examples"):
        build_claim_items(examples=[])


@pytest.mark.skipif(not (DATA / "pomo" / "test.pm.zip").exists(), reason="PoMo not found under ../shared/data/pomo")
def test_real_pomo_claim_items_satisfy_constraints():
    from veridic.congruity._data import load_pomo

    exs = load_pomo(split="test", limit=800)
    items, stats = build_claim_items(examples=exs, seed=0, nonfactual="neighbour")
    assert stats.n_items > 700
    _check_constraints(items, exs)
    # the paper's design: nonfactual = another person of the same article; PoMo rarely has one, so most items drop out
    strict, st_strict = build_claim_items(examples=exs, seed=0)
    assert 10 <= st_strict.n_items < 200 and st_strict.skipped["no nonfactual"] > 500
    assert all(it.source["nonfactual"].startswith("same-article") for it in strict)
    _check_constraints(strict, exs)
    by_id = {e.id: e for e in exs}
    for it in strict:  # the nonfactual option really is about someone the article mentions
        e = by_id[it.id]
        assert e.meta["mentioned_entities"] or it.source["nonfactual"] == "same-article"


def test_strict_nonfactual_uses_a_person_named_in_the_article_and_drops_the_rest():
    base = dict(context="Ann Lee , [DESC] , met Bo Ray in Rome .")
    a = CongruityExample(id="1", article_id="a", entity="Ann Lee", gold="the senator", entity_id="Q1",
                         facts=(Fact(text="senator", used=True), Fact(text="born in Ohio", used=False)), meta={"mentioned_entities": ["Q2"]}, **base)
    b = CongruityExample(id="2", article_id="b", entity="Bo Ray", context="Bo Ray , [DESC] , sang .", gold="a drummer", entity_id="Q2",
                         facts=(Fact(text="drummer", used=True), Fact(text="born in Peru", used=False)))
    c = CongruityExample(id="3", article_id="c", entity="Cy Dunn", context="Cy Dunn , [DESC] , cooked .", gold="the chef", entity_id="Q3",
                         facts=(Fact(text="chef", used=True), Fact(text="graduate of Yale", used=False)))
    items, stats = build_claim_items(examples=[a, b, c], seed=0)
    assert [it.id for it in items] == ["1"] and items[0].options["nonfactual"] == "drummer"
    assert items[0].source["nonfactual"] == "same-article-mention" and stats.skipped["no nonfactual"] == 2
    # the proxy fills the other two from similar contexts instead, and says so
    proxy, _ = build_claim_items(examples=[a, b, c], seed=0, nonfactual="neighbour")
    assert {it.source["nonfactual"] for it in proxy if it.id != "1"} == {"neighbour"}
