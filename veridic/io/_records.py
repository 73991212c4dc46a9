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
from veridic.limits import MAX_SOURCE_CHARS, check_claim, check_text_length
from veridic.types import Pair, is_blank, normalise_context

__all__ = ["read_records", "iter_jsonl", "write_records", "record_to_pair", "check_output", "check_text_length", "csv_safe", "SUPPORTED_SUFFIXES",
           "MAX_SOURCE_CHARS"]

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
    # utf-8-sig: spreadsheet programs save CSV with a byte-order mark, which would otherwise glue itself to the first header.
    if path.name.endswith(".gz"):
        import gzip

        return gzip.open(path, "rt", encoding="utf-8-sig", errors="strict", newline="")
    return open(path, encoding="utf-8-sig", errors="strict", newline="")


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
    kind = "TSV" if delimiter == "\t" else "CSV"
    reader = None
    try:
        with _open_text(path) as fh:
            # strict: an unterminated quote is an error, not a field that swallows the rest of the file
            reader = csv.DictReader(fh, delimiter=delimiter, strict=True)
            header = reader.fieldnames or []
            seen: set[str] = set()
            dupes = sorted({h for h in header if h in seen or seen.add(h)})  # type: ignore[func-returns-value]
            if dupes:
                raise DataFormatError(f"the header names column(s) {dupes} more than once; rename or drop the duplicates (a later column would silently replace an earlier one).",
                                      path=str(path), row=1)
            for i, row in enumerate(reader, start=1):
                if None in row:
                    raise DataFormatError(f"the row has more fields than the header ({len(reader.fieldnames or [])}).", path=str(path), row=i)
                yield dict(row)
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode it as UTF-8.", path=str(path)) from None
    except csv.Error as exc:
        # DictReader.line_num is the last line of the last *good* record; its inner reader's, the last line read.
        line = reader.reader.line_num if reader is not None else 0
        msg = str(exc)
        if "unexpected end of data" in msg:
            start = reader.line_num + 1 if reader is not None else 0
            raise DataFormatError(f"malformed {kind}: a quoted field is never closed (an unterminated '\"' quote in the record that starts on "
                                  f"line {start}; the file ends inside it, at line {line}). "
                                  "Close the quote, and write a quote inside a field as two quotes (\"\").", path=str(path)) from None
        if "expected after" in msg:
            raise DataFormatError(f"malformed {kind} at line {line}: a quote inside a quoted field is not doubled ({msg}). "
                                  "Write a quote inside a field as two quotes (\"\").", path=str(path)) from None
        raise DataFormatError(f"malformed {kind} at line {line} ({msg}); quote fields that hold line breaks.", path=str(path)) from None
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
    for i, row in enumerate(table.to_pylist(), start=1):
        try:
            yield {k: _plain(v) for k, v in row.items()}
        except UnicodeDecodeError as exc:
            # JSONL and CSV refuse such text too: repairing it with U+FFFD would score different words than were written.
            raise DataFormatError(f"a binary column holds bytes that are not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                  "store text as UTF-8 strings.", path=str(path), row=i) from None


def _plain(value: Any) -> Any:
    """A Parquet cell as a JSON value: timestamps/dates/times as ISO 8601 text, decimals as numbers, bytes as UTF-8 text."""
    import datetime as _dt
    from decimal import Decimal

    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A cell a spreadsheet shows as text: strings starting with ``= + - @`` (or tab/CR) get a leading ``'``.

    Generated text and annotators' notes are free text; ``=HYPERLINK(...)``
    in a CSV opened in Excel or LibreOffice would otherwise run as a
    formula (OWASP "CSV injection"). JSONL and Parquet keep the text as is.

    >>> csv_safe("=SUM(A1)"), csv_safe("fine"), csv_safe(3)
    ("'=SUM(A1)", 'fine', 3)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _finite(value: Any) -> Any:
    """NaN / infinity as None (JSON null): bare ``NaN`` is not JSON and breaks strict readers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def check_output(path: str | Path) -> Path:
    """Check an output path before any work: known suffix, creatable, not a folder (see :func:`veridic.io._atomic.check_output_path`)."""
    from veridic.io._atomic import check_output_path

    path = Path(path)
    _format_of(path)
    return check_output_path(path)


def write_records(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows to JSONL / CSV / Parquet (chosen by suffix) atomically; return the count.

    The rows go to a temp file beside ``path`` that replaces it only once
    complete, so a failure leaves an earlier ``path`` as it was; a ``path``
    that is a symbolic link or a read-only file is refused. NaN and
    infinities are written as null. In CSV/TSV a text cell starting with
    ``= + - @`` (or tab/CR) gets a leading ``'`` (:func:`csv_safe`), so a
    spreadsheet shows it as text instead of running it as a formula.
    """
    from veridic.io._atomic import check_replaceable

    path = Path(path)
    fmt = _format_of(path)
    check_replaceable(path)
    rows = [{k: _finite(v) for k, v in r.items()} for r in rows]
    try:
        _write(path, fmt, rows)
    except UnicodeEncodeError as exc:
        raise DataFormatError(f"a value holds text that UTF-8 cannot encode ({exc.reason}); fix the text before writing.", path=str(path)) from None
    except (ValueError, TypeError, NotImplementedError, OverflowError) as exc:
        # pyarrow refuses rows whose columns mix types (ArrowInvalid / ArrowTypeError / ArrowNotImplementedError).
        hint = "write .jsonl, which takes any JSON values" if fmt != "jsonl" else "convert the values to text or numbers first"
        raise DataFormatError(f"the rows cannot be written as {fmt} ({type(exc).__name__}: {str(exc)[:200]}); {hint}. Nothing was written.", path=str(path)) from None
    return len(rows)


def _json_default(value: Any) -> Any:
    plain = _plain(value)
    if plain is value:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return plain


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_json_default)


def _write(path: Path, fmt: str, rows: list[Mapping[str, Any]]) -> None:
    from veridic.io._atomic import atomic_open, atomic_path

    if fmt in ("jsonl", "json"):
        with atomic_open(path, "w", encoding="utf-8") as fh:
            if fmt == "json":
                fh.write(_dumps(list(rows)))
            else:
                for r in rows:
                    fh.write(_dumps(r) + "\n")
    elif fmt in ("csv", "tsv"):
        keys: list[str] = []
        for r in rows:
            keys.extend(k for k in r if k not in keys)
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys, delimiter="\t" if fmt == "tsv" else ",")
            w.writeheader()
            for r in rows:
                w.writerow({k: csv_safe(_dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})
    else:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise MissingDependencyError("pyarrow", extra="io", purpose="Writing Parquet files") from None
        table = pa.Table.from_pylist(rows)
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)


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
    max_source_chars: int | None = None,
) -> Pair:
    """Validate one row of the benchmark schema and turn it into a :class:`Pair`.

    Also accepts TRUE's column names (``grounding``, ``generated_text``).
    A source longer than ``max_source_chars`` (default: the
    ``$VERIDIC_MAX_SOURCE_CHARS`` guard, 2,000,000) is an error.
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
        if is_blank(value):
            raise DataFormatError(f"column {field_name!r} is blank (empty, or only punctuation or invisible characters); veridic does not score text with nothing to check.", path=path, row=row_number)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DataFormatError(f"column {field_name!r} holds an unpaired surrogate (\\u{ord(value[exc.start]):04x} at character {exc.start}); fix the text's encoding.", path=path, row=row_number) from None
    check_text_length(values[source_field], what=f"column {source_field!r}", limit=max_source_chars, path=path, row=row_number)

    try:
        check_claim(values[claim_field], what=f"column {claim_field!r}")
    except InputError as exc:
        raise DataFormatError(str(exc), path=path, row=row_number) from None
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
