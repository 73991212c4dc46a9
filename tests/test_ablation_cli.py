"""``veridic ablation run | build | generate`` on a tiny random model and tiny files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
typer_testing = pytest.importorskip("typer.testing")

from veridic.ablation.cli import app

ROWS = [
    {"id": "a", "grounding": "Four miners were stuck for 12 days in June.", "ablated_grounding": "Two miners were stuck for 12 days in June.", "context": "Mine.", "target": "Four miners."},
    {"id": "b", "grounding": "Two miners were stuck for 12 days in June.", "ablated_grounding": "Four miners were stuck for 12 days in June.", "context": "Mine.", "target": "Two miners."},
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from test_lm_backend import save_tiny_lm

    return save_tiny_lm(tmp_path_factory.mktemp("tiny-lm"))


def _data(tmp_path: Path) -> Path:
    p = tmp_path / "fa.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return p


def test_run_json(tmp_path, model_dir):
    out = tmp_path / "report.json"
    res = typer_testing.CliRunner().invoke(
        app,
        ["run", "--data", str(_data(tmp_path)), "--model", str(model_dir), "--margins", "0,4.605", "--pmi-alpha", "0.1", "--json", "--n-resamples", "20", "--threads", "1", "--out", str(out)],
    )
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert [r["method"] for r in payload["results"]] == ["lm", "pmi-add@0.1"]
    assert [m["margin"] for m in payload["results"][0]["metrics"]] == [0.0, 4.605]
    assert payload["model"]["model"] == str(model_dir) and payload["n_examples"] == 2
    assert len(json.loads(out.read_text())["examples"]) == 2


def test_run_table_and_errors(tmp_path, model_dir):
    runner = typer_testing.CliRunner()
    res = runner.invoke(app, ["run", "--data", str(_data(tmp_path)), "--model", str(model_dir), "--margins", "log100", "--n-resamples", "10", "--no-progress"])
    assert res.exit_code == 0 and "Factual ablation" in res.output
    bad = runner.invoke(app, ["run", "--data", str(_data(tmp_path)), "--model", str(model_dir), "--margins", "lg100"])
    assert bad.exit_code == 2 and "logN" in bad.output


def test_build_then_generate(tmp_path, model_dir):
    runner = typer_testing.CliRunner()
    src = tmp_path / "src.jsonl"
    src.write_text(json.dumps({"id": "q", "grounding": "The Queen toured Canada in March.", "context": "Tours.", "target": "She toured in March."}) + "\n")
    out = tmp_path / "built.jsonl"
    res = runner.invoke(app, ["build", "--input", str(src), "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and rows[1]["grounding"] == rows[0]["ablated_grounding"]
    gen = runner.invoke(app, ["generate", "--data", str(out), "--example", "q:e0:orig", "--model", str(model_dir), "--alpha", "0,0.5", "--max-new-tokens", "4", "--json"])
    assert gen.exit_code == 0, gen.output
    payload = json.loads(gen.output)
    assert [g["alpha"] for g in payload["generations"]] == [0.0, 0.5]


def test_run_with_nli_baseline(tmp_path, model_dir, tiny_nli_dir):
    res = typer_testing.CliRunner().invoke(
        app,
        ["run", "--data", str(_data(tmp_path)), "--model", str(model_dir), "--margins", "0", "--nli", "--nli-model", str(tiny_nli_dir), "--json", "--n-resamples", "10"],
    )
    assert res.exit_code == 0, res.output
    names = [b["name"] for b in json.loads(res.output)["nli_baseline"]]
    assert names == ["nli-e-c (mean over target sentences)", "nli-e-c (min over target sentences)"]


def test_nli_only_and_nothing_to_run(tmp_path, tiny_nli_dir):
    runner = typer_testing.CliRunner()
    res = runner.invoke(app, ["run", "--data", str(_data(tmp_path)), "--no-lm", "--nli", "--nli-model", str(tiny_nli_dir), "--n-resamples", "10", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "NLI baseline" in res.output and "nli-e-c" in res.output
    bad = runner.invoke(app, ["run", "--data", str(_data(tmp_path)), "--no-lm"])
    assert bad.exit_code == 2 and "--no-lm leaves nothing" in bad.output
