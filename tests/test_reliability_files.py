"""Issue 16, files: outputs are never lost or half-written; bad input fails early with the real reason."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes import FakeNLIBackend
from veridic.errors import DataFormatError, InputError
from veridic.io import atomic_open, check_output, read_records, record_to_pair, write_records
from veridic.nli import NLIScorer
from veridic.scoring_files import score_file
from veridic.types import is_blank

runner = CliRunner()
ROW = {"source": "The cat sat on the mat.", "claim": "The cat sat."}


def _cli(*args: str):
    from veridic.cli import app

    return runner.invoke(app, list(args))


def _scorer() -> NLIScorer:
    return NLIScorer(backend=FakeNLIBackend(), method="e-c")


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- defect 2: outputs written in place -------------------------------------------------------
def test_empty_input_is_an_error_and_the_old_output_survives(tmp_path):
    out = tmp_path / "o.jsonl"
    out.write_text("OLD\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(InputError, match="no rows"):
        score_file(scorer=_scorer(), input=empty, output=out)
    assert out.read_text() == "OLD\n"


def test_cli_empty_input_exits_2_and_keeps_the_old_output(tmp_path, tiny_nli_dir):
    out = tmp_path / "o.jsonl"
    out.write_text("OLD\n")
    (tmp_path / "empty.jsonl").write_text("\n")
    r = _cli("score", "--method", "e-c", "--model", str(tiny_nli_dir), "-i", str(tmp_path / "empty.jsonl"), "-o", str(out))
    assert r.exit_code == 2, r.output
    assert "no rows" in r.output
    assert out.read_text() == "OLD\n"


def test_a_failed_write_leaves_the_earlier_output_and_no_temp_file(tmp_path):
    out = tmp_path / "o.jsonl"
    out.write_text("OLD\n")
    with pytest.raises(RuntimeError):
        with atomic_open(out) as fh:
            fh.write("half")
            raise RuntimeError("disk full")
    assert out.read_text() == "OLD\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.jsonl"]


def test_write_records_goes_through_a_temp_file_and_keeps_permissions(tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("OLD\n")
    os.chmod(out, 0o640)
    write_records(out, [{"a": 1}])
    assert out.read_text().splitlines() == ["a", "1"]
    assert (os.stat(out).st_mode & 0o777) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["o.csv"]


def test_unwritable_rows_leave_the_old_parquet_output(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "o.parquet"
    write_records(out, [{"a": 1}])
    before = out.read_bytes()
    with pytest.raises(DataFormatError, match="Nothing was written"):
        write_records(out, [{"a": 1}, {"a": "text"}])  # mixed column types: pyarrow refuses
    assert out.read_bytes() == before


def test_parquet_timestamp_column_is_scored_and_written(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import datetime as dt

    import pyarrow.parquet as pq

    inp = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{**ROW, "when": dt.datetime(2024, 5, 1, 12, 30)}]), inp)
    out = tmp_path / "o.jsonl"
    out.write_text("OLD\n")
    assert score_file(scorer=_scorer(), input=inp, output=out) == 1
    row = json.loads(out.read_text())
    assert row["when"] == "2024-05-01T12:30:00"
    assert isinstance(row["score"], float)


# --- defect 4: unwritable output found late ---------------------------------------------------
def test_output_under_a_file_fails_before_any_scoring(tmp_path):
    inp = _jsonl(tmp_path / "in.jsonl", [ROW] * 3)
    backend = FakeNLIBackend()
    with pytest.raises(InputError, match="is a file, not a folder"):
        score_file(scorer=NLIScorer(backend=backend, method="e-c"), input=inp, output=inp / "out.jsonl")
    assert backend.calls == []


def test_cli_bad_output_path_fails_before_the_model_loads(tmp_path):
    inp = _jsonl(tmp_path / "in.jsonl", [ROW])
    t0 = time.perf_counter()
    # the model path does not exist: the output check must come first, so the error is about -o
    r = _cli("score", "--model", str(tmp_path / "no-such-model"), "-i", str(inp), "-o", str(inp / "out.jsonl"))
    assert r.exit_code == 2
    assert "is a file, not a folder" in r.output
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("name", ["out.txt", "folder"])
def test_check_output_refuses_unknown_suffix_and_folders(tmp_path, name):
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError):
        check_output(tmp_path / name)


# --- smaller items -----------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["\u200b", "\u200b\u200c\u200d\ufeff", " \u2060\u00ad\t", "\u200e\u200f"])
def test_zero_width_only_text_is_blank(text):
    assert is_blank(text)
    with pytest.raises(DataFormatError, match="blank"):
        record_to_pair({"source": "A cat.", "claim": text}, row_number=1, path="x.jsonl")


def test_zero_width_claim_is_refused_by_the_scorer():
    with pytest.raises(InputError, match="empty"):
        _scorer().score(sources=["The cat sat."], claims=["\u200b\u200b"])
    assert not is_blank("a\u200b")


def test_nan_label_is_written_as_null_not_bare_nan(tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text('{"source": "The cat sat on the mat.", "claim": "The cat sat.", "label": NaN}\n')
    out = tmp_path / "o.jsonl"
    score_file(scorer=_scorer(), input=inp, output=out)
    text = out.read_text()
    assert "NaN" not in text
    assert json.loads(text)["label"] is None


def test_csv_with_a_bom_is_read(tmp_path):
    p = tmp_path / "in.csv"
    p.write_bytes("\ufeffsource,claim\nThe cat sat.,A cat sat.\n".encode())
    assert list(read_records(p)) == [{"source": "The cat sat.", "claim": "A cat sat."}]


def test_duplicate_csv_header_is_an_error(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text("source,claim,claim\nThe cat sat.,A cat sat.,other\n")
    with pytest.raises(DataFormatError, match=r"more than once.*\['claim'\]|\['claim'\].*more than once"):
        list(read_records(p))


def test_unterminated_csv_quote_names_the_quote(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text('source,claim\n"The cat sat.,A cat sat.\nSecond,row\n')
    with pytest.raises(DataFormatError) as exc:
        list(read_records(p))
    assert "unterminated" in str(exc.value) and "empty" not in str(exc.value)


def test_source_length_guard(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIDIC_MAX_SOURCE_CHARS", "1000")
    inp = _jsonl(tmp_path / "in.jsonl", [ROW, {"source": "word " * 300, "claim": "A word."}])
    out = tmp_path / "o.jsonl"
    backend = FakeNLIBackend()
    with pytest.raises(DataFormatError, match=r"row 2: .*1,500 characters; the limit is 1,000"):
        score_file(scorer=NLIScorer(backend=backend, method="e-c"), input=inp, output=out)
    assert backend.calls == [] and not out.exists()
    monkeypatch.setenv("VERIDIC_MAX_SOURCE_CHARS", "0")  # 0 turns the guard off
    assert score_file(scorer=_scorer(), input=inp, output=out) == 2


def test_default_source_guard_is_two_million():
    from veridic.io import MAX_SOURCE_CHARS

    assert MAX_SOURCE_CHARS == 2_000_000
    record_to_pair({"source": "a" * 2_000_000, "claim": "a"})
    with pytest.raises(DataFormatError, match="2,000,001 characters"):
        record_to_pair({"source": "a" * 2_000_001, "claim": "a"})
