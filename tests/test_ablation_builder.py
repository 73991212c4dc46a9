"""The synthetic ablation-set builder: edits are consistent between grounding and target."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veridic.ablation._builder import _pattern, apply_edit, build_ablation_set, find_facts
from veridic.ablation._data import west_synthetic_path
from veridic.errors import ConfigError, DataFormatError

ROW = {
    "id": "queen",
    "grounding": "The Queen toured Canada in March 1959 with four aides. Three of them left in March.",
    "context": "Royal tours.",
    "target": "The Queen toured Canada in March.",
}


def _check_consistent(res):
    for edit, k in zip(res.edits, range(0, len(res.examples), 2)):
        orig, rev = res.examples[k], res.examples[k + 1]
        g, g2, y, y2 = orig.grounding, orig.ablated_grounding, orig.target, rev.target
        assert rev.grounding == g2 and rev.ablated_grounding == g and rev.context == orig.context
        # The old value is gone from g' and y', the new one is where the old one was, and nothing else changed.
        assert not _pattern(edit.old).search(g2) and not _pattern(edit.old).search(y2)
        assert len(_pattern(edit.new).findall(g2)) == len(_pattern(edit.old).findall(g)) == len(edit.grounding_offsets)
        assert len(_pattern(edit.new).findall(y2)) == len(_pattern(edit.old).findall(y)) == len(edit.target_offsets) >= 1
        assert apply_edit(g2, old=edit.new, new=edit.old)[0] == g  # invertible: the new value was not there before
        assert apply_edit(y2, old=edit.new, new=edit.old)[0] == y
        for off in edit.target_offsets:
            assert y2[off : off + len(edit.new)].lower() == edit.new.lower()


def test_chronological_edit_applied_to_both():
    res = build_ablation_set(rows=[ROW], kinds=("chronological",), seed=0)
    assert len(res.examples) == 2 and res.n_skipped == 0
    e = res.edits[0]
    assert e.kind == "chronological" and e.old == "March" and e.new in ("April", "February", "May", "January")
    assert res.examples[1].target == f"The Queen toured Canada in {e.new}."
    assert res.examples[0].ablated_grounding.count(e.new) == 2  # both Marches in the grounding
    _check_consistent(res)


def test_fact_must_appear_in_both():
    # "four" and "1959" are only in the grounding; the target's only shared fact is March.
    res = build_ablation_set(rows=[ROW], kinds=("numeric",))
    assert res.examples == [] and res.n_skipped == 1 and res.skipped_ids == ["queen"]


def test_case_is_kept_and_one_and_may_are_not_facts():
    assert apply_edit("Three left; three stayed; THREE.", old="three", new="four")[0] == "Four left; four stayed; FOUR."
    assert find_facts("One of them may come in May.") == [("chronological", "May")]
    assert find_facts("Version 2.5, 1,200 people, 3/4 cups") == []


def test_deterministic_and_order_free():
    rows = [ROW, {**ROW, "id": "b", "target": "Four aides came."}]
    a = build_ablation_set(rows=rows, seed=5)
    assert a.examples == build_ablation_set(rows=rows, seed=5).examples
    assert sorted(a.examples, key=lambda e: e.id) == sorted(build_ablation_set(rows=rows[::-1], seed=5).examples, key=lambda e: e.id)


def test_errors():
    with pytest.raises(ConfigError, match="Unknown edit kind"):
        build_ablation_set(rows=[ROW], kinds=("spatial",))
    with pytest.raises(DataFormatError, match="missing text column 'target'"):
        build_ablation_set(rows=[{"grounding": "x"}])


words = st.sampled_from(["miners", "were", "stuck", "the", "rescue", "took", "days", "in", "and", "crew"])
facts = st.sampled_from(["four", "seven", "12", "June", "1998", "Tuesday", "two", "Three"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(words, facts), min_size=3, max_size=25), st.lists(st.one_of(words, facts), min_size=1, max_size=12), st.integers(0, 3))
def test_edits_consistent_between_grounding_and_target(g_words, y_words, seed):
    g, y = " ".join(g_words) + ".", " ".join(y_words) + "."
    res = build_ablation_set(rows=[{"id": "r", "grounding": g, "context": "", "target": y}], seed=seed, max_per_item=2)
    _check_consistent(res)
    shared = {v.lower() for _, v in find_facts(y)} & {v.lower() for _, v in find_facts(g)}
    if not shared:
        assert res.n_skipped == 1


@pytest.mark.skipif(not west_synthetic_path().exists(), reason="West et al.'s synthetic set is absent (set VERIDIC_DATA)")
def test_rebuilds_most_of_west_synthetic_from_the_originals():
    raw = json.loads(west_synthetic_path().read_text())
    rows = [{"id": k, "grounding": e["source"], "context": e["context"], "target": e["target"]} for k, e in raw.items()]
    res = build_ablation_set(rows=rows)
    assert res.n_items == 85 and res.n_skipped <= 10
    _check_consistent(res)
    # The authors edited a fact of the same kind in every entry; we should find that fact often.
    same = sum(raw[e.id.split(":")[0]]["target_replacement"][0][1].lower() == ed.old.lower() for e, ed in zip(res.examples[::2], res.edits))
    assert same >= 40
    assert all(re.search(r"\w", e.target) for e in res.examples)
