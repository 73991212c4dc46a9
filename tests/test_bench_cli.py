"""``veridic bench`` end to end, through a standalone typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from veridic.bench._metrics import roc_auc
from veridic.bench.cli import bench

app = typer.Typer()
app.command()(bench)
runner = CliRunner()


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    src = "The red fox jumped over the lazy dog near the river bank in spring."
    good = ["The red fox jumped over the dog.", "A fox jumped near the river.", "The lazy dog was near the river bank.",
            "The fox jumped in spring.", "A red fox jumped.", "The dog was lazy."]
    bad = ["A blue whale swam across the ocean.", "The cat slept on the sofa all winter.", "Three birds sang at dawn.",
           "The red fox ate a rabbit in town.", "Police arrested the dog owner.", "The river froze in summer."]
    for name in ("alpha", "beta"):
        src = src.replace("spring", "spring " + name)  # distinct rows: a dev split may not repeat evaluated rows
        rows = [{"id": f"{name}-g{i}", "dataset": name, "task": "summarization", "source": src, "context": None, "claim": c, "label": 1, "meta": {}}
                for i, c in enumerate(good)]
        rows += [{"id": f"{name}-b{i}", "dataset": name, "task": "summarization", "source": src, "context": None, "claim": c, "label": 0, "meta": {}}
                 for i, c in enumerate(bad)]
        _write(folder / f"{name}.jsonl", rows)
    return folder


def _invoke(*args: str):
    return runner.invoke(app, list(args))


def test_bench_overlap_end_to_end(data, tmp_path):
    out = tmp_path / "r"
    ids = [json.loads(line)["id"] for f in sorted(data.glob("*.jsonl")) for line in f.read_text().splitlines()]
    scores = tmp_path / "published.csv"
    scores.write_text("id,score\n" + "".join(f"{i},{0.5 if '-g' in i else 0.4}\n" for i in ids), encoding="utf-8")
    r = _invoke("--data", str(data), "--scorer", "overlap", "--scorer", "overlap-bigram", "--scores", str(scores),
                "--compare", "overlap", "published", "--out", str(out), "--cache-dir", str(tmp_path / "c"),
                "--n-resamples", "100", "--trials", "200", "--no-progress")
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "report.json").read_text())
    assert list(rep["results"]) == ["alpha", "beta"]
    assert list(rep["results"]["alpha"]) == ["overlap", "overlap-bigram", "published"]
    block = rep["results"]["alpha"]["overlap"]
    for k in ("auc", "auc_ci_low", "auc_ci_high", "n", "balanced_accuracy", "threshold", "scores"):
        assert k in block
    assert block["n"] == 12 and block["auc_ci_low"] <= block["auc"] <= block["auc_ci_high"]
    assert block["auc"] == pytest.approx(roc_auc(labels=[s["label"] for s in block["scores"]], scores=[s["score"] for s in block["scores"]]))
    assert rep["results"]["alpha"]["published"]["auc"] == 1.0
    assert rep["command"].startswith("veridic bench --data ")
    assert {c["dataset"] for c in rep["comparisons"]} == {"alpha", "beta", "mean"}
    md = (out / "report.md").read_text()
    assert "| alpha | 12 (6) |" in md and "<sub>" in md and "## Cost" in md
    assert (out / "roc_alpha.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and (out / "roc_beta.png").exists()
    # A second run reads every model-free score from the cache.
    r2 = _invoke("--data", str(data), "--scorer", "overlap", "--out", str(tmp_path / "r2"), "--cache-dir", str(tmp_path / "c"),
                 "--n-resamples", "50", "--no-progress")
    assert r2.exit_code == 0, r2.output
    assert json.loads((tmp_path / "r2" / "report.json").read_text())["results"]["alpha"]["overlap"]["timing"] == "cache"


def test_bench_missing_external_id_is_a_clear_error(data, tmp_path):
    scores = tmp_path / "s.csv"
    scores.write_text("id,score\nalpha-g0,0.5\n", encoding="utf-8")
    r = _invoke("--data", str(data), "--scores", str(scores), "--out", str(tmp_path / "r"), "--no-cache", "--no-progress")
    assert r.exit_code == 2
    assert "has no score for 11 of the 12 rows of dataset 'alpha'" in r.output
    assert not (tmp_path / "r" / "report.json").exists()


def test_bench_bad_row_names_the_row(data, tmp_path):
    bad = data / "gamma.jsonl"
    bad.write_text('{"id": "x", "source": "s", "claim": "c", "label": 1}\n{"id": "y", "source": "s", "claim": "c", "label": "maybe"}\n')
    r = _invoke("--data", str(bad), "--scorer", "overlap", "--out", str(tmp_path / "r"), "--no-cache", "--no-progress")
    assert r.exit_code == 2
    assert "gamma.jsonl, row 2: column 'label' must be 0" in r.output


def test_bench_unknown_scorer_fails_before_reading_data(tmp_path):
    r = _invoke("--data", "/nonexistent", "--scorer", "overlapp", "--out", str(tmp_path / "r"), "--no-progress")
    assert r.exit_code == 2 and "Did you mean 'overlap'" in r.output


def _as_split(data: Path, name: str, new: str, tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in (data / f"{name}.jsonl").read_text().splitlines()]
    for r in rows:
        r["dataset"] = new
        if new.endswith("_dev"):
            r["source"] += " (dev copy)"  # dev rows may not repeat reported rows
    return _write(tmp_path / f"{new}.jsonl", rows)


def test_bench_threshold_from_fits_each_dataset_on_its_own_dev_rows(data, tmp_path):
    # beta's rows stand in for alpha's dev split, alpha's for beta's: each reported set uses only the dev set of its name.
    dev_a, dev_b = _as_split(data, "beta", "alpha_dev", tmp_path), _as_split(data, "alpha", "beta_dev", tmp_path)
    test_a, test_b = _as_split(data, "alpha", "alpha_test", tmp_path), _as_split(data, "beta", "beta_test", tmp_path)
    r = _invoke("--data", str(test_a), "--data", str(test_b), "--threshold-from", str(dev_a), "--threshold-from", str(dev_b),
                "--scorer", "overlap", "--output", str(tmp_path / "r"), "--no-cache", "--n-resamples", "50", "--no-progress")
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    for reported, dev in (("alpha_test", "alpha_dev"), ("beta_test", "beta_dev")):
        src = rep["results"][reported]["overlap"]["threshold_source"]
        assert src["kind"] == "dev_split" and src["fit_datasets"] == [dev]
        fit = rep["threshold_fits"]["overlap"][reported]
        assert fit["threshold"] == rep["results"][reported]["overlap"]["threshold"]
        assert {s["dataset"] for s in fit["scores"]} == {dev}


def test_bench_threshold_from_without_dev_rows_for_a_dataset_is_a_clear_error(data, tmp_path):
    r = _invoke("--data", str(data / "alpha.jsonl"), "--threshold-from", str(data / "beta.jsonl"), "--scorer", "overlap",
                "--output", str(tmp_path / "r"), "--no-cache", "--no-progress")
    assert r.exit_code == 2
    assert "no dev rows for the reported dataset(s) 'alpha'" in r.output and "'beta'" in r.output


def test_bench_writes_per_example_scores(data, tmp_path):
    import csv

    r = _invoke("--data", str(data), "--scorer", "overlap,overlap-bigram", "-o", str(tmp_path / "r"), "--no-cache", "--n-resamples", "20", "--no-progress")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((tmp_path / "r" / "scores.csv").open(encoding="utf-8")))
    assert len(rows) == 24 and set(rows[0]) == {"id", "dataset", "label", "overlap", "overlap-bigram"}
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    # The file's scores rank exactly as the report's AUC says.
    alpha = [row for row in rows if row["dataset"] == "alpha"]
    auc = roc_auc(labels=[int(x["label"]) for x in alpha], scores=[float(x["overlap"]) for x in alpha])
    assert auc == pytest.approx(rep["results"]["alpha"]["overlap"]["auc"])


def test_bench_on_invalid_skip_records_the_rows(data, tmp_path):
    rows = [json.loads(line) for line in (data / "alpha.jsonl").read_text().splitlines()]
    rows[2]["source"] = "   "
    rows[5]["label"] = "maybe"
    bad = _write(tmp_path / "alpha.jsonl", rows)
    r = _invoke("--data", str(bad), "--scorer", "overlap", "-o", str(tmp_path / "r"), "--no-cache", "--no-progress")
    assert r.exit_code == 2 and "row 3" in r.output
    r = _invoke("--data", str(bad), "--scorer", "overlap", "-o", str(tmp_path / "r"), "--no-cache", "--no-progress", "--on-invalid", "skip",
                "--n-resamples", "20")
    assert r.exit_code == 0, r.output
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    skipped = rep["datasets"]["alpha"]["skipped"]
    assert skipped["n"] == 2 and [x["id"] for x in skipped["rows"]] == [rows[2]["id"], rows[5]["id"]]
    assert rep["datasets"]["alpha"]["n"] == 10 and "--on-invalid skip" in rep["command"]
    md = (tmp_path / "r" / "report.md").read_text()
    assert "Rows left out (--on-invalid skip)" in md and rows[2]["id"] in md


def test_bench_caches_only_inside_cache_dir(data, tmp_path, monkeypatch):
    from veridic.bench._cache import nli_cache_path

    assert nli_cache_path(score_dir=tmp_path / "c") == tmp_path / "c" / "nli-predictions"
    r = _invoke("--data", str(data), "--scorer", "e-c", "--backend", "dummy", "-o", str(tmp_path / "r"), "--cache-dir", str(tmp_path / "c"),
                "--n-resamples", "20", "--no-progress")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "data", "r"]
    assert (tmp_path / "c" / "nli-predictions").exists()
