"""Loading and validating benchmark datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from veridic.bench._datasets import load_dataset_file, load_datasets, parse_label, resolve_data_spec
from veridic.errors import ConfigError, DataFormatError, InputError, RegistryError


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _row(i, label=1, **kw):
    return {"id": f"r{i}", "dataset": "toy", "task": "summarization", "source": "The cat sat.", "context": None,
            "claim": f"Claim {i}.", "label": label, "meta": {}} | kw


def test_benchmark_schema_and_true_csv_columns(tmp_path):
    _jsonl(tmp_path / "a.jsonl", [_row(1, 1), _row(2, 0)])
    (tmp_path / "true_set.csv").write_text("grounding,generated_text,label\nA cat.,A cat.,1\nA cat.,A dog.,0\n", encoding="utf-8")
    ds = load_datasets(specs=[str(tmp_path)])
    assert [(d.name, d.n, d.n_pos) for d in ds] == [("toy", 2, 1), ("true_set", 2, 1)]
    assert ds[1].ids == ["true_set-1", "true_set-2"]  # no id column: stem-row
    assert ds[1].examples[1].pair.claim == "A dog."


def test_rows_are_grouped_by_their_dataset_field(tmp_path):
    p = _jsonl(tmp_path / "begin.jsonl", [_row(1, 1, dataset="cmu"), _row(2, 0, dataset="tc"), _row(3, 0, dataset="cmu")])
    assert {d.name: d.n for d in load_dataset_file(path=p)} == {"cmu": 2, "tc": 1}


@pytest.mark.parametrize("bad", ["yes", 2, None, "0.5"])
def test_bad_label_names_the_row(tmp_path, bad):
    p = _jsonl(tmp_path / "bad.jsonl", [_row(1, 1), _row(2, 0), _row(3, bad)])
    with pytest.raises(DataFormatError, match=r"bad\.jsonl, row 3: column 'label' must be 0 \(unfaithful\) or 1") as exc:
        load_dataset_file(path=p)
    assert exc.value.row == 3


def test_labels_accept_strings_and_bools():
    assert [parse_label(v) for v in ("0", "1", " 1", True, False, 0, 1, 1.0)] == [0, 1, 1, 1, 0, 0, 1, 1]


def test_missing_claim_and_label_columns_name_the_row(tmp_path):
    p = _jsonl(tmp_path / "x.jsonl", [_row(1), {"id": "q", "source": "s", "label": 1}])
    with pytest.raises(DataFormatError, match="row 2: missing column 'claim'"):
        load_dataset_file(path=p)
    p = _jsonl(tmp_path / "y.jsonl", [{"id": "q", "source": "s", "claim": "c"}])
    with pytest.raises(DataFormatError, match="row 1: missing column 'label'"):
        load_dataset_file(path=p)


def test_duplicate_ids_are_made_unique_and_reported(tmp_path):
    p = _jsonl(tmp_path / "d.jsonl", [_row(1), _row(1, 0, context="other turn")])
    with pytest.warns(UserWarning, match="duplicate id"):
        (ds,) = load_dataset_file(path=p)
    assert ds.ids == ["r1", "r1#2"]
    assert ds.renamed_ids[0]["row"] == 2 and ds.renamed_ids[0]["original_id"] == "r1"


def test_data_hash_ignores_order_and_labels_but_not_text(tmp_path):
    a = load_dataset_file(path=_jsonl(tmp_path / "a.jsonl", [_row(1, 1), _row(2, 0)]))[0]
    b = load_dataset_file(path=_jsonl(tmp_path / "b.jsonl", [_row(2, 1), _row(1, 1)]))[0]
    c = load_dataset_file(path=_jsonl(tmp_path / "c.jsonl", [_row(1, 1), _row(2, 0, claim="Changed.")]))[0]
    assert a.data_hash == b.data_hash != c.data_hash


def test_unknown_spec_and_absent_group_data_give_clear_errors(tmp_path, monkeypatch):
    with pytest.raises(RegistryError, match="neither an existing file or folder nor a dataset group"):
        resolve_data_spec("no_such_thing")
    monkeypatch.setenv("VERIDIC_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match=r"'dev' dataset group needs .* in '.*nowhere/bench'"):
        resolve_data_spec("dev")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no data files"):
        resolve_data_spec(str(tmp_path / "empty"))


def test_same_dataset_name_from_two_files_is_refused(tmp_path):
    _jsonl(tmp_path / "a.jsonl", [_row(1, 1), _row(2, 0)])
    _jsonl(tmp_path / "b.jsonl", [_row(3, 1), _row(4, 0)])
    with pytest.raises(ConfigError, match="Dataset name 'toy' comes from both"):
        load_datasets(specs=[str(tmp_path)])


def test_dev_group_resolves_to_the_seven_shared_files():
    from veridic.bench._datasets import default_bench_dir

    if not default_bench_dir().is_dir():
        pytest.skip(f"shared data not present at {default_bench_dir()}")
    files = resolve_data_spec("dev")
    assert len(files) == 7 and all(f.suffix == ".jsonl" for f in files)
    assert default_bench_dir() / "tofueval_meetb_dev.jsonl" in files
    assert resolve_data_spec("wice_dev") == [default_bench_dir() / "wice_dev.jsonl"]
