"""benchmarks/chosen_windows.py: what the model reads in the window the scorer picks, by row label."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes import CONTRA, ENTAIL, NEUTRAL, FakeNLIBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import chosen_windows  # noqa: E402

SRC = "Alice founded Acme in 2001. Acme makes rockets in Ohio. Bob joined the firm in 2005."


def _set(name: str, rows: list[tuple[str, int]]) -> SimpleNamespace:
    ex = [SimpleNamespace(pair=SimpleNamespace(source=SRC, claim=c, context=None), label=y) for c, y in rows]
    return SimpleNamespace(name=name, examples=ex, labels=[y for _, y in rows])


def test_counts_follow_the_models_reading_of_the_chosen_window_and_both_rankings_are_reported(monkeypatch):
    # Faithful claims entailed, one unfaithful claim read as entailed (a false entailment), one as contradicted.
    backend = FakeNLIBackend({"rockets": ENTAIL, "founded": ENTAIL, "Carol": ENTAIL, "Mars": CONTRA, "Texas": NEUTRAL})
    rows = [("Acme makes rockets.", 1), ("Alice founded Acme.", 1), ("Carol founded Acme.", 0), ("Acme flies to Mars.", 0),
            ("Acme is in Texas.", 0)]
    monkeypatch.setattr(chosen_windows, "_backend", lambda model: backend)
    monkeypatch.setattr(chosen_windows, "_datasets", lambda data: [_set("toy", rows)])
    res = chosen_windows.chosen_windows(model="dummy", data="unused")
    toy = res["toy"]
    assert toy["faithful"] == {"sentences": 2, "entailing": 1.0, "neutral": 0.0, "contradicting": 0.0}
    assert toy["unfaithful"]["sentences"] == 3
    assert toy["unfaithful"]["entailing"] == pytest.approx(1 / 3) and toy["unfaithful"]["contradicting"] == pytest.approx(1 / 3)
    assert toy["unfaithful"]["neutral"] == pytest.approx(1 / 3)
    # The false entailment ties the faithful rows under both scores: AUC 1 - (1 tie / 2) / 6.
    assert toy["auc_e-c"] == pytest.approx(1 - 1 / 6) and toy["auc_e"] == pytest.approx(1 - 1 / 6)
    assert res["mean"]["auc_e-c"] == toy["auc_e-c"]
