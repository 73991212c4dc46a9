"""The published numbers of paper 003 (Rashkin et al., AIS), Tables 3-7, for side-by-side reports.

Keys of :data:`PAPER_SYSTEMS` are the ``model-name`` values of the released
CSVs; each maps to the paper's row label and its Flag / Int / AIS figures
(``None`` where the table has no such column).

>>> PAPER_SYSTEMS["cnn_dm"]["matchsum"]["int"], PAPER_SYSTEMS["cnn_dm"]["matchsum"]["ais"]
(90.0, 99.4)
"""

from __future__ import annotations

from typing import Any

__all__ = ["PAPER_AGREEMENT", "PAPER_SYSTEMS", "PAPER_TABLE"]

PAPER_TABLE = {"qrecc": "Table 3", "wow": "Table 4", "cnn_dm": "Table 5", "totto": "Table 6"}


def _row(label: str, flag: float | None, int_: float, ais: float, star_int: bool = False, star_ais: bool = False) -> dict[str, Any]:
    return {"label": label, "flag": flag, "int": int_, "ais": ais, "int_lower": star_int, "ais_lower": star_ais}


PAPER_SYSTEMS: dict[str, dict[str, dict[str, Any]]] = {
    "qrecc": {
        "t5-small-pretrained": _row("T5-PT (with Evidence) Small", None, 43.0, 82.6, True),
        "t5-base-pretrained": _row("T5-PT (with Evidence) Base", None, 47.0, 69.1, True, True),
        "t5-small-no-evidence": _row("T5-FT (no Evidence) Small", None, 57.8, 25.2, True, True),
        "t5-base-no-evidence": _row("T5-FT (no Evidence) Base", None, 59.8, 21.8, True, True),
        "t5-small": _row("T5-FT (with Evidence) Small", None, 99.0, 87.9),
        "t5-base": _row("T5-FT (with Evidence) Base", None, 98.0, 87.2),
        "qrecc-reference": _row("Reference", None, 99.0, 87.8),
    },
    "wow": {
        "wow-dinan_et_al": _row("WoW Baseline", 4.0, 84.4, 19.8, True, True),
        "wow-dodeca": _row("Dodeca", 8.5, 100.0, 60.1, False, True),
        "wow-t5": _row("T5", 5.5, 98.4, 39.8, False, True),
        "wow-controlled_t5": _row("T5 (with Controls)", 7.5, 99.5, 92.4),
        "wow-reference": _row("Reference", 4.0, 100.0, 15.6, False, True),
    },
    "cnn_dm": {
        "matchsum": _row("MatchSum", None, 90.0, 99.4),
        "pointer": _row("Pointer-Gen", None, 90.0, 97.8),
        "bigbird": _row("BigBird", None, 90.0, 87.2, False, True),
        "reference": _row("Reference", None, 86.0, 54.1, False, True),
    },
    "totto": {
        "ByT5-base": _row("ByT5-Base", 0.0, 78.9, 88.5, True),
        "ByT5-xl": _row("ByT5-XL", 0.0, 79.5, 86.2, True),
        "T5-small": _row("T5-Small", 3.0, 86.5, 88.6),
        "T5-base": _row("T5-Base", 5.0, 91.1, 86.6),
        "T5-xl": _row("T5-XL", 6.0, 89.4, 85.1, False, True),
        "reference-final": _row("Reference", 0.0, 83.9, 91.0),
    },
}

# Table 7, crowd inter-annotator agreement (left half) and vs. expert consensus (right half).
PAPER_AGREEMENT: dict[str, dict[str, Any]] = {
    "cnn_dm": {"int": {"f1": 0.83, "pairwise": 0.80, "alpha": 0.46}, "ais": {"f1": 0.92, "pairwise": 0.89, "alpha": 0.69},
               "expert": {"int": {"f1": 0.48, "pairwise": 0.60, "alpha": -0.04}, "ais": {"f1": 0.81, "pairwise": 0.86, "alpha": 0.61}}},
    "qrecc": {"int": {"f1": 0.97, "pairwise": 0.96, "alpha": 0.91}, "ais": {"f1": 0.93, "pairwise": 0.89, "alpha": 0.76},
              "expert": {"int": {"f1": 0.77, "pairwise": 0.81, "alpha": 0.54}, "ais": {"f1": 0.77, "pairwise": 0.78, "alpha": 0.54}}},
    "wow": {"int": {"f1": 0.88, "pairwise": 0.93, "alpha": 0.60}, "ais": {"f1": 0.95, "pairwise": 0.88, "alpha": 0.79}},
    "totto": {"int": {"f1": 0.95, "pairwise": 0.95, "alpha": 0.84}, "ais": {"f1": 0.92, "pairwise": 0.92, "alpha": 0.74}},
}
