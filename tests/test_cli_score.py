import json

import pytest
from typer.testing import CliRunner

from veridic.cli import app

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_score_one_pair_prints_a_json_verdict(tiny_nli_dir):
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--source", "The company hired 200 engineers in 2023.",
             "--claim", "The company laid off engineers in 2023.", "--json")
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    for key in ("score", "e", "n", "c", "uncertainty", "label", "sentences"):
        assert key in v
    ev = v["sentences"][0]["evidence"]
    assert "The company hired 200 engineers in 2023."[ev["start"]:ev["end"]] == ev["text"]


def test_score_reads_source_from_a_file(tiny_nli_dir, tmp_path):
    f = tmp_path / "src.txt"
    f.write_text("Paris is in France.", encoding="utf-8")
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--source", str(f), "--claim", "Paris is in France.", "--json", "--mc-samples", "3")
    assert r.exit_code == 0, r.output
    v = json.loads(r.output)
    assert v["sentences"][0]["evidence"]["text"] == "Paris is in France."
    assert v["uncertainty"] is not None


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_score_a_file_keeps_input_and_adds_columns(tiny_nli_dir, tmp_path, suffix):
    from veridic.io import read_records, write_records

    rows = [
        {"id": "a", "source": "A cat sat on the mat.", "claim": "A cat sat.", "label": 1, "context": None},
        {"id": "b", "source": "Paris is in France.", "claim": "Paris is in Spain.", "label": 0, "context": None},
    ]
    inp = tmp_path / f"in{suffix}"
    write_records(inp, rows)
    out = tmp_path / "out.jsonl"
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out))
    assert r.exit_code == 0, r.output
    got = list(read_records(out))
    assert [g["id"] for g in got] == ["a", "b"]
    for g in got:
        for key in ("score", "e", "n", "c", "uncertainty", "label_pred", "sentences"):
            assert key in g
        assert str(g["label"]) in ("0", "1")  # the gold label is kept


def test_score_file_without_gold_label_writes_label(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A b c.", "claim": "A b."}) + "\n")
    out = tmp_path / "out.jsonl"
    assert _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out)).exit_code == 0
    assert json.loads(out.read_text())["label"] in ("supported", "unsupported")


def test_bad_row_is_named_and_nothing_is_written(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "ok.", "claim": "ok."}) + "\n" + json.dumps({"source": "ok.", "claim": ""}) + "\n")
    out = tmp_path / "out.jsonl"
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(out))
    assert r.exit_code == 2
    assert "row 2" in r.output and "'claim' is blank" in r.output
    assert not out.exists()


def test_non_utf8_file_gets_a_clear_error(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.jsonl"
    inp.write_bytes(b'{"source": "ok.", "claim": "ok."}\n{"source": "caf\xe9", "claim": "x"}\n')
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2 and "row 2" in r.output and "UTF-8" in r.output


def test_missing_column_and_missing_model_errors(tiny_nli_dir, tmp_path):
    inp = tmp_path / "in.csv"
    inp.write_text("premise_text,claim\nA,B\n")
    r = _run("score", "--method", "e-c", "--model", str(tiny_nli_dir), "--input", str(inp), "--output", str(tmp_path / "o.jsonl"))
    assert r.exit_code == 2 and "missing column 'source'" in r.output
    r = _run("score", "--model", str(tmp_path / "nope"), "--source", "a", "--claim", "b")
    assert r.exit_code == 2 and "does not exist" in r.output


def test_usage_errors():
    r = _run("score", "--source", "only a source")
    assert r.exit_code == 2 and "--input FILE" in r.output
