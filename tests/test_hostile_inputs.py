"""Text with nothing to check, and outputs that must not be written silently (library, CLI and service alike)."""

from __future__ import annotations

import csv
import json
import os

import pytest
from typer.testing import CliRunner

import veridic
from veridic import ScorerConfig, build_scorer
from veridic.errors import DataFormatError, InputError
from veridic.io import read_records, write_records
from veridic.types import is_blank

INVISIBLE = ["\ufe0f", "\u034f", "\u180b", "\u2800", "\u3164", "\u00ad", "\ufe0f\u3164\u2800", "a\u0301"[1:] * 3]


@pytest.mark.parametrize("claim", INVISIBLE + ["...", "!?", "\u2014", "\u00ab\u00bb"])
def test_claims_with_nothing_to_check_are_refused(claim):
    assert is_blank(claim)
    with pytest.raises(InputError, match="Pair 0: the claim is empty"):
        veridic.score(sources=["A cat sat on the mat."], claims=[claim], backend="dummy", method="e-c")
    with pytest.raises(InputError, match="the source is empty"):
        veridic.score(sources=[claim], claims=["A cat sat."], backend="dummy", method="e-c")


@pytest.mark.parametrize("text", ["A cat.", "42", "猫", "$", "e\u0301", "\U0001f600"])
def test_text_with_something_to_check_is_not_blank(text):
    assert not is_blank(text)


def test_the_service_refuses_them_too():
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from tests.fakes import FakeNLIBackend
    from veridic.service import create_app

    with TestClient(create_app(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend()))) as c:
        for claim in ("...", "\u3164", "\ufe0f"):
            r = c.post("/v1/score", json={"pairs": [{"source": "...", "claim": claim}]})
            assert r.status_code == 422 and "is empty (or only punctuation or invisible characters" in r.json()["error"]["message"], r.text


# --- outputs ----------------------------------------------------------------------------------------------
def test_csv_output_neutralises_formulas_and_jsonl_keeps_them(tmp_path):
    evil = '=HYPERLINK("http://evil.example","click")'
    rows = [{"claim": evil, "note": "+1+2", "ok": "plain", "score": -0.5}]
    write_records(tmp_path / "x.csv", rows)
    got = next(csv.DictReader((tmp_path / "x.csv").open(encoding="utf-8")))
    assert got["claim"] == "'" + evil and got["note"] == "'+1+2" and got["ok"] == "plain" and got["score"] == "-0.5"
    write_records(tmp_path / "x.jsonl", rows)
    assert json.loads((tmp_path / "x.jsonl").read_text())["claim"] == evil


def test_cli_score_output_csv_has_no_live_formula(tmp_path):
    from veridic.cli import app

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A cat sat.", "claim": '=HYPERLINK("http://evil.example","x")'}) + "\n")
    r = CliRunner().invoke(app, ["score", "--backend", "dummy", "--method", "e-c", "-i", str(inp), "-o", str(tmp_path / "x.csv"), "-q"])
    assert r.exit_code == 0, r.output
    cells = [c for row in csv.reader((tmp_path / "x.csv").open(encoding="utf-8")) for c in row]
    assert not any(c.startswith(("=", "+", "@")) for c in cells), cells


def test_a_symlinked_or_read_only_output_is_refused_and_left_alone(tmp_path):
    from veridic.cli import app

    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"source": "A cat sat.", "claim": "A cat sat."}) + "\n")
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    link = tmp_path / "out.jsonl"
    link.symlink_to(target)
    r = CliRunner().invoke(app, ["score", "--backend", "dummy", "--method", "e-c", "-i", str(inp), "-o", str(link), "-q"])
    assert r.exit_code != 0 and "symbolic link" in r.output
    assert link.is_symlink() and target.read_text() == "keep me"
    ro = tmp_path / "ro.jsonl"
    ro.write_text("old\n")
    ro.chmod(0o444)
    if os.access(ro, os.W_OK):
        pytest.skip("running as a user who may write read-only files (root)")
    with pytest.raises(InputError, match="read-only"):
        write_records(ro, [{"a": 1}])
    assert ro.read_text() == "old\n"


def test_a_read_only_output_is_refused_even_for_root(tmp_path, monkeypatch):
    # root may write anything, so the check is exercised through the access() answer a normal user gets
    import veridic.io._atomic as atomic

    ro = tmp_path / "ro.csv"
    ro.write_text("old\n")
    monkeypatch.setattr(atomic.os, "access", lambda p, mode: not (str(p) == str(ro) and mode & os.W_OK))
    with pytest.raises(InputError, match=r"ro.csv' exists and is read-only"):
        write_records(ro, [{"a": 1}])
    assert ro.read_text() == "old\n"


def test_parquet_binary_text_that_is_not_utf8_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"source": pa.array([b"A cat sat.", b"caf\xe9"], type=pa.binary()), "claim": ["A cat.", "B."]}), path)
    with pytest.raises(DataFormatError, match=r"bad.parquet, row 2: a binary column holds bytes that are not UTF-8"):
        list(read_records(path))
    good = tmp_path / "good.parquet"
    pq.write_table(pa.table({"source": pa.array([b"caf\xc3\xa9"], type=pa.binary()), "claim": ["A."]}), good)
    assert list(read_records(good))[0]["source"] == "café"
