
import pytest

from veridic.errors import DataFormatError, InputError
from veridic.io import read_records, record_to_pair, write_records


def test_true_csv_columns_are_accepted(tmp_path):
    p = tmp_path / "true.csv"
    p.write_text("grounding,generated_text,label\nThe sky is blue.,The sky is blue.,1\n")
    row = next(read_records(p))
    pair = record_to_pair(row, row_number=1, path=str(p))
    assert pair.source == "The sky is blue." and pair.claim == "The sky is blue."


def test_context_list_is_joined_and_csv_json_context_parsed(tmp_path):
    pair = record_to_pair({"source": "s", "claim": "c", "context": ["hi", "", "there"]})
    assert pair.context == "hi\nthere"
    p = tmp_path / "x.csv"
    write_records(p, [{"source": "s", "claim": "c", "context": ["a", "b"]}])
    row = next(read_records(p))
    assert record_to_pair(row, row_number=1, path=str(p)).context == "a\nb"


@pytest.mark.parametrize(
    "row, match",
    [
        ({"source": "s"}, "missing column 'claim'"),
        ({"source": float("nan"), "claim": "c"}, "null/NaN"),
        ({"source": 3, "claim": "c"}, "must be text"),
        ({"source": "s", "claim": "c", "context": [1]}, "list of strings"),
    ],
)
def test_bad_rows_name_the_row(row, match):
    with pytest.raises(DataFormatError, match=match) as exc:
        record_to_pair(row, row_number=7, path="f.jsonl")
    assert "f.jsonl, row 7" in str(exc.value)


def test_invalid_json_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n{oops}\n')
    with pytest.raises(DataFormatError, match="row 2: invalid JSON"):
        list(read_records(p))


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="Cannot tell the format"):
        list(read_records(tmp_path / "x.xlsx"))
    with pytest.raises(InputError, match="does not exist"):
        list(read_records(tmp_path / "x.jsonl"))


def test_round_trip_jsonl(tmp_path):
    rows = [{"id": "1", "x": "é🙂", "n": 1.5}]
    write_records(tmp_path / "r.jsonl", rows)
    assert list(read_records(tmp_path / "r.jsonl")) == rows
