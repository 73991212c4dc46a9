"""The flag threshold refitted with faithful rewordings in view (scripts/refit_flag_threshold.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from refit_flag_threshold import refit  # noqa: E402


class _Tagger:
    """Probabilities by claim: every character of a claim gets the claim's one value."""

    def __init__(self, by_claim: dict[str, float], *, threshold: float, flag: float):
        self.by_claim, self.threshold, self.meta = by_claim, threshold, {"flag_threshold": flag}

    def char_probabilities(self, *, sources, claims):
        return [np.full(len(c), self.by_claim[c]) for c in claims]


HELD = [{"claim": "bad one", "spans": [{"start": 0, "end": 3}]}, {"claim": "bad two", "spans": [{"start": 0, "end": 3}]},
        {"claim": "good one", "spans": []}, {"claim": "good two", "spans": []}]
FAITHFUL = [{"source": "", "claim": f"reworded {i}", "spans": []} for i in range(4)]


def _probs(held: dict[str, float], faithful: list[float]) -> dict[str, float]:
    return {**held, **{f"reworded {i}": p for i, p in enumerate(faithful)}}


def test_the_flag_threshold_keeps_to_the_reference_taggers_flag_rate_on_faithful_rewordings():
    for r in HELD:
        r["source"] = ""
    # Uncapped, 0.5 separates the held-back rows perfectly; but at 0.5 the tagger would flag 3 of 4 rewordings.
    tagger = _Tagger(_probs({"bad one": 0.9, "bad two": 0.6, "good one": 0.3, "good two": 0.2}, [0.55, 0.6, 0.7, 0.1]), threshold=0.15, flag=0.5)
    cap = _Tagger(_probs({}, [0.2, 0.2, 0.8, 0.2]), threshold=0.15, flag=0.45)  # flags 1 of 4 at its own threshold
    fit = refit(tagger=tagger, cap=cap, held_rows=HELD, faithful_rows=FAITHFUL, token_grid=[0.15, 0.5, 0.65, 0.75])
    assert fit["max_share"] == 0.25 and fit["faithful_share"][0.5] == 0.75
    assert fit["allowed"] == [0.65, 0.75, 0.95, 0.99]
    assert fit["flag_threshold"] == 0.75  # the best held-back balanced accuracy among the allowed values (0.75: 0.9 flagged, 0.6 not; ties go higher)
    assert fit["was"] == 0.5 and fit["held_back_rows"] == 4 and fit["faithful_rows"] == 4


def test_no_value_within_the_cap_gives_the_highest_value_and_no_faithful_rows_is_an_error():
    from veridic.errors import InputError

    tagger = _Tagger(_probs({"bad one": 0.9, "bad two": 0.6, "good one": 0.3, "good two": 0.2}, [1.0, 1.0, 1.0, 1.0]), threshold=0.15, flag=0.5)
    cap = _Tagger(_probs({}, [0.0, 0.0, 0.0, 0.0]), threshold=0.15, flag=0.45)
    fit = refit(tagger=tagger, cap=cap, held_rows=HELD, faithful_rows=FAITHFUL, token_grid=[0.15, 0.5])
    assert fit["allowed"] == [] and fit["flag_threshold"] == 0.99
    with pytest.raises(InputError, match="got 4 and 0"):
        refit(tagger=tagger, cap=cap, held_rows=HELD, faithful_rows=[], token_grid=[0.15, 0.5])
