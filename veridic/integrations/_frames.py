"""``score_frame``: score every row of a pandas or polars DataFrame, or an Arrow table.

The frame comes back (same kind, rows in the same order) with the columns:

- ``score`` (float; NaN for a row that cannot be judged), ``label``
  (``supported``/``unsupported``/``abstain``/``invalid``; ``label_pred``
  when the frame already has a ``label`` column), ``uncertainty`` (float or
  null: the Monte-Carlo dropout spread, with ``mc_samples``),
- ``evidence``: one record per answer sentence — its offsets ``start``/``end``
  and ``text`` in the claim, its ``score``, ``supported``, and its best
  evidence: ``context`` (the index of the passage when the source cell is a
  list, else 0), ``evidence_start``/``evidence_end`` (offsets in that
  passage) and ``evidence`` (its text),
- ``reason`` (the unsupported sentences and their closest evidence, in words)
  and ``error`` (why a row could not be judged, else null).

``source`` names a column of strings or of lists of strings (retrieved
passages, joined by :func:`veridic.integrations.join_contexts`); ``claim`` a
column of strings; ``context`` an optional column of dialogue history (what
``veridic score`` calls context). Rows go through one scorer
(:class:`veridic.integrations.Judge`) in chunks of ``batch_rows``; the
scores equal ``veridic score --input`` on the same rows.

>>> import pandas as pd
>>> df = pd.DataFrame({"passages": [["Paris is the capital of France."], ["Paris is the capital of France."]],
...                    "answer": ["Paris is the capital of France.", None]})
>>> out = score_frame(df, source="passages", claim="answer", backend="dummy", structure_check=False)
>>> out["label"].tolist(), float(round(out.loc[0, "score"], 2))
(['supported', 'invalid'], 0.74)
>>> out.loc[1, "error"]
'the answer is NaN (a missing value); expected a string to check against its contexts.'
>>> out.loc[0, "evidence"][0]["evidence"]
'Paris is the capital of France.'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.errors import InputError
from veridic.integrations._core import Judge, Judgement, OnInvalid

__all__ = ["score_frame", "OUTPUT_COLUMNS"]

OUTPUT_COLUMNS = ("score", "label", "uncertainty", "evidence", "reason", "error")

#: frames at least this long get a progress bar when ``progress`` is None.
PROGRESS_ROWS = 1000


def _kind(df: Any) -> str:
    mod = type(df).__module__.split(".")[0]
    name = type(df).__name__
    if mod == "pandas" and name == "DataFrame":
        return "pandas"
    if mod == "polars" and name == "DataFrame":
        return "polars"
    if mod == "polars" and name == "LazyFrame":
        raise InputError("score_frame needs rows to score; got a polars LazyFrame. Call .collect() on it first.")
    if mod == "pyarrow" and name in ("Table", "RecordBatch"):
        return "arrow"
    if mod == "ray" and name in ("Dataset", "MaterializedDataset"):
        return "ray"
    raise InputError(f"score_frame takes a pandas or polars DataFrame, a pyarrow Table or a Ray Dataset; got {type(df).__module__}.{name}.")


def _columns(df: Any, kind: str) -> list[str]:
    if kind == "arrow":
        return list(df.schema.names)
    return [str(c) for c in df.columns]


def _values(df: Any, kind: str, col: str) -> list[Any]:
    if kind == "pandas":
        return df[col].tolist()
    if kind == "polars":
        return df.get_column(col).to_list()
    return df.column(col).to_pylist()


def _records(j: Judgement) -> list[dict[str, Any]]:
    out = []
    for s in j.sentences:
        ev = s["evidence"] or {}
        out.append({"start": s["start"], "end": s["end"], "text": s["text"], "score": float(s["score"]), "supported": bool(s["supported"]),
                    "context": ev.get("context"), "evidence_start": ev.get("start"), "evidence_end": ev.get("end"), "evidence": ev.get("text")})
    return out


def score_frame(df: Any, *, source: str, claim: str, context: str | None = None, config: ScorerConfig | str | None = None,
                model: str | Path | None = None, backend: str = "auto", device: str = "cpu", batch_size: int = 32, batch_rows: int = 256,
                on_invalid: OnInvalid = "nan", progress: bool | None = None, prefix: str = "", actors: int = 1, judge: Judge | None = None,
                **options: Any) -> Any:
    """Score each row's ``claim`` against its ``source`` and return the frame with verdict columns (see the module doc).

    ``config``/``options``/``model``/``backend``/``device``/``batch_size``:
    the scorer, as :func:`veridic.score`. ``on_invalid``: ``"nan"`` (a row
    that cannot be judged gets NaN, label ``invalid`` and an ``error``) or
    ``"raise"``. ``progress``: a bar over rows (None: on from
    :data:`PROGRESS_ROWS` rows). ``prefix``: put before every added column
    name (when the frame already has a ``score`` column, say).

    A Ray Dataset comes back as a lazy Dataset with the same columns, scored
    in batches of ``batch_rows`` by ``actors`` actors that each load the
    model once (``ray.data.Dataset.map_batches``). ``judge``: score with
    this :class:`~veridic.integrations.Judge` instead of building one.
    """
    kind = _kind(df)
    if kind == "ray":
        return _ray(df, source=source, claim=claim, context=context, config=config, model=model, backend=backend, device=device,
                    batch_size=batch_size, batch_rows=batch_rows, on_invalid=on_invalid, prefix=prefix, actors=actors, **options)
    cols = _columns(df, kind)
    for flag, col in (("source", source), ("claim", claim), ("context", context)):
        if col is not None and col not in cols:
            raise InputError(f"score_frame: {flag}={col!r} is not a column of the frame; its columns are {cols}.")
    if batch_rows < 1:
        raise InputError(f"batch_rows must be >= 1; got {batch_rows}.")
    names = {c: prefix + c for c in OUTPUT_COLUMNS}
    if not prefix and "label" in cols:
        names["label"] = "label_pred"  # a gold label stays as it is, as in `veridic score --input`
    clash = sorted(set(names.values()) & set(cols))
    if clash:
        raise InputError(f"score_frame would overwrite the frame's column(s) {clash}; pass prefix='veridic_' (or rename them).")
    if judge is None:
        judge = Judge(config=config, model=model, backend=backend, device=device, batch_size=batch_size, on_invalid=on_invalid, **options)
    sources, claims = _values(df, kind, source), _values(df, kind, claim)
    dialogue = _values(df, kind, context) if context is not None else None
    judgements = _run(judge, sources, claims, dialogue, batch_rows=batch_rows,
                      progress=len(claims) >= PROGRESS_ROWS if progress is None else progress)
    columns = {
        names["score"]: [j.score for j in judgements],
        names["label"]: [j.label for j in judgements],
        names["uncertainty"]: [j.uncertainty for j in judgements],
        names["evidence"]: [_records(j) for j in judgements],
        names["reason"]: [None if j.error is not None else j.reason() for j in judgements],
        names["error"]: [j.error for j in judgements],
    }
    return _attach(df, kind, columns, names)


def _run(judge: Judge, sources: list[Any], claims: list[Any], dialogue: list[Any] | None, *, batch_rows: int, progress: bool) -> list[Judgement]:
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(claims), desc="veridic", unit="row")
    out: list[Judgement] = []
    try:
        for start in range(0, len(claims), batch_rows):
            stop = start + batch_rows
            try:
                out.extend(judge.judge(answers=claims[start:stop], contexts=sources[start:stop],
                                       dialogue=None if dialogue is None else [_dialogue(d) for d in dialogue[start:stop]]))
            except InputError as exc:
                if str(exc).startswith("Row "):  # on_invalid="raise": say which row of the frame
                    i, _, rest = str(exc)[4:].partition(": ")
                    raise InputError(f"Row {start + int(i)}: {rest}") from None
                raise
            if bar is not None:
                bar.update(min(stop, len(claims)) - start)
    finally:
        if bar is not None:
            bar.close()
    return out


def _dialogue(d: Any) -> Any:
    if d is None or (isinstance(d, float) and math.isnan(d)):
        return None
    if hasattr(d, "tolist") and not isinstance(d, (str, list, tuple)):
        return d.tolist()
    return d


def _attach(df: Any, kind: str, columns: dict[str, list[Any]], names: dict[str, str]) -> Any:
    if kind == "pandas":
        out = df.copy()
        for name, values in columns.items():
            out[name] = values if name != names["score"] else [float(v) for v in values]
        return out
    if kind == "polars":
        import polars as pl

        ev_type = pl.List(pl.Struct({"start": pl.Int64, "end": pl.Int64, "text": pl.String, "score": pl.Float64, "supported": pl.Boolean,
                                     "context": pl.Int64, "evidence_start": pl.Int64, "evidence_end": pl.Int64, "evidence": pl.String}))
        types = {names["score"]: pl.Float64, names["label"]: pl.String, names["uncertainty"]: pl.Float64, names["evidence"]: ev_type,
                 names["reason"]: pl.String, names["error"]: pl.String}
        return df.with_columns([pl.Series(name, values, dtype=types[name], strict=False) for name, values in columns.items()])
    import pyarrow as pa

    ev_type = pa.list_(pa.struct([("start", pa.int64()), ("end", pa.int64()), ("text", pa.string()), ("score", pa.float64()),
                                  ("supported", pa.bool_()), ("context", pa.int64()), ("evidence_start", pa.int64()),
                                  ("evidence_end", pa.int64()), ("evidence", pa.string())]))
    types = {names["score"]: pa.float64(), names["label"]: pa.string(), names["uncertainty"]: pa.float64(), names["evidence"]: ev_type,
             names["reason"]: pa.string(), names["error"]: pa.string()}
    out = df
    if type(df).__name__ == "RecordBatch":
        out = pa.Table.from_batches([df])
    for name, values in columns.items():
        out = out.append_column(name, pa.array(values, type=types[name]))
    return out


class _RayBatchScorer:
    """Ray actor: builds the judge once (the backend loads once per actor), then scores one pandas batch per call."""

    def __init__(self, *, frame_options: dict[str, Any], judge_options: dict[str, Any]):
        self.frame_options = frame_options
        self.judge = Judge(**judge_options)

    def __call__(self, batch: Any) -> Any:
        return score_frame(batch, judge=self.judge, progress=False, **self.frame_options)


def _ray(ds: Any, *, source: str, claim: str, context: str | None, batch_rows: int, prefix: str, actors: int, **judge_options: Any) -> Any:
    import ray.data

    cols = list(ds.schema().names)
    for flag, col in (("source", source), ("claim", claim), ("context", context)):
        if col is not None and col not in cols:
            raise InputError(f"score_frame: {flag}={col!r} is not a column of the dataset; its columns are {cols}.")
    Judge(**judge_options)  # options checked now, in the driver, before any actor starts
    return ds.map_batches(_RayBatchScorer, batch_format="pandas", batch_size=batch_rows, compute=ray.data.ActorPoolStrategy(size=actors),
                          fn_constructor_kwargs={"frame_options": {"source": source, "claim": claim, "context": context, "prefix": prefix},
                                                 "judge_options": judge_options})
