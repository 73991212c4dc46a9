"""The pipeline-variant selection (benchmarks/pipeline_variants.py): its registered rule and its call memo."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import pytest  # noqa: E402
from pipeline_variants import GRIDS, _Memo, _parse_costs, _table, select  # noqa: E402


def variant(obj: float, passing: int, edits: int = 10) -> dict:
    return {"objective": obj, "figures": {"suite_edits_passing": passing, "suite_edits": edits}}


def test_the_rule_takes_the_best_mean_among_variants_whose_edits_all_pass_and_ties_go_to_the_first():
    rows = [variant(0.50, 10), variant(0.70, 9), variant(0.60, 10), variant(0.60, 10)]
    assert select(rows) is rows[2]  # 0.70 fails the audit; of the two 0.60, the earlier
    only_failing = [variant(0.4, 8), variant(0.5, 9)]
    assert select(only_failing) is only_failing[1]  # none passes: the best of all, never nothing


def test_every_grid_starts_at_the_shipped_settings():
    assert [v[0] for v in GRIDS["v3"].values()] == [None, None, True, None]
    assert [v[0] for v in GRIDS["v4"].values()] == [False, False]
    assert [v[0] for v in GRIDS["v7"].values()] == [True, True, None]  # v5's shipped settings, nothing filled
    assert [v[0] for v in GRIDS["v8"].values()] == [True, True, False]  # v5's shipped settings, judge-only spans dropped
    assert [v[0] for v in GRIDS["v13"].values()] == [True, True, False]  # the shipped pipeline first: no rule flags
    assert GRIDS["v15"]["window"][0] is None  # the tagger's own window first
    # a candidate tagger is measured at exactly the shipped pipeline's settings, one variant
    assert GRIDS["t1"] == {"content_words": [True], "fixes_explain": [True], "flag_threshold": [0.80]}


def test_a_window_that_costs_more_than_twice_the_scorer_is_out_of_the_selection_and_costs_are_parsed_or_refused():
    rows = [variant(0.60, 10), {**variant(0.70, 10), "cost_ratio": 2.38}, {**variant(0.65, 10), "cost_ratio": 1.9}]
    assert select(rows) is rows[2]  # the best mean costs 2.38 x
    assert _parse_costs(["384=2.38", "256=1.17"]) == {384: 2.38, 256: 1.17}
    with pytest.raises(SystemExit, match="WINDOW=RATIO"):
        _parse_costs(["384:2.38"])


def test_the_table_shows_every_variant_and_marks_the_selected_one():
    knobs = {"word_threshold": 0.25, "flag_threshold": 0.6, "overrule": True, "spans_per_sentence": None}
    figures = {"wice_dev_f1": 0.4, "entfa_held_back_f1": 0.6, "suite_left_alone": 0.7, "suite_entity_f1": 0.5,
               "suite_relation_f1": 0.75, "suite_edits_passing": 10, "suite_edits": 10}
    rows = [{"knobs": {**knobs, "content_words": c}, "figures": figures, "objective": 0.5 + c} for c in (False, True)]
    lines = _table(rows, rows[1]).splitlines()
    assert len(lines) == 4 and "**selected**" in lines[3] and "**selected**" not in lines[2]
    assert "| 0.25 | 0.60 | True | all | True | False | — | False |" in lines[3]
    filled = {**rows[1], "knobs": {**rows[1]["knobs"], "unsupported_fill": "absent-words"}}
    assert "| True | False | absent-words | False | False | False | 0.400 |" in _table([filled], filled)
    kept = {**rows[1], "knobs": {**rows[1]["knobs"], "judge_contradictions": True},
            "figures": {**figures, "suite_contradictory_f1": 0.66}}
    assert "| — | True | False | False | 0.400 |" in _table([kept], kept) and "0.500 / 0.750 / 0.660" in _table([kept], kept)
    bound = {**rows[1], "knobs": {**rows[1]["knobs"], "bindings": True}}
    assert "| — | False | True | False | 0.400 |" in _table([bound], bound)
    flagged = {**rows[1], "knobs": {**rows[1]["knobs"], "rule_flags": "structure"}}
    assert "| — | False | False | structure | 0.400 |" in _table([flagged], flagged)


class Counter:
    threshold = 0.25

    def __init__(self):
        self.calls = 0

    def char_probabilities(self, *, sources, claims):
        self.calls += 1
        return [len(c) for c in claims]


def test_the_memo_runs_each_distinct_call_once_and_forwards_the_rest():
    inner = Counter()
    m = _Memo(inner, "char_probabilities")
    assert m.char_probabilities(sources=["s"], claims=["ab"]) == [2]
    assert m.char_probabilities(sources=["s"], claims=["ab"]) == [2] and inner.calls == 1
    assert m.char_probabilities(sources=["s"], claims=["abc"]) == [3] and inner.calls == 2
    assert m.threshold == 0.25
