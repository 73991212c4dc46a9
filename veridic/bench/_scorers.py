"""Benchmark scorers: the registry's scorers plus per-example score files.

Scorers are built by :func:`veridic.build_scorer` from the names in
:mod:`veridic.registry`, as at every other entry point. Per-example score files (``--scores``) become
:class:`ExternalScores`, which look scores up by row id instead of
computing them.

>>> from veridic import build_scorer
>>> s = build_scorer("overlap")
>>> [round(v.score, 2) for v in s.score(sources=["The cat sat on the mat."], claims=["The cat sat on a hat."])]
[0.67]
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from veridic.errors import DataFormatError, InputError
from veridic.io._records import read_records
from veridic.registry import (
    ENTRY_POINT_GROUP,
    ScorerSpec,
    get_scorer_spec,
    register_scorer,
    scorer_names,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "ExternalScores",
    "ScorerSpec",
    "get_scorer_spec",
    "load_external_scores",
    "register_scorer",
    "scorer_names",
]


# ---------------------------------------------------------------------------
# external per-example score files


class ExternalScores:
    """Published per-example scores read from a file, matched to rows by ``id``.

    Not a :class:`Scorer`: it cannot score new text, only look up ids.
    """

    def __init__(self, *, name: str, path: str, column: str, scores: Mapping[str, float], file_sha256: str) -> None:
        self.name = name
        self.path = path
        self.column = column
        self.scores = dict(scores)
        self.file_sha256 = file_sha256

    def lookup(self, *, ids: Sequence[str], dataset: str) -> list[float]:
        """Scores for ``ids`` in order; a clear error lists ids the file lacks."""
        missing = [i for i in ids if i not in self.scores]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise InputError(
                f"The score file {self.path!r} (column {self.column!r}) has no score for {len(missing)} of the "
                f"{len(ids)} rows of dataset {dataset!r}: ids {shown}. Expected one row per benchmark id; "
                "add the missing ids or benchmark only the datasets the file covers."
            )
        return [self.scores[i] for i in ids]

    def describe(self) -> dict[str, Any]:
        return {"model": None, "revision": None, "method": "external", "file": self.path, "file_sha256": self.file_sha256,
                "column": self.column, "parameters": None, "model_calls_per_example": None}


def load_external_scores(*, path: str | Path) -> list[ExternalScores]:
    """Read a score file: columns ``id, score`` or ``id`` plus named score columns.

    A single ``score`` column is named after the file stem; other numeric
    columns keep their own names. Every score must be a finite number.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t5.csv"
    >>> _ = p.write_text("id,score\\na,0.9\\nb,0.1\\n")
    >>> [(s.name, s.scores) for s in load_external_scores(path=p)]
    [('t5', {'a': 0.9, 'b': 0.1})]
    """
    path = Path(path)
    str_path = str(path)
    rows = list(read_records(path))
    if not rows:
        raise InputError(f"The score file {str_path!r} is empty; expected columns id, score.")
    if "id" not in rows[0]:
        raise DataFormatError(f"a score file needs an 'id' column; got columns {sorted(rows[0])}.", path=str_path, row=1)
    ignored = {"id", "dataset", "label", "source", "claim", "context", "grounding", "generated_text", "task", "meta"}
    columns = [c for c in rows[0] if c not in ignored]
    if not columns:
        raise DataFormatError(f"a score file needs a score column next to 'id'; got columns {sorted(rows[0])}.", path=str_path, row=1)
    values: dict[str, dict[str, float]] = {c: {} for c in columns}
    for i, row in enumerate(rows, start=1):
        rid = row.get("id")
        if rid is None or str(rid).strip() == "":
            raise DataFormatError("the 'id' cell is empty.", path=str_path, row=i)
        rid = str(rid)
        for c in columns:
            raw = row.get(c)
            try:
                v = float(raw)  # CSV cells arrive as text
            except (TypeError, ValueError):
                raise DataFormatError(f"column {c!r} must hold numbers; got {raw!r:.40}.", path=str_path, row=i) from None
            if not math.isfinite(v):
                raise DataFormatError(f"column {c!r} is {raw!r}; scores must be finite numbers (no NaN/inf).", path=str_path, row=i)
            if rid in values[c]:
                raise DataFormatError(f"id {rid!r} appears twice; each id needs exactly one score.", path=str_path, row=i)
            values[c][rid] = v
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    stem = path.name.split(".")[0]
    return [
        ExternalScores(name=stem if c == "score" else c, path=str_path, column=c, scores=values[c], file_sha256=digest)
        for c in columns
    ]
