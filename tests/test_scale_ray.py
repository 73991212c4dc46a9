"""`veridic score --engine ray` / score_file_ray on a local Ray instance with a tiny random model."""

import json

import pytest

from veridic import ScorerConfig, build_scorer

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from typer.testing import CliRunner

from veridic.cli import app
from veridic.errors import DataFormatError
from veridic.io import read_records, write_records
from veridic.scale import row_ids, score_file_ray
from veridic.scoring_files import score_file

SOURCES = ["The company hired 200 engineers in 2023. It is in Paris.", "A cat sat on the mat.", "Paris is in France.",
           "The cat sat. The company hired a cat. Engineers sat in Paris."]
CLAIMS = ["The company laid off engineers.", "A cat sat. The mat was red.", "Paris is in Spain.", "The company hired engineers in Paris."]


def _rows(n, with_id=True):
    rows = []
    for i in range(n):
        r = {"source": SOURCES[i % 4], "claim": CLAIMS[(i // 4) % 4], "label": i % 2, "context": None, "meta": {"k": i}}
        if with_id:
            r["id"] = f"r{i}"
        rows.append(r)
    return rows


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 << 20, log_to_driver=False)
    yield
    ray.shutdown()


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "row_id"} for r in rows]


@pytest.mark.slow
def test_ray_matches_single_process_bit_for_bit_and_resumes(local_ray, tiny_nli_dir, tiny_backend, tmp_path):
    inp = tmp_path / "in.jsonl"
    write_records(inp, _rows(23))
    ref = tmp_path / "ref.jsonl"
    score_file(scorer=build_scorer(ScorerConfig(method="e-c"), backend=tiny_backend), input=inp, output=ref, batch_rows=5)
    out = tmp_path / "out.jsonl"
    # float32 as the reference backend: "auto" is bf16 on a CPU with bf16 units, which is close but not identical.
    rep = score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", batch_size=8, chunk_rows=5, actors=2, dtype="float32")
    assert rep.rows == 23 and rep.written == 23 and rep.chunks == 5 and rep.chunks_scored == 5
    got = list(read_records(out))
    assert [g["row_id"] for g in got] == [f"r{i}" for i in range(23)]  # input order
    assert _strip(got) == list(read_records(ref))  # identical verdicts, not just close

    # Simulate a crash: the checkpoint kept 7 rows (a partial chunk) and half a line; the output was never written.
    lines = out.read_text().splitlines(keepends=True)
    out.unlink()
    (tmp_path / "out.jsonl.partial.jsonl").write_text("".join(lines[:7]) + lines[7][:30])
    rep2 = score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", batch_size=8, chunk_rows=5, actors=2, dtype="float32")
    assert rep2.already_done == 7 and rep2.written == 16 and rep2.chunks_scored == 4  # chunk 0 skipped, chunk 1 rescored whole
    assert _strip(list(read_records(out))) == list(read_records(ref))
    rep3 = score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", chunk_rows=5)
    assert rep3.written == 0 and rep3.chunks_scored == 0
    assert not (tmp_path / "out.jsonl.partial.jsonl").exists()


@pytest.mark.slow
def test_an_interrupted_run_leaves_the_earlier_output_untouched(local_ray, tiny_nli_dir, tiny_backend, tmp_path, monkeypatch):
    from veridic.scale import _ray_engine as ray_engine

    rows = _rows(12)
    inp = tmp_path / "in.jsonl"
    write_records(inp, rows)
    out = tmp_path / "out.jsonl"
    earlier = score_file(scorer=build_scorer(ScorerConfig(method="e-c"), backend=tiny_backend), input=inp, output=tmp_path / "ref.jsonl")
    assert earlier == 12
    done = [dict(r, row_id=f"r{i}") for i, r in enumerate(read_records(tmp_path / "ref.jsonl"))][:6]
    write_records(out, done)  # an earlier run's output: 6 of the 12 rows
    before = out.read_bytes()

    def killed(*a, **k):
        raise KeyboardInterrupt  # the run is stopped after scoring, before the output is written

    monkeypatch.setattr(ray_engine, "_finish", killed)
    with pytest.raises(KeyboardInterrupt):
        score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", chunk_rows=2, actors=1)
    assert out.read_bytes() == before  # the earlier output is whole, not appended to in place
    assert len((tmp_path / "out.jsonl.partial.jsonl").read_text().splitlines()) == 6
    monkeypatch.undo()
    rep = score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", chunk_rows=2)  # nothing left to score: no Ray work
    assert rep.already_done == 12 and rep.chunks_scored == 0
    assert [r["row_id"] for r in read_records(out)] == [f"r{i}" for i in range(12)]
    assert not (tmp_path / "out.jsonl.partial.jsonl").exists()


@pytest.mark.slow
def test_parquet_in_and_out_without_ids(local_ray, tiny_nli_dir, tiny_backend, tmp_path):
    inp = tmp_path / "in.parquet"
    rows = _rows(9, with_id=False)
    for r in rows:
        r.pop("meta")
    write_records(inp, rows)
    out = tmp_path / "out.parquet"
    rep = score_file_ray(input=inp, output=out, model=str(tiny_nli_dir), method="e-c", batch_size=8, chunk_rows=4, actors=2, dtype="float32")
    assert rep.written == 9 and not (tmp_path / "out.parquet.partial.jsonl").exists()
    got = list(read_records(out))
    assert [g["row_id"] for g in got] == row_ids(rows)
    ref = tmp_path / "ref.parquet"
    score_file(scorer=build_scorer(ScorerConfig(method="e-c"), backend=tiny_backend), input=inp, output=ref, batch_rows=4)
    assert [g["score"] for g in got] == [r["score"] for r in read_records(ref)]


def test_row_ids_are_stable_and_fall_back_to_content():
    assert row_ids([{"id": 1}, {"id": 2}]) == ["1", "2"]
    dup = row_ids([{"id": 1, "claim": "a"}, {"id": 1, "claim": "b"}])
    assert dup[0].startswith("1:") and dup[1].startswith("2:") and dup[0] != dup[1]
    assert row_ids([{"claim": "a", "x": float("nan")}]) == row_ids([{"x": None, "claim": "a"}])


def test_bad_rows_fail_before_any_ray_work(tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A b.", "claim": "A."}) + "\n" + json.dumps({"source": "A b.", "claim": None}) + "\n")
    with pytest.raises(DataFormatError, match="row 2"):
        score_file_ray(input=inp, output=tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.slow
def test_cli_engine_ray(local_ray, tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    write_records(inp, _rows(6))
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(app, ["score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out),
                                 "--engine", "ray", "--actors", "2"])
    assert r.exit_code == 0, r.output
    assert len(list(read_records(out))) == 6
    r = CliRunner().invoke(app, ["score", "--source", "a", "--claim", "b", "--engine", "ray"])
    assert r.exit_code == 2 and "--engine ray" in r.output
    r = CliRunner().invoke(app, ["score", "--input", str(inp), "--output", str(out), "--engine", "spark"])
    assert r.exit_code == 2 and "'local' or 'ray'" in r.output
