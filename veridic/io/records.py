"""Read and write row files (JSONL, CSV, Parquet) with errors that name the row.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "pairs.jsonl"
>>> _ = p.write_text('{"source": "A cat sat.", "claim": "A cat sat."}\\n')
>>> [r["claim"] for r in read_records(p)]
['A cat sat.']
"""

from __future__ import annotations

import csv
import json
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from veridic.errors import DataFormatError, InputError, MissingDependencyError
from veridic.types import Pair, normalise_context

__all__ = ["read_records", "iter_jsonl", "write_records", "record_to_pair", "SUPPORTED_SUFFIXES"]

SUPPORTED_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet")


def _format_of(path: Path) -> str:
    name = path.name.lower()
    for suffix in (".jsonl.gz", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".parquet"):
        if name.endswith(suffix):
            return suffix.lstrip(".").replace(".gz", "").replace("ndjson", "jsonl")
    raise InputError(
        f"Cannot tell the format of {str(path)!r}: expected a file ending in one of "
        f"{', '.join(SUPPORTED_SUFFIXES)} (or .jsonl.gz)."
    )


def read_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """Yield rows of a JSONL / JSON-array / CSV / TSV / Parquet file as dicts.

    Raises :class:`DataFormatError` naming the file and 1-based row for
    undecodable bytes or malformed lines; nothing is skipped silently.
    """
    path = Path(path)
    fmt = _format_of(path)
    if not path.exists():
        raise InputError(f"Input file {str(path)!r} does not exist.")
    if path.is_dir():
        raise InputError(f"{str(path)!r} is a directory; give a file ({', '.join(SUPPORTED_SUFFIXES)}).")
    if fmt == "jsonl":
        yield from (obj for _, obj in iter_jsonl(path))
    elif fmt == "json":
        yield from _read_json_array(path)
    elif fmt in ("csv", "tsv"):
        yield from _read_csv(path, delimiter="\t" if fmt == "tsv" else ",")
    else:
        yield from _read_parquet(path)


def _open_text(path: Path):
    if path.name.endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding="utf-8", errors="strict", newline="")
    return open(path, encoding="utf-8", errors="strict", newline="")


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a .jsonl / .jsonl.gz file.

    Line numbers count blank lines too, so callers' own row checks can name
    the same line a text editor shows.
    """
    path = Path(path)
    with open(path, "rb") as raw:
        opener = raw
        if path.name.endswith(".gz"):
            import gzip

            opener = gzip.open(raw)
        lines = enumerate(opener, start=1)
        while True:
            try:
                i, line = next(lines)
            except StopIteration:
                return
            except (OSError, EOFError, zlib.error) as exc:
                # A corrupt or cut-off .gz file (BadGzipFile is an OSError).
                raise DataFormatError(f"the file is not a readable gzip stream ({exc}); re-compress it or give the plain .jsonl.", path=str(path)) from None
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataFormatError(f"the line is not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode the file as UTF-8.", path=str(path), row=i) from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataFormatError(f"invalid JSON ({exc.msg} at column {exc.colno}).", path=str(path), row=i) from None
            except RecursionError:
                raise DataFormatError("the JSON is nested too deeply to read; rows are flat objects of the benchmark schema.", path=str(path), row=i) from None
            if not isinstance(obj, dict):
                raise DataFormatError(f"expected a JSON object per line, got {type(obj).__name__}.", path=str(path), row=i)
            yield i, obj


def _read_json_array(path: Path) -> Iterator[dict[str, Any]]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start}).", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise DataFormatError(f"invalid JSON ({exc.msg} at line {exc.lineno}).", path=str(path)) from None
    except RecursionError:
        raise DataFormatError("the JSON is nested too deeply to read; a .json input is a flat list of objects.", path=str(path)) from None
    if not isinstance(data, list):
        raise DataFormatError("a .json input must hold a list of objects; use .jsonl for one object per line.", path=str(path))
    for i, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise DataFormatError(f"expected an object, got {type(obj).__name__}.", path=str(path), row=i)
        yield obj


def _read_csv(path: Path, *, delimiter: str) -> Iterator[dict[str, Any]]:
    csv.field_size_limit(1 << 30)
    try:
        with _open_text(path) as fh:
            reader = csv.DictReader(fh, delimiter=delimiter)
            for i, row in enumerate(reader, start=1):
                if None in row:
                    raise DataFormatError(f"the row has more fields than the header ({len(reader.fieldnames or [])}).", path=str(path), row=i)
                yield dict(row)
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode it as UTF-8.", path=str(path)) from None
    except csv.Error as exc:
        raise DataFormatError(f"malformed {'TSV' if delimiter == chr(9) else 'CSV'} ({exc}); quote fields that hold line breaks.", path=str(path)) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"the file could not be read ({exc}).", path=str(path)) from None


def _read_parquet(path: Path) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependencyError("pyarrow", extra="io", purpose="Reading Parquet files") from None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, TypeError, NotImplementedError) as exc:
        # pyarrow.ArrowInvalid / ArrowTypeError derive from ValueError / TypeError.
        raise DataFormatError(f"not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]}).", path=str(path)) from None
    yield from table.to_pylist()


def write_records(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows to JSONL / CSV / Parquet (chosen by suffix); return the count."""
    path = Path(path)
    fmt = _format_of(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    try:
        _write(path, fmt, rows)
    except UnicodeEncodeError as exc:
        raise DataFormatError(f"a value holds text that UTF-8 cannot encode ({exc.reason}); fix the text before writing.", path=str(path)) from None
    except (ValueError, TypeError, NotImplementedError, OverflowError) as exc:
        # pyarrow refuses rows whose columns mix types (ArrowInvalid / ArrowTypeError / ArrowNotImplementedError).
        raise DataFormatError(f"the rows cannot be written as {fmt} ({type(exc).__name__}: {str(exc)[:200]}); write .jsonl, which takes any JSON values.", path=str(path)) from None
    return len(rows)


def _write(path: Path, fmt: str, rows: list[Mapping[str, Any]]) -> None:
    if fmt in ("jsonl", "json"):
        with open(path, "w", encoding="utf-8") as fh:
            if fmt == "json":
                json.dump(list(rows), fh, ensure_ascii=False)
            else:
                for r in rows:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    elif fmt in ("csv", "tsv"):
        keys: list[str] = []
        for r in rows:
            keys.extend(k for k in r if k not in keys)
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys, delimiter="\t" if fmt == "tsv" else ",")
            w.writeheader()
            for r in rows:
                w.writerow({k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v for k, v in r.items()})
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise MissingDependencyError("pyarrow", extra="io", purpose="Writing Parquet files") from None
        pq.write_table(pa.Table.from_pylist(rows), path)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def record_to_pair(
    row: Mapping[str, Any],
    *,
    row_number: int | None = None,
    path: str | None = None,
    source_field: str = "source",
    claim_field: str = "claim",
    context_field: str = "context",
) -> Pair:
    """Validate one row of the benchmark schema and turn it into a :class:`Pair`.

    Also accepts TRUE's column names (``grounding``, ``generated_text``).
    """
    aliases = {source_field: ("grounding", "premise", "document"), claim_field: ("generated_text", "hypothesis", "summary")}
    values: dict[str, Any] = {}
    for field_name in (source_field, claim_field):
        if field_name in row:
            values[field_name] = row[field_name]
            continue
        for alt in aliases[field_name]:
            if alt in row:
                values[field_name] = row[alt]
                break
        else:
            raise DataFormatError(
                f"missing column {field_name!r} (or one of {', '.join(aliases[field_name])}); the row has columns {sorted(row)}.",
                path=path,
                row=row_number,
            )
    for field_name, value in values.items():
        if _is_missing(value):
            raise DataFormatError(f"column {field_name!r} is empty (null/NaN); fill it in or drop the row.", path=path, row=row_number)
        if not isinstance(value, str):
            raise DataFormatError(f"column {field_name!r} must be text, got {type(value).__name__} ({value!r:.60}).", path=path, row=row_number)
        if not value.strip():
            raise DataFormatError(f"column {field_name!r} is blank; veridic does not score empty text.", path=path, row=row_number)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataFormatError(f"column {field_name!r} holds an unpaired surrogate (\\u{ord(value[exc.start]):04x} at character {exc.start}); fix the text's encoding.", path=path, row=row_number) from None
    context = row.get(context_field)
    if isinstance(context, str) and context.startswith("[") and path and path.endswith((".csv", ".tsv")):
        try:
            context = json.loads(context)
        except json.JSONDecodeError:
            pass
    try:
        ctx = normalise_context(context)
    except InputError as exc:
        raise DataFormatError(str(exc), path=path, row=row_number) from None
    rid = row.get("id")
    return Pair(source=values[source_field], claim=values[claim_field], context=ctx, id=None if _is_missing(rid) else str(rid))
