"""The benchmark report names the default a candidate was measured beside, so that a replaced default is never
shown as the shipped one."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _report_module():
    spec = importlib.util.spec_from_file_location("veridic_bench_report", REPO / "benchmarks" / "report.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _write(folder: Path, revision: str | None) -> None:
    folder.mkdir(parents=True)
    per = {"accuracy_3way": 0.6, "accuracy_2way": 0.8,
           "per_class": {c: {"f1": 0.6} for c in ("entailment", "neutral", "contradiction")}}
    res = {"model": "m", "baseline": "embedded", "heldout": {"n": 10, "n_3way": 8, "majority_3way": 0.4, "default": per, "accurate": per}}
    if revision is not None:
        res["baseline_revision"] = revision
    (folder / "result.json").write_text(json.dumps(res))
    (folder / "meta.json").write_text(json.dumps({"commands": ["python x.py"], "finished": "now", "machine": "m",
                                                  "veridic_version": "0", "wall_seconds": 60}))


def test_a_candidate_measured_beside_a_replaced_default_says_so(tmp_path, monkeypatch):
    report = _report_module()
    monkeypatch.setattr(report, "RESULTS", tmp_path)
    _write(tmp_path / "old", "sha256:0000000000000000")
    _write(tmp_path / "new", report._default_revision())
    old, new = [], []
    report._candidate(old, "old", "candidate", ["## old", ""])
    report._candidate(new, "new", "candidate", ["## new", ""])
    assert any(line.startswith("| earlier default | 60.0") for line in old)
    assert any("measured beside an earlier default model" in line for line in old)
    assert any(line.startswith("| default | 60.0") for line in new)
    assert not any("earlier default" in line for line in new)


def test_a_measurement_note_is_shown_under_its_commands_and_absent_otherwise():
    report = _report_module()
    meta = {"commands": ["python x.py"], "finished": "now", "machine": "m", "veridic_version": "0", "wall_seconds": 60}
    assert not any(line.startswith("Note:") for line in report._commands(meta))
    lines = report._commands({**meta, "note": "cost.json is kept from an earlier run"})
    assert lines[-1] == "Note: cost.json is kept from an earlier run."
