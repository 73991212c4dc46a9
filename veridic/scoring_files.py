"""Score every row of a pairs file and write the rows back with verdict columns.

Rows are validated before any model call, so a bad row stops the run with
its row number and nothing is half-written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veridic.io import read_records, record_to_pair, write_records
from veridic.nli.scorer import Scorer

__all__ = ["score_file", "verdict_columns"]


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


def score_file(*, scorer: Scorer, input: str | Path, output: str | Path, batch_rows: int = 256, progress: bool = False) -> int:
    """Score ``input`` (jsonl/csv/tsv/parquet) into ``output``; returns the number of rows.

    The predicted label goes to ``label``, or to ``label_pred`` when the row
    already has a (gold) ``label`` column, which is kept as it is.
    """
    path = str(input)
    rows = list(read_records(input))
    pairs = [record_to_pair(r, row_number=i, path=path) for i, r in enumerate(rows, start=1)]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(pairs), desc="scoring", unit="row")
    out_rows: list[dict[str, Any]] = []
    try:
        for start in range(0, len(pairs), batch_rows):
            chunk = pairs[start : start + batch_rows]
            verdicts = scorer.score(sources=[p.source for p in chunk], claims=[p.claim for p in chunk], contexts=[p.context for p in chunk])
            for row, v in zip(rows[start : start + batch_rows], verdicts):
                cols = verdict_columns(v)
                if "label" not in row:
                    cols["label"] = cols.pop("label_pred")
                out_rows.append({**row, **cols})
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    return write_records(output, out_rows)
