"""scripts/finish_base.py: the accurate tier's selection rule, then pack, commit and score in that order."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture()
def fb(tmp_path, monkeypatch, load_script):
    monkeypatch.setenv("VERIDIC_TRAIN_DIR", str(tmp_path / "train"))
    mod = load_script("finish_base")
    return mod


def _finished(root: Path, base: str, *phases: str) -> None:
    for p in phases:
        (root / f"{base}-{p}").mkdir(parents=True)
        (root / f"{base}-{p}" / "training_summary.json").write_text(json.dumps({"stopped_by": "completed"}))


def test_the_selection_rule_keeps_phase_two_unless_it_loses_more_than_the_tolerance(fb):
    assert fb.select_phase(phase1=0.770, phase2=0.760) == "v2"   # exactly one point below: kept
    assert fb.select_phase(phase1=0.770, phase2=0.7599) == "v1"
    assert fb.select_phase(phase1=0.700, phase2=0.780) == "v2"
    assert fb.select_phase(phase1=0.770, phase2=0.765, tolerance=0.0) == "v1"


def test_nothing_is_packed_or_scored_before_both_phases_have_finished(fb, tmp_path, monkeypatch):
    _finished(tmp_path / "train", "nli-base-l12", "v1")
    (tmp_path / "train" / "nli-base-l12-v2").mkdir()
    (tmp_path / "train" / "nli-base-l12-v2" / "training_summary.json").write_text(json.dumps({"stopped_by": "time_budget"}))
    calls: list[list[str]] = []
    monkeypatch.setattr(fb.Finisher, "run", lambda self, cmd: calls.append(cmd))
    with pytest.raises(SystemExit, match=r"nli-base-l12-v2 lack a completed training_summary.json.*train_base.sh"):
        fb.main(["--out", str(tmp_path / "out")])
    assert calls == []


def test_unfinished_accepts_a_phase_its_budget_ended_with_its_weights_exported_and_records_it(fb, tmp_path, monkeypatch):
    root = tmp_path / "train"
    _finished(root, "nli-base-l12", "v1")
    (root / "nli-base-l12-v2").mkdir(parents=True)
    (root / "nli-base-l12-v2" / "training_summary.json").write_text(json.dumps({"stopped_by": "time_budget", "steps": 900, "planned_steps": 1311}))
    monkeypatch.setattr(fb.Finisher, "run", lambda self, cmd: None)
    with pytest.raises(SystemExit, match="nli-base-l12-v2 lack"):  # stopped on the clock but nothing exported: refused
        fb.main(["--out", str(tmp_path / "out"), "--steps", "select", "--unfinished"])
    (root / "nli-base-l12-v2" / "final").mkdir()

    def fake_run(self, cmd):
        held = Path(cmd[cmd.index("--out") + 1])
        held.mkdir(parents=True)
        (held / "heldout.json").write_text(json.dumps({"default": {"accuracy_3way": 0.770}, "accurate": {"accuracy_3way": 0.772}}))

    monkeypatch.setattr(fb.Finisher, "run", fake_run)
    assert fb.main(["--out", str(tmp_path / "out"), "--steps", "select", "--unfinished"]) == 0
    rec = json.loads((tmp_path / "out" / "selection.json").read_text())
    assert rec["selected"] == "v2" and rec["stopped_by"] == {"v1": "completed", "v2": "time_budget"}
    assert rec["steps"]["v2"] == "900 of 1311"


def test_a_phase_two_that_loses_too_much_ships_phase_one_and_the_steps_run_in_order(fb, tmp_path, monkeypatch):
    root = tmp_path / "train"
    _finished(root, "nli-base-l12", "v1", "v2")
    out = tmp_path / "out"
    calls: list[list[str]] = []

    def fake_run(self, cmd):
        calls.append(cmd)
        if "--steps" in cmd and cmd[cmd.index("--steps") + 1] == "heldout":
            held = Path(cmd[cmd.index("--out") + 1])
            held.mkdir(parents=True)
            (held / "heldout.json").write_text(json.dumps({"default": {"accuracy_3way": 0.781}, "accurate": {"accuracy_3way": 0.765}}))

    monkeypatch.setattr(fb.Finisher, "run", fake_run)
    monkeypatch.setattr(fb, "ROOT", tmp_path)  # the weights folder and git run against a scratch tree
    assert fb.main(["--out", str(out)]) == 0
    sel = json.loads((out / "selection.json").read_text())
    assert (sel["selected"], sel["phase1_accuracy_3way"], sel["phase2_accuracy_3way"]) == ("v1", 0.781, 0.765)
    held_cmd = calls[0]
    assert held_cmd[held_cmd.index("--model") + 1] == str(root / "nli-base-l12-v2" / "final")
    assert held_cmd[held_cmd.index("--baseline") + 1] == str(root / "nli-base-l12-v1" / "final")
    pack = next(c for c in calls if c[1].endswith("ship_model.py"))
    assert pack[pack.index("--run") + 1] == str(root / "nli-base-l12-v1") and "--packed" in pack
    assert pack[pack.index("--dest") + 1] == str(tmp_path / "veridic" / "models" / "veridic-nli-mpnet-base")
    git = [c for c in calls if c[0] == "git"]
    assert [c[1] for c in git] == ["add", "commit"] and git[1][-1] == "veridic/models/veridic-nli-mpnet-base"
    scripts = [Path(c[1]).name for c in calls if c[0] == sys.executable]
    assert scripts == ["accurate_tier.py", "ship_model.py", "accurate_tier.py", "fit_hybrid.py", "binding_suite.py",
                       "precision_tolerance.py"]
    prec = calls[-1]
    assert prec[prec.index("--fp32") + 1] == str(root / "nli-base-l12-v1" / "final")
    # A second run reads the recorded selection back instead of scoring both phases again.
    calls.clear()
    fb.main(["--out", str(out), "--steps", "select"])
    assert calls == []


def test_an_unknown_step_is_refused(fb, capsys):
    with pytest.raises(SystemExit):
        fb.main(["--steps", "select,ship"])
    assert "unknown step(s) ship" in capsys.readouterr().err
