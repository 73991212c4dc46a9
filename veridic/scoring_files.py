"""Score every row of a pairs file and write the rows back with verdict columns.

Rows are validated before any model call, so a bad row stops the run with
its row number and nothing is half-written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veridic.errors import InputError
from veridic.io import check_output, read_records, record_to_pair, write_records
from veridic.types import Scorer

__all__ = ["score_file", "score_rows", "verdict_columns"]


def verdict_columns(v) -> dict[str, Any]:
    d = v.to_dict()
    return {
        "score": d["score"],
        "e": d["e"],
        "n": d["n"],
        "c": d["c"],
        "uncertainty": d["uncertainty"],
        "label_pred": d["label"],
        "method": d["method"],
        "model": d["model"],
        "sentences": d["sentences"],
    }


def score_rows(*, scorer: Scorer, rows: list[dict[str, Any]], pairs: list | None = None, path: str | None = None, first_row: int = 1) -> list[dict[str, Any]]:
    """Score ``rows`` with one scorer call and return them with the verdict columns added.

    The one place a scored row is built, shared by :func:`score_file` and the
    Ray engine (:mod:`veridic.scale`), so both write the same rows.
    """
    if pairs is None:
        pairs = [record_to_pair(r, row_number=i, path=path) for i, r in enumerate(rows, start=first_row)]
    verdicts = scorer.score(sources=[p.source for p in pairs], claims=[p.claim for p in pairs], contexts=[p.context for p in pairs])
    out: list[dict[str, Any]] = []
    for row, v in zip(rows, verdicts):
        cols = verdict_columns(v)
        if "label" not in row:
            cols["label"] = cols.pop("label_pred")
        out.append({**row, **cols})
    return out


def score_file(*, scorer: Scorer, input: str | Path, output: str | Path, batch_rows: int = 256, progress: bool = False) -> int:
    """Score ``input`` (jsonl/csv/tsv/parquet) into ``output``; returns the number of rows.

    The output path is checked before anything is read, every row is
    validated before the first model call, and the output is written
    atomically (:func:`veridic.io.write_records`), so a failure at any point
    leaves an existing ``output`` as it was. An input without rows is an
    :class:`~veridic.errors.InputError`.

    The predicted label goes to ``label``, or to ``label_pred`` when the row
    already has a (gold) ``label`` column, which is kept as it is.
    """
    check_output(output)  # an unknown suffix or uncreatable path fails now, not after the whole file is scored
    path = str(input)
    rows = list(read_records(input))
    if not rows:
        # an error, not an empty output: the existing output (maybe yesterday's results) is left untouched
        raise InputError(f"{path!r} holds no rows; nothing was scored and {str(output)!r} was not written. Check that the right file was given.")
    pairs = [record_to_pair(r, row_number=i, path=path) for i, r in enumerate(rows, start=1)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pairs), desc="scoring", unit="row")
    out_rows: list[dict[str, Any]] = []
    try:
        for start in range(0, len(pairs), batch_rows):
            chunk = pairs[start : start + batch_rows]
            out_rows.extend(score_rows(scorer=scorer, rows=rows[start : start + batch_rows], pairs=chunk))
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return write_records(output, out_rows)
