"""scripts/train_base.sh: one stage of the accurate tier's staged run, for either round, recorded in stages.jsonl."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FAKE = """#!/usr/bin/env bash
# Stands in for `veridic`: records its arguments, then leaves a checkpoint and a finished summary in --output.
echo "$*" >> "$FAKE_LOG"
out=""; prev=""
for a in "$@"; do [ "$prev" = "--output" ] && out="$a"; prev="$a"; done
mkdir -p "$out/checkpoints/checkpoint-12"
echo '{"stopped_by": "%s"}' > "$out/training_summary.json"
"""


def _run(tmp_path: Path, *args: str, base: str | None = None, stop: str = "completed") -> tuple[subprocess.CompletedProcess, list[str]]:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    fake = tmp_path / "veridic"
    fake.write_text(FAKE % stop)
    fake.chmod(0o755)
    env = {**os.environ, "FAKE_LOG": str(tmp_path / "calls"), "VERIDIC_TRAIN_DIR": str(tmp_path / "train"), "VERIDIC_BIN": str(fake)}
    env.pop("BASE", None)
    if base is not None:
        env["BASE"] = base
    res = subprocess.run(["bash", "scripts/train_base.sh", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    calls = (tmp_path / "calls").read_text().splitlines() if (tmp_path / "calls").exists() else []
    return res, calls


def test_the_second_round_runs_its_own_configs_into_its_own_folders(tmp_path):
    res, calls = _run(tmp_path, "30", base="nli-base-l12")
    assert res.returncode == 0, res.stderr
    root = tmp_path / "train"
    assert calls == [f"train nli --config configs/nli-base-l12-v1.yaml --output {root}/nli-base-l12-v1 --max-minutes 30 --resume",
                     f"train nli --config configs/nli-base-l12-v2.yaml --output {root}/nli-base-l12-v2 --max-minutes 30 --resume"]
    stage = json.loads((root / "nli-base-l12-v1" / "stages.jsonl").read_text())
    assert (stage["minutes"], stage["step_before"], stage["step_after"]) == (30, 0, 12)
    assert not (root / "nli-base-v1").exists()


def test_an_unfinished_first_phase_does_not_start_the_second(tmp_path):
    res, calls = _run(tmp_path, "30", stop="time_budget")
    assert res.returncode == 0, res.stderr
    assert calls == [f"train nli --config configs/nli-base-l12-v1.yaml --output {tmp_path}/train/nli-base-l12-v1 --max-minutes 30 --resume"]


def test_the_first_round_is_still_reachable_by_name(tmp_path):
    res, calls = _run(tmp_path, "30", base="nli-base", stop="time_budget")
    assert res.returncode == 0, res.stderr
    assert calls == [f"train nli --config configs/nli-base-v1.yaml --output {tmp_path}/train/nli-base-v1 --max-minutes 30 --resume"]


def test_an_unknown_round_or_phase_is_refused_before_any_training(tmp_path):
    for kwargs, args in (({"base": "nli-base-l24"}, ("30",)), ({}, ("30", "v3"))):
        res, calls = _run(tmp_path, *args, **kwargs)
        assert res.returncode == 2 and calls == []
        assert "no config configs/" in res.stderr and "PHASE is v1, v2 or auto" in res.stderr
