"""One help layout, a summary when scored rows carry gold labels, and a hub id that cannot load failing at once."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("typer")
from typer.testing import CliRunner  # noqa: E402

from veridic.cli import app  # noqa: E402

runner = CliRunner()


@pytest.mark.parametrize("args", [["score"], ["congruity", "score"], ["ablation", "run"], ["detect"], ["synth", "contrast"], ["ais", "report"]])
def test_every_command_prints_the_same_plain_help(args):
    r = runner.invoke(app, [*args, "--help"], terminal_width=80)
    assert r.exit_code == 0, r.output
    assert "Usage: " in r.output and "Options:" in r.output
    assert "╭" not in r.output and "<bool>" not in r.output  # no boxes (which cut long option names), no value on flags


def _rows(path, labelled: bool):
    rows = [("The cat sat on the mat.", "The cat sat.", 1), ("The cat sat on the mat.", "The dog ran away.", 0),
            ("The cat sat on the mat.", "The cat sat on the mat.", 1)]
    path.write_text("".join(json.dumps({"id": str(i), "source": s, "claim": c, **({"label": y} if labelled else {})}) + "\n"
                            for i, (s, c, y) in enumerate(rows)))


def test_scoring_a_labelled_file_prints_accuracy_and_auc(tmp_path):
    _rows(tmp_path / "in.jsonl", labelled=True)
    r = runner.invoke(app, ["score", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--backend", "dummy"])
    assert r.exit_code == 0, r.output
    assert "3 rows with a gold label: accuracy 100.0 % at threshold 0.5, ROC AUC 100.0" in r.output
    out = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [o["label"] for o in out] == [1, 0, 1] and [o["label_pred"] for o in out] == ["supported", "unsupported", "supported"]


def test_an_unlabelled_file_gets_no_summary_and_quiet_prints_nothing(tmp_path):
    _rows(tmp_path / "in.jsonl", labelled=False)
    r = runner.invoke(app, ["score", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--backend", "dummy"])
    assert r.exit_code == 0 and "gold label" not in r.output
    _rows(tmp_path / "lab.jsonl", labelled=True)
    r = runner.invoke(app, ["score", "-i", str(tmp_path / "lab.jsonl"), "-o", str(tmp_path / "o2.jsonl"), "--backend", "dummy", "-q"])
    assert r.exit_code == 0 and "gold label" not in r.output


def test_a_hub_id_that_cannot_load_fails_at_once(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t = time.perf_counter()
    r = runner.invoke(app, ["score", "--model", "nobody/no-such-nli-model", "--source", "a b", "--claim", "a"])
    assert time.perf_counter() - t < 10
    assert r.exit_code == 2
    assert "Could not load NLI model 'nobody/no-such-nli-model' (hub)" in r.output and "HF_HUB_OFFLINE" in r.output


def test_local_models_pass_the_hub_check(tmp_path):
    from veridic.cli_options import check_hub_model
    from veridic.errors import ModelLoadError

    check_hub_model(None)
    check_hub_model("embedded")
    (tmp_path / "m").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        check_hub_model(str(tmp_path / "m"))
