"""Files: outputs are never lost or half-written; bad input fails early with the real reason."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fakes import FakeNLIBackend
from veridic import ScorerConfig, build_scorer
from veridic.errors import DataFormatError, InputError
from veridic.io import atomic_open, check_output, read_records, record_to_pair, write_records
from veridic.scoring_files import score_file
from veridic.types import is_blank

runner = CliRunner()
ROW = {"source": "The cat sat on the mat.", "claim": "The cat sat."}


def _cli(*args: str):
    from veridic.cli import app

    return runner.invoke(app, list(args))


def _scorer():
    return build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend())


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


# --- defect 3: quadratic time in source length ---------------------------------------------------
class _CountingOffsets(list):
    """A source's token offsets that count every read, so the scorer's text work can be measured without a clock."""

    reads = 0

    def __iter__(self):
        for x in super().__iter__():
            _CountingOffsets.reads += 1
            yield x

    def __getitem__(self, i):
        _CountingOffsets.reads += 1
        return super().__getitem__(i)


def _offset_reads(n_sentences: int) -> int:
    backend = FakeNLIBackend()
    source = " ".join(f"Sentence {i} says the cat number {i} sat on mat {i}." for i in range(n_sentences))
    plain = backend.token_offsets
    backend.token_offsets = lambda text: _CountingOffsets(plain(text)) if text == source else plain(text)
    _CountingOffsets.reads = 0
    build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=backend).score(sources=[source], claims=["The cat sat. A dog ran. The mat was red."])
    return _CountingOffsets.reads


def test_window_building_reads_the_source_offsets_a_linear_number_of_times():
    # Quadratic window building (every window re-reading all the source's token offsets, every claim sentence
    # rebuilding the windows) quadruples the reads when the source doubles, and a 5 MB source never finishes.
    small, large = _offset_reads(150), _offset_reads(300)
    assert small > 0 and large / small < 2.2, (small, large)


# --- defect 4: unwritable output found late ---------------------------------------------------
def test_output_under_a_file_fails_before_any_scoring(tmp_path):
    inp = _jsonl(tmp_path / "in.jsonl", [ROW] * 3)
    backend = FakeNLIBackend()
    with pytest.raises(InputError, match="is a file, not a folder"):
        score_file(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=backend), input=inp, output=inp / "out.jsonl")
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
    assert "starts on line 2" in str(exc.value) and "at line 3" in str(exc.value)  # where the quote opens, not the header


def test_csv_quote_errors_name_the_line_they_are_on(tmp_path):
    p = tmp_path / "in.csv"
    p.write_text('source,claim\nok,fine\nok2,fine2\n"The cat sat.,A cat sat.\nSecond,row\n')
    with pytest.raises(DataFormatError, match=r"starts on line 4; the file ends inside it, at line 5"):
        list(read_records(p))
    p.write_text('source,claim\nok,fine\n"a"b,c\n')  # an undoubled quote inside a quoted field, on line 3
    with pytest.raises(DataFormatError, match=r"at line 3: a quote inside a quoted field is not doubled"):
        list(read_records(p))


def test_source_length_guard(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIDIC_MAX_SOURCE_CHARS", "1000")
    inp = _jsonl(tmp_path / "in.jsonl", [ROW, {"source": "word " * 300, "claim": "A word."}])
    out = tmp_path / "o.jsonl"
    backend = FakeNLIBackend()
    with pytest.raises(DataFormatError, match=r"row 2: .*1,500 characters; the limit is 1,000"):
        score_file(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=backend), input=inp, output=out)
    assert backend.calls == [] and not out.exists()
    monkeypatch.setenv("VERIDIC_MAX_SOURCE_CHARS", "0")  # 0 turns the guard off
    assert score_file(scorer=_scorer(), input=inp, output=out) == 2


def test_default_source_guard_is_two_million():
    from veridic.io import MAX_SOURCE_CHARS

    assert MAX_SOURCE_CHARS == 2_000_000
    record_to_pair({"source": "a" * 2_000_000, "claim": "a"})
    with pytest.raises(DataFormatError, match="2,000,001 characters"):
        record_to_pair({"source": "a" * 2_000_001, "claim": "a"})


# --- the Ray engine writes its output only when complete, atomically --------------------------------
def _no_ray(monkeypatch):
    pytest.importorskip("ray")
    from veridic.scale import _ray_engine as ray_engine

    def refuse(*a, **k):
        raise AssertionError("Ray was started")

    monkeypatch.setattr(ray_engine, "_init_ray", refuse)
    return ray_engine


def test_ray_empty_input_is_an_error_and_the_old_output_survives(tmp_path, monkeypatch):
    ray_engine = _no_ray(monkeypatch)
    (tmp_path / "empty.jsonl").write_text("")
    for name in ("o.jsonl", "o.parquet"):
        out = tmp_path / name
        out.write_bytes(b"OLD\n")
        with pytest.raises(InputError, match="holds no rows"):
            ray_engine.score_file_ray(input=tmp_path / "empty.jsonl", output=out)
        assert out.read_bytes() == b"OLD\n"


def test_ray_output_under_a_file_fails_before_reading_or_ray(tmp_path, monkeypatch):
    ray_engine = _no_ray(monkeypatch)
    inp = _jsonl(tmp_path / "in.jsonl", [ROW] * 3)
    (tmp_path / "file.jsonl").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        ray_engine.score_file_ray(input=inp, output=tmp_path / "file.jsonl" / "out.jsonl")


def _scored_rows(rows):
    from veridic.scale import row_ids
    from veridic.scoring_files import score_rows

    return [{**r, "row_id": i} for r, i in zip(score_rows(scorer=_scorer(), rows=[dict(r) for r in rows]), row_ids(rows))]


def test_ray_output_is_written_whole_from_the_checkpoint(tmp_path, monkeypatch):
    # A run cut off after two of three rows left them in the checkpoint; the output itself was never touched.
    # Resuming (no chunk left to score, so no Ray) merges earlier output + checkpoint in input order, atomically.
    ray_engine = _no_ray(monkeypatch)
    rows = [dict(ROW, id=f"r{i}", claim=f"The cat sat {i} times.") for i in range(3)]
    inp = _jsonl(tmp_path / "in.jsonl", rows)
    scored = _scored_rows(rows)
    out = tmp_path / "out.jsonl"
    _jsonl(out, [scored[1]])  # an earlier (resumable) output
    _jsonl(tmp_path / "out.jsonl.partial.jsonl", [scored[2], scored[0]])
    rep = ray_engine.score_file_ray(input=inp, output=out, chunk_rows=1)
    assert rep.already_done == 3 and rep.chunks_scored == 0
    assert [r["row_id"] for r in read_records(out)] == ["r0", "r1", "r2"]
    assert not (tmp_path / "out.jsonl.partial.jsonl").exists()


def test_ray_failed_final_write_keeps_the_output_and_the_checkpoint(tmp_path, monkeypatch):
    ray_engine = _no_ray(monkeypatch)
    rows = [dict(ROW, id=f"r{i}", claim=f"The cat sat {i} times.") for i in range(2)]
    inp = _jsonl(tmp_path / "in.jsonl", rows)
    scored = _scored_rows(rows)
    scored[1]["meta"] = "text"  # mixed column types: Parquet refuses the rows at the final write
    scored[0]["meta"] = {"k": 1}
    out = tmp_path / "out.parquet"
    ck = _jsonl(tmp_path / "out.parquet.partial.jsonl", scored)
    before = ck.read_bytes()
    with pytest.raises(DataFormatError):
        ray_engine.score_file_ray(input=inp, output=out, chunk_rows=1)
    assert not out.exists() and ck.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


# --- the evidence index is replaced as a whole or not at all ----------------------------------------
def _index(texts):
    from veridic.retrieve import Document, EvidenceIndex

    return EvidenceIndex.build(documents=[Document(doc_id=f"d{i}", text=t) for i, t in enumerate(texts)], encoder=None)


def test_index_save_failure_keeps_the_earlier_index_whole(tmp_path, monkeypatch):
    from veridic.retrieve import EvidenceIndex
    from veridic.retrieve import _index as index_mod

    out = tmp_path / "idx"
    _index(["Paris is in France.", "Rome is in Italy."]).save(out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def disk_full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(index_mod.np, "savez", disk_full)
    with pytest.raises(OSError):
        _index(["Berlin is in Germany."]).save(out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # not index.json/passages.jsonl of the new one
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # no temp folder left behind
    monkeypatch.undo()
    assert [h.doc_id for h in EvidenceIndex.load(out).search(query="Rome", k=1, mode="bm25")] == ["d1"]


def test_index_save_replaces_an_earlier_index(tmp_path):
    from veridic.retrieve import EvidenceIndex

    out = tmp_path / "idx"
    _index(["Paris is in France."]).save(out)
    (out / "dense.npy").write_bytes(b"stale")  # an earlier dense index: the lexical rebuild must not keep it
    _index(["Berlin is in Germany.", "Rome is in Italy."]).save(out)
    assert not (out / "dense.npy").exists() and len(EvidenceIndex.load(out)) == 2


def test_index_output_is_checked_before_any_work(tmp_path, monkeypatch):
    from veridic.retrieve import _index as index_mod
    from veridic.retrieve.cli import app

    corpus = _jsonl(tmp_path / "c.jsonl", [{"id": "a", "text": "Paris is in France."}])
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep me")
    (tmp_path / "afile").write_text("x")

    def no_work(*a, **k):
        raise AssertionError("the corpus was indexed before the output was checked")

    monkeypatch.setattr(index_mod.EvidenceIndex, "build", no_work)
    r = runner.invoke(app, ["build", "--corpus", str(corpus), "--out", str(mine), "--no-dense"])
    assert r.exit_code == 2 and "todo.txt" in r.output and "new or empty folder" in r.output, r.output
    assert (mine / "todo.txt").read_text() == "keep me"
    r = runner.invoke(app, ["build", "--corpus", str(corpus), "--out", str(tmp_path / "afile"), "--no-dense"])
    assert r.exit_code == 2 and "is a file" in r.output, r.output
    r = runner.invoke(app, ["build", "--corpus", str(corpus), "--out", str(tmp_path / "afile" / "idx"), "--no-dense"])
    assert r.exit_code == 2 and "is a file" in r.output, r.output


def test_cli_one_pair_output_is_atomic_and_keeps_the_files_mode(tmp_path, tiny_nli_dir):
    out = tmp_path / "verdict.json"
    out.write_text("OLD")
    out.chmod(0o600)
    (tmp_path / "verdict.json.tmp").write_text("someone else's file")  # the old writer used this fixed name and clobbered it
    r = _cli("score", "--model", str(tiny_nli_dir), "--method", "e-c", "--source", "A cat sat.", "--claim", "A cat sat.", "-o", str(out))
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["method"] == "e-c"
    assert out.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "verdict.json.tmp").read_text() == "someone else's file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdict.json", "verdict.json.tmp"]
