"""Property/fuzz tests of the file readers: whatever bytes a file holds, veridic either reads it
or raises a VeridicError that names the problem — never another exception."""

import gzip
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veridic.errors import DataFormatError, VeridicError
from veridic.io import read_records, record_to_pair, write_records

SUFFIXES = [".jsonl", ".json", ".csv", ".tsv", ".parquet", ".jsonl.gz"]
FUZZ = settings(max_examples=int(os.environ.get("VERIDIC_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

texts = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "   ", "\x00", "\ud800", "a\udfffb", "\u200b", "\ufeff", "NaN", "null", "é" * 5, "\r\n", '"', ",", "\t"]),
)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), texts)
json_values = st.recursive(json_scalars, lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(texts, kids, max_size=3)), max_leaves=8)
rows = st.dictionaries(st.sampled_from(["source", "claim", "context", "id", "label", "grounding", "generated_text", "x"]), json_values, max_size=6)


def _read_all(path):
    """What `veridic score --input` does before scoring: read every row and validate it."""
    out = []
    for i, r in enumerate(read_records(path), start=1):
        out.append(record_to_pair(r, row_number=i, path=str(path)))
    return out


def _only_veridic_errors(path):
    try:
        pairs = _read_all(path)
    except VeridicError as exc:
        assert str(exc), "an error must say something"
        return None
    for p in pairs:  # what was accepted is scorable text
        assert isinstance(p.source, str) and p.source.strip() and isinstance(p.claim, str) and p.claim.strip()
        p.source.encode("utf-8")
        p.claim.encode("utf-8")
    return pairs


@FUZZ
@given(data=st.binary(max_size=400), suffix=st.sampled_from(SUFFIXES))
def test_arbitrary_bytes(tmp_path_factory, data, suffix):
    p = tmp_path_factory.mktemp("fz") / f"in{suffix}"
    p.write_bytes(data)
    _only_veridic_errors(p)


@FUZZ
@given(data=st.binary(max_size=300))
def test_gzip_of_arbitrary_bytes(tmp_path_factory, data):
    p = tmp_path_factory.mktemp("fz") / "in.jsonl.gz"
    p.write_bytes(gzip.compress(data))
    _only_veridic_errors(p)


@FUZZ
@given(objs=st.lists(st.one_of(rows, json_values), max_size=5))
def test_jsonl_of_arbitrary_json(tmp_path_factory, objs):
    p = tmp_path_factory.mktemp("fz") / "in.jsonl"
    # allow_nan writes NaN/Infinity literals, which Python's json reads back as floats.
    p.write_text("".join(json.dumps(o, ensure_ascii=True) + "\n" for o in objs), encoding="utf-8")
    got = _only_veridic_errors(p)
    if got is not None:
        assert len(got) == len(objs)


@FUZZ
@given(rs=st.lists(rows, min_size=1, max_size=4), suffix=st.sampled_from([".csv", ".tsv", ".json", ".parquet"]))
def test_writer_then_reader(tmp_path_factory, rs, suffix):
    p = tmp_path_factory.mktemp("fz") / f"in{suffix}"
    try:
        write_records(p, rs)
    except DataFormatError as exc:
        assert str(p) in str(exc)
        return  # pyarrow cannot hold some mixed-type rows; UTF-8 cannot hold surrogates: refused with a clear error
    _only_veridic_errors(p)


@pytest.mark.parametrize(
    "suffix, data, needle",
    [
        (".jsonl.gz", b"not gzip at all", "gzip"),
        (".jsonl.gz", gzip.compress(b'{"source": "a", "claim": "b"}\n' * 50)[:-20], "gzip"),
        (".parquet", b"PAR1 garbage PAR1", "Parquet"),
        (".jsonl", b"[" * 100_000 + b"\n", "nested too deeply"),
        (".json", b"[" * 100_000, "nested too deeply"),
        (".csv", b'source,claim\na\n', "empty"),
        (".jsonl", b'{"source": "a\\ud800", "claim": "b"}\n', "surrogate"),
        (".jsonl", b'{"source": NaN, "claim": "b"}\n', "null/NaN"),
        (".jsonl", b'{"source": 1e999, "claim": "b"}\n', "must be text"),
        (".jsonl", b'{"source": "a", "claim": "b", "context": {"x": 1}}\n', "context"),
        (".jsonl", b'{"source": "\xff", "claim": "b"}\n', "UTF-8"),
    ],
)
def test_pinned_error_messages(tmp_path, suffix, data, needle):
    p = tmp_path / f"in{suffix}"
    p.write_bytes(data)
    with pytest.raises(VeridicError, match=None) as ei:
        _read_all(p)
    assert needle in str(ei.value), str(ei.value)


def test_directory_and_missing_paths(tmp_path):
    d = tmp_path / "dir.jsonl"
    d.mkdir()
    with pytest.raises(VeridicError, match="is a directory"):
        _read_all(d)
    with pytest.raises(VeridicError, match="does not exist"):
        _read_all(tmp_path / "nope.jsonl")
    with pytest.raises(VeridicError, match="Cannot tell the format"):
        _read_all(tmp_path / "nope.txt")


def test_huge_row_is_read_not_crashed(tmp_path):
    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps({"source": "word " * 400_000, "claim": "a claim."}) + "\n")
    (pair,) = _read_all(p)
    assert len(pair.source) == 2_000_000
    assert not math.isnan(len(pair.claim))
