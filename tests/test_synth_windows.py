"""Long NLI premises cut to the windows the scorer reads (veridic.synth._windows, `veridic synth windows`)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veridic.errors import ConfigError, InputError
from veridic.synth._windows import build_window_pairs, lacking_pairs, window_pairs

BODY = ("The council met on Monday evening. Members discussed the parking plan at length. "
        "Several residents spoke against it. The mayor said the budget was tight this year. "
        "After a long debate, the council approved the new library by seven votes to two. "
        "Construction will begin in the spring. The weather was cold.")
HYP = "The council approved the new library."


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def _rows() -> list[dict]:
    return [
        {"premise": BODY, "hypothesis": HYP, "label": "entailment", "source": "toy", "split": "dev", "stance": "agree"},
        {"premise": BODY, "hypothesis": "Residents praised the parking plan.", "label": "neutral", "source": "toy",
         "split": "dev", "stance": "discuss"},
        {"premise": "A short premise.", "hypothesis": "Short.", "label": "neutral", "source": "toy", "split": "dev",
         "stance": "unrelated"},
    ]


def test_long_premise_is_cut_to_the_windows_sharing_the_claims_words():
    out = window_pairs(_rows()[:1], window_sentences=1, top_windows=1, max_chars=120)
    assert out[0]["premise"] == "After a long debate, the council approved the new library by seven votes to two."
    # The offsets point into the original premise, so the cut can be checked against the source text.
    (start, end), = out[0]["windows"]
    assert BODY[start:end] == out[0]["premise"]
    assert out[0]["hypothesis"] == HYP and out[0]["label"] == "entailment" and out[0]["stance"] == "agree"


def test_two_windows_are_joined_in_document_order_and_overlaps_merge():
    out = window_pairs(_rows()[1:2], window_sentences=1, top_windows=2, max_chars=120)
    spans = out[0]["windows"]
    assert spans == sorted(spans) and len(spans) == 2
    assert "parking plan" in out[0]["premise"]
    # Adjacent two-sentence windows overlap by a sentence: their union is one span, not a repeated sentence.
    merged = window_pairs(_rows()[:1], window_sentences=2, top_windows=2, max_chars=250)
    assert len(merged[0]["windows"]) == 1
    assert merged[0]["premise"].count("approved the new library") == 1


def test_short_premises_are_kept_whole_and_unmarked():
    row = _rows()[2]
    assert window_pairs([row], max_chars=100) == [row]


def test_a_window_longer_than_the_limit_falls_back_then_leaves_the_row_out():
    # Two best windows do not fit 90 characters; the best one alone does.
    one = window_pairs(_rows()[:1], window_sentences=1, top_windows=2, max_chars=90)
    assert len(one[0]["windows"]) == 1
    assert window_pairs(_rows()[:1], window_sentences=1, top_windows=2, max_chars=20) == []


def test_bad_settings_are_refused():
    with pytest.raises(ConfigError, match="must be >= 1"):
        window_pairs(_rows(), top_windows=0)


def test_build_is_deterministic_and_counts_what_it_did(tmp_path):
    # A hypothesis whose words are spread over the body: no single window holds half of them.
    spread = {**_rows()[1], "hypothesis": "Residents praised the mayor for the cold weather."}
    _write(tmp_path / "data" / "nli" / "toy.jsonl.gz", [*_rows(), spread])
    kw = {"data_dir": tmp_path / "data", "name": "toy", "exclude": {"stance": ["unrelated"]}, "window_sentences": 1,
          "top_windows": 1, "max_chars": 120}
    a = build_window_pairs(out=tmp_path / "a.jsonl.gz", **kw)
    b = build_window_pairs(out=tmp_path / "b.jsonl.gz", **kw)
    assert (tmp_path / "a.jsonl.gz").read_bytes() == (tmp_path / "b.jsonl.gz").read_bytes()
    assert a["sha256"] == b["sha256"] and len(a["sha256"]) == 16
    assert (a["rows"], a["excluded"], a["written"], a["cut"]) == (4, 1, 3, 3)
    assert a["labels"] == {"entailment": 1, "neutral": 2}
    assert a["cut_with_under_half_of_hypothesis_words"] == 1
    with gzip.open(tmp_path / "a.jsonl.gz", "rt") as fh:
        rows = [json.loads(line) for line in fh]
    assert [r["stance"] for r in rows] == ["agree", "discuss", "discuss"]


def test_missing_set_names_the_expected_path(tmp_path):
    with pytest.raises(InputError, match=r"nli/nope\.jsonl\.gz"):
        build_window_pairs(data_dir=tmp_path, name="nope", out=tmp_path / "o.jsonl.gz")


def test_cli_builds_and_refuses_a_bad_exclude(tmp_path):
    from veridic.synth.cli import app

    _write(tmp_path / "nli" / "toy.jsonl.gz", _rows())
    runner = CliRunner()
    res = runner.invoke(app, ["windows", "toy", "--data", str(tmp_path), "-o", str(tmp_path / "w.jsonl.gz"),
                              "--exclude", "stance=unrelated", "--max-chars", "200"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["written"] == 2
    bad = runner.invoke(app, ["windows", "toy", "--data", str(tmp_path), "-o", str(tmp_path / "x.jsonl.gz"), "--exclude", "stance"])
    assert bad.exit_code == 2 and "FIELD=VALUE" in bad.output


def test_trainer_reads_a_derived_file_by_its_path(tmp_path, monkeypatch):
    from veridic.train._data import build_real_examples
    from veridic.train._loop import config_from_dict

    monkeypatch.setenv("HOME", str(tmp_path))
    out = tmp_path / "corpora" / "toy-windows.jsonl.gz"
    _write(tmp_path / "data" / "nli" / "toy.jsonl.gz", _rows())
    build_window_pairs(data_dir=tmp_path / "data", name="toy", out=out, window_sentences=1, top_windows=1, max_chars=120)
    cfg = config_from_dict({"data": {"sets": {"toy": {"tier": "B", "file": "~/corpora/toy-windows.jsonl.gz"}},
                                     "held_out_fraction": 0.0, "max_premise_chars": 120},
                            "augment": {"phrases": None, "fraction": 0.0}})
    train, held, stats = build_real_examples(cfg.data, cfg.augment, data_dir=tmp_path / "data", seed=0)
    assert stats["toy"]["trained"] == 3 and stats["toy"]["too_long"] == 0 and not held
    assert all(len(e.premise) <= 120 for e in train)


def test_trainer_preflight_finds_a_derived_file_and_names_a_missing_one(tmp_path, monkeypatch):
    from veridic.train._loop import Trainer, config_from_dict

    monkeypatch.setenv("HOME", str(tmp_path))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    _write(tmp_path / "corpora" / "there.jsonl.gz", _rows())
    sets = {"toy": {"tier": "B", "file": "~/corpora/there.jsonl.gz"}}
    ok = Trainer(config=config_from_dict({"model": {"path": str(model)}, "data": {"sets": sets}}), output_dir=tmp_path / "run",
                 data_dir=tmp_path / "data")
    ok._check_inputs()  # the ~ path is expanded, so nothing is missing
    sets["gone"] = {"tier": "B", "file": "~/corpora/gone.jsonl.gz"}
    bad = Trainer(config=config_from_dict({"model": {"path": str(model)}, "data": {"sets": sets}}), output_dir=tmp_path / "run",
                  data_dir=tmp_path / "data")
    with pytest.raises(InputError, match=rf"data\.sets\.gone: {tmp_path}/corpora/gone\.jsonl\.gz"):
        bad._check_inputs()


def test_a_lacking_pair_is_the_best_window_left_once_the_deciding_sentence_is_gone():
    (row,) = lacking_pairs(_rows()[:1], window_sentences=1)
    removed = BODY[row["removed"][0]:row["removed"][1]]
    assert "approved the new library" in removed
    s, e = row["windows"][0]
    assert BODY[s:e] == row["premise"] and "library" not in row["premise"]
    # The window the scorer would keep next: it shares "council" with the hypothesis, so it is about the claim.
    assert "council" in row["premise"].lower()
    assert (row["label"], row["source_label"], row["stance"]) == ("neutral", "entailment", "agree")


def test_windows_never_cross_the_removed_sentence_and_short_or_neutral_rows_give_nothing():
    (row,) = lacking_pairs(_rows()[:1], window_sentences=2)
    r0, r1 = row["removed"]
    s, e = row["windows"][0]
    assert e <= r0 or s >= r1
    assert lacking_pairs(_rows()[1:], window_sentences=1) == []  # a neutral row and a one-sentence premise
    assert lacking_pairs(_rows()[:1], min_sentences=8) == []  # BODY has seven sentences


def test_a_premise_that_repeats_the_fact_elsewhere_is_left_out():
    twice = {**_rows()[0], "premise": BODY + " In short, the council approved the new library."}
    assert lacking_pairs([twice], window_sentences=1) == []
    with pytest.raises(ConfigError, match="min_sentences"):
        lacking_pairs([twice], min_sentences=1)


def test_cli_builds_lacking_pairs(tmp_path):
    from veridic.synth.cli import app

    _write(tmp_path / "nli" / "toy.jsonl.gz", _rows())
    res = CliRunner().invoke(app, ["windows", "toy", "--data", str(tmp_path), "-o", str(tmp_path / "l.jsonl.gz"), "--lacking",
                                   "--window-sentences", "1"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert (summary["written"], summary["labels"], summary["lacking"]) == (1, {"neutral": 1}, True)
    assert summary["left_out"] == 2 and "left_out_too_long" not in summary  # a neutral row and a one-sentence premise
