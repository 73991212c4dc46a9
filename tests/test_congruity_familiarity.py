"""Familiarity: the paper's summary heuristic (§3) and the PoMo proxies."""

from __future__ import annotations

import pytest

from veridic.congruity._familiarity import assign_familiarity, summary_familiar
from veridic.errors import ConfigError, InputError


@pytest.mark.parametrize(
    ("summary", "expected"),
    [
        ("Obama met the pope on Tuesday .", True),  # last-name mention, no description
        ("President Barack Obama met the pope .", True),  # a title is not a description
        ("Barack Obama , who leads the party , met the pope .", False),  # relative clause
        ("Barack Obama , the former senator , spoke .", False),  # appositive
        ("Barack Obama ( D-Illinois ) spoke .", False),  # parenthesis
        ("former senator Barack Obama spoke .", False),  # lower-case pre-modifier before a title
        ("the poet Barack Obama spoke .", False),  # lower-case pre-modifier
        ("said senator Barack Obama .", True),  # title + name only
        ("Barack Obama spoke ; later Obama , a lawyer , left .", False),  # *every* mention must be bare
        ("Barack Obama , and others , spoke .", True),  # a coordination is not an appositive
        ("Nobody relevant spoke .", False),  # absent from the summary: unfamiliar
    ],
)
def test_summary_heuristic(summary, expected):
    assert summary_familiar(entity="Barack Obama", summary=summary) is expected


def test_count_proxies_and_column():
    labels, thr = assign_familiarity(method="claims", n_claims=[1, 5, 13, 13, 40, 60])
    assert thr == 13.0 and labels == [False, False, False, False, True, True]
    labels, thr = assign_familiarity(method="recurrence", n_mentions=[1, 1, 2, 7], threshold=2)
    assert thr == 2.0 and labels == [False, False, True, True]
    labels, _ = assign_familiarity(method="column", column=[True, None, False])
    assert labels == [True, None, False]
    labels, _ = assign_familiarity(method="summary", summaries=[("Ann Lee", "Lee won ."), ("Ann Lee", None)])
    assert labels == [True, None]
    with pytest.raises(ConfigError, match="must be one of"):
        assign_familiarity(method="fame")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="PoMo has no summaries"):
        assign_familiarity(method="summary")
    with pytest.raises(InputError, match="n_claims"):
        assign_familiarity(method="claims", n_claims=[None, None])
