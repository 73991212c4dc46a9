"""Score a pairs file on Ray Data: ``map_batches`` over an actor pool, resumable, with progress.

Each actor loads the model once (its constructor) and then scores *chunks*
of ``chunk_rows`` consecutive input rows. Chunks are cut exactly where
:func:`veridic.scoring_files.score_file` cuts its ``batch_rows`` chunks, and
every chunk is scored whole, even when some of its rows are already in the
output — so a Ray run, a resumed Ray run and the single-process run make
the same scorer calls and write bit-identical verdicts (the NLI backend's
float32 sums depend on which pairs share a padded batch; docs/benchmarks.md).

Resuming: every output row carries ``row_id`` (the input's ``id`` column
when it is present and unique, else ``"<row number>:<hash of the row>"``).
Rows whose ``row_id`` is already in the output are not written again; a
chunk whose rows are all there is not scored at all. Scored chunks are
appended (fsynced) to a ``.partial.jsonl`` checkpoint beside the output (a
crash loses at most the chunk being written; a cut-off last line is dropped
on resume); the output itself — JSONL or Parquet — is written only when the
run completes, to a temp file renamed over it (:mod:`veridic.io._atomic`), so
an earlier output is never left half-written or emptied.

The driver reads the input (veridic's readers, with their row-numbered
errors) and validates every row before any Ray work starts; the model work
is what is distributed.

Local Ray (what the tests do)::

    score_file_ray(input="pairs.jsonl", output="scored.jsonl", actors=2)

An existing cluster (veridic installed on every node; a ``--model``
directory must exist on every node, the embedded model always does)::

    score_file_ray(input=..., output=..., ray_address="ray://head:10001", actors=16)

>>> row_ids([{"source": "s", "claim": "c"}, {"source": "s", "claim": "c"}])[1]
'2:...'
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.errors import ConfigError, InputError, MissingDependencyError
from veridic.io import read_records, record_to_pair, write_records
from veridic.types import _Record

__all__ = ["RayScoreReport", "row_ids", "score_file_ray"]

ROW_ID = "row_id"


@dataclass(frozen=True)
class RayScoreReport(_Record):
    """What a Ray scoring run did."""

    output: str
    rows: int
    written: int
    already_done: int
    chunks: int
    chunks_scored: int
    actors: int
    seconds: float



def _canonical(row: dict[str, Any]) -> str:
    def fix(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        return v

    return json.dumps({k: fix(v) for k, v in row.items()}, sort_keys=True, ensure_ascii=False, default=str)


def row_ids(rows: Sequence[dict[str, Any]]) -> list[str]:
    """A stable id per row: the ``id`` column when every row has a distinct one, else ``"<row number>:<content hash>"``."""
    ids = [r.get("id") for r in rows]
    if ids and all(i is not None and not (isinstance(i, float) and math.isnan(i)) for i in ids):
        s = [str(i) for i in ids]
        if len(set(s)) == len(s):
            return s
    return [f"{n}:{hashlib.sha1(_canonical(r).encode('utf-8', 'surrogatepass')).hexdigest()[:12]}" for n, r in enumerate(rows, start=1)]


def _checkpoint_path(output: Path) -> Path:
    return output.with_name(output.name + ".partial.jsonl")


def _complete_lines(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSONL output (an output left half-written by an older veridic: its cut-off last line is skipped)."""
    rows = []
    with open(path, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                break
            try:
                rows.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"{path} is not a veridic output (a line is not JSON); move it away or pick another --output.") from None
    return rows


def _existing_output(output: Path) -> list[dict[str, Any]]:
    if not output.exists():
        return []
    rows = _complete_lines(output) if output.name.endswith(".jsonl") else list(read_records(output))
    if any(not isinstance(r, dict) or ROW_ID not in r for r in rows):
        raise InputError(f"{output} has rows without {ROW_ID!r}; it was not written by --engine ray, so it cannot be resumed. Move it away.")
    return rows


def _read_done(checkpoint: Path) -> set[str]:
    """Row ids already in a JSONL checkpoint; a cut-off last line (a crash mid-write) is dropped from the file."""
    done: set[str] = set()
    if not checkpoint.exists():
        return done
    good = 0
    with open(checkpoint, "rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                break  # the tail of an interrupted write
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise InputError(f"{checkpoint} is not a veridic output (a line is not JSON); move it away or pick another --output.") from None
            if not isinstance(obj, dict) or ROW_ID not in obj:
                raise InputError(f"{checkpoint} has rows without {ROW_ID!r}; it was not written by --engine ray, so it cannot be resumed. Move it away.")
            done.add(str(obj[ROW_ID]))
            good += len(line)
    if good != checkpoint.stat().st_size:
        with open(checkpoint, "r+b") as fh:
            fh.truncate(good)
    return done


class ChunkScorer:
    """Ray actor: builds the scorer once, then scores one chunk of rows per call."""

    def __init__(self, *, config: dict[str, Any], backend_options: dict[str, Any], threads: int, path: str):
        import torch

        torch.set_num_threads(threads)
        from veridic.config import ScorerConfig
        from veridic.factory import load_scorer

        self.scorer = load_scorer(ScorerConfig(**config), **backend_options)
        self.path = path

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        from veridic.scoring_files import score_rows

        lines = []
        for payload, first in zip(batch["payload"], batch["first_row"]):
            rows = json.loads(payload)
            ids = [r.pop(ROW_ID) for r in rows]
            scored = score_rows(scorer=self.scorer, rows=rows, path=self.path, first_row=int(first))
            lines.append("".join(json.dumps({**r, ROW_ID: i}, ensure_ascii=False) + "\n" for r, i in zip(scored, ids)))
        return {"chunk": batch["chunk"], "lines": lines}


def _init_ray(ray, *, address: str | None, num_cpus: float, object_store_mb: int) -> bool:
    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        # A light local instance: no dashboard, a small object store (pairs and verdicts are small).
        ray.init(num_cpus=max(1, math.ceil(num_cpus)), include_dashboard=False, object_store_memory=object_store_mb << 20, log_to_driver=False)
    return True


def score_file_ray(
    *,
    input: str | Path,
    output: str | Path,
    config: ScorerConfig | str | None = None,
    model: str | None = None,
    backend: str = "auto",
    device: str = "cpu",
    dtype: str = "auto",
    batch_size: int = 32,
    chunk_rows: int = 256,
    actors: int = 2,
    cpus_per_actor: float = 1.0,
    torch_threads: int | None = None,
    ray_address: str | None = None,
    object_store_mb: int = 256,
    resume: bool = True,
    progress: bool = False,
    **options: Any,
) -> RayScoreReport:
    """Score every row of ``input`` into ``output`` (.jsonl or .parquet) with ``actors`` Ray actors.

    Same rows and verdict columns as ``veridic score --input`` (plus
    ``row_id``), in input order. ``resume=False`` refuses to touch an
    existing output. A local Ray instance is started (and stopped) unless
    one is running or ``ray_address`` names a cluster.

    ``torch_threads``: intra-op threads per actor; default: as many as this
    process uses, because the thread count changes float32 summation order
    (~1e-8 on a score) and the default keeps Ray's verdicts bit-identical to
    the single-process run. ``torch_threads=1`` with ``cpus_per_actor=1``
    packs more actors per machine.
    """
    try:
        import ray
        import ray.data
    except ImportError:
        raise MissingDependencyError("ray", extra="ray", purpose="Scoring on Ray (--engine ray)") from None
    if actors < 1 or chunk_rows < 1 or cpus_per_actor <= 0:
        raise ConfigError(f"actors and chunk_rows must be >= 1 and cpus_per_actor > 0; got actors={actors}, chunk_rows={chunk_rows}, cpus_per_actor={cpus_per_actor}.")
    from veridic.config import resolve_config
    from veridic.nli._backend import check_device, check_dtype

    cfg = resolve_config(config, **options)
    check_dtype(dtype, device=check_device(device))
    if torch_threads is None:
        try:
            import torch

            torch_threads = torch.get_num_threads()
        except ImportError:
            torch_threads = 1
    t0 = time.perf_counter()
    input, output = Path(input), Path(output)
    if not output.name.endswith((".jsonl", ".parquet")):
        raise ConfigError(f"--engine ray writes .jsonl or .parquet; got {output.name!r}.")
    from veridic.io._atomic import check_output_path

    check_output_path(output)  # an uncreatable output fails now, not after every chunk was scored
    checkpoint = _checkpoint_path(output)
    if not resume and (output.exists() or checkpoint.exists()):
        raise InputError(f"{output} already exists; pass resume=True (--resume) to continue it, or remove it.")
    rows, ids, done, chunks = _pending_chunks(input, output, checkpoint, chunk_rows=chunk_rows)
    n_chunks = math.ceil(len(rows) / chunk_rows)
    written = 0
    started = False
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(rows), initial=len(done), desc="scoring (ray)", unit="row")
    try:
        if chunks:
            started = _init_ray(ray, address=ray_address, num_cpus=actors * cpus_per_actor, object_store_mb=object_store_mb)
            opts = {"model": model, "backend": backend, "device": device, "dtype": dtype, "batch_size": batch_size}
            scored = _scored_stream(ray, chunks, cfg=cfg, opts=opts, threads=max(1, int(torch_threads)), path=str(input), actors=actors,
                                    cpus_per_actor=cpus_per_actor)
            written = _append_checkpoint(scored, checkpoint, done=done, bar=bar)
        if checkpoint.exists():
            _finish(output, checkpoint, order={i: n for n, i in enumerate(ids)})
    finally:
        if bar is not None:
            bar.close()
        if started:
            ray.shutdown()
    return RayScoreReport(output=str(output), rows=len(rows), written=written, already_done=len(done), chunks=n_chunks,
                          chunks_scored=len(chunks), actors=actors, seconds=round(time.perf_counter() - t0, 3))


def _pending_chunks(input: Path, output: Path, checkpoint: Path, *, chunk_rows: int
                    ) -> tuple[list[dict[str, Any]], list[str], set[str], list[dict[str, Any]]]:
    """The input rows (every one checked before any model work), their ids, the ids already scored (checkpoint
    and earlier output), and the chunks still to score, each a JSON payload with its first row number."""
    rows = list(read_records(input))
    if not rows:
        raise InputError(f"{str(input)!r} holds no rows; nothing was scored and {str(output)!r} was not written. Check that the right file was given.")
    for i, r in enumerate(rows, start=1):
        record_to_pair(r, row_number=i, path=str(input))
    ids = row_ids(rows)
    done = _read_done(checkpoint) | {str(r[ROW_ID]) for r in _existing_output(output)}
    chunks = []
    for k, start in enumerate(range(0, len(rows), chunk_rows)):
        cid = ids[start : start + chunk_rows]
        if all(i in done for i in cid):
            continue
        payload = [{**r, ROW_ID: i} for r, i in zip(rows[start : start + chunk_rows], cid)]
        chunks.append({"chunk": k, "first_row": start + 1, "payload": json.dumps(payload, ensure_ascii=False, default=str)})
    return rows, ids, done, chunks


def _scored_stream(ray: Any, chunks: list[dict[str, Any]], *, cfg: ScorerConfig, opts: dict[str, Any], threads: int, path: str,
                   actors: int, cpus_per_actor: float) -> Any:
    """The chunks through a pool of :class:`ChunkScorer` actors, in input order."""
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # output in input order, whatever actor finishes first
    ctx.enable_progress_bars = False  # the driver's own bar counts rows
    ds = ray.data.from_items(chunks, override_num_blocks=len(chunks))
    return ds.map_batches(
        ChunkScorer,
        fn_constructor_kwargs={"config": cfg.to_dict(), "backend_options": opts, "threads": threads, "path": path},
        batch_size=1,
        compute=ray.data.ActorPoolStrategy(size=min(actors, len(chunks))),
        num_cpus=cpus_per_actor,
        batch_format="numpy",
    )


def _append_checkpoint(scored: Any, checkpoint: Path, *, done: set[str], bar: Any) -> int:
    """Append each scored chunk's new rows to the checkpoint, synced to disk chunk by chunk; returns the rows written."""
    written = 0
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    with open(checkpoint, "a", encoding="utf-8") as fh:
        for rec in scored.iter_rows():
            keep = [ln for ln in str(rec["lines"]).splitlines(keepends=True) if json.loads(ln)[ROW_ID] not in done]
            fh.write("".join(keep))
            fh.flush()
            os.fsync(fh.fileno())
            written += len(keep)
            if bar is not None:
                bar.update(len(keep))
    return written


def _finish(output: Path, checkpoint: Path, *, order: dict[str, int]) -> None:
    """Merge the earlier output and the checkpoint into ``output`` (input order, each row once), atomically."""
    rows = _existing_output(output)
    with open(checkpoint, encoding="utf-8") as fh:
        rows += [json.loads(line) for line in fh if line.strip()]
    seen: set[str] = set()
    unique = []
    for r in sorted(rows, key=lambda r: order.get(str(r.get(ROW_ID)), len(order))):
        if str(r[ROW_ID]) not in seen:
            seen.add(str(r[ROW_ID]))
            unique.append(r)
    write_records(output, unique)  # temp file + rename: a failure here keeps the checkpoint and the earlier output
    checkpoint.unlink()
