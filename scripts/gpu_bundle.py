"""Carry one NLI training run to a machine with a GPU that has no network, no veridic data and no spaCy.

Everything a run reads is prepared here and cut into parts small enough for a transfer limit (``--part-mb``, 58 by
default): the NLI sets its config names, the augmentation phrases, its contrast corpora (built here: they need
spaCy), the teacher's soft labels of a distillation run, the backbone's weights (cut in pieces) and the run folder's
other small files. On the GPU machine each part is copied to one folder (``cp -r PART/. $STAGE/``) and ``go.sh``
puts every file where the config expects it, trains with this tree's code, and packs the weights to come back
(``scripts/frozen_split.py``, without frozen word embeddings). Only runtime options change there (they are outside
the config hash), so the data order and the weights are the ones a CPU run would give, up to floating point.

Usage:
    veridic train nli --config CONFIG --output RUN --max-minutes 5   # here, once: builds the corpora the run needs
    python scripts/gpu_bundle.py --config CONFIG --run RUN --out gpu  # gpu/part-1 ... gpu/part-N and gpu/run/go.sh
    # on the GPU machine, from a copy of this repository (each part may travel in its own call):
    mkdir -p /root/stage && cp -r gpu/part-1/. /root/stage/   # ... every part
    bash gpu/run/go.sh /root/stage MINUTES OUT_DIR              # trains, then packs the weights into OUT_DIR
    # back here:
    python scripts/frozen_split.py unpack --src OUT_DIR --backbone BACKBONE_DIR --run NEW_RUN

The parts list their files in ``gpu/run/manifest.json``: each file's place on the GPU machine, relative to the
stage folder (``data/...``) or to the home folder (``~/...``), so paths written as ``~/...`` in a config resolve there
as they do here.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from veridic.io._paths import default_data_dir  # noqa: E402
from veridic.train import load_config  # noqa: E402
from veridic.train._backbones import resolve_backbone_ref  # noqa: E402
from veridic.train._data import run_path  # noqa: E402
from veridic.train._loop import config_hash  # noqa: E402

GO = r"""#!/bin/bash
# Runs on the GPU machine: place the staged files, train with this tree's code, pack the weights (scripts/gpu_bundle.py).
set -euo pipefail
STAGE=${1:?usage: go.sh STAGE_DIR MINUTES OUT_DIR}; MINUTES=${2:?minutes}; DEST=${3:?output folder}
H=$(cd "$(dirname "$0")" && pwd); R=$H
while [ ! -f "$R/scripts/frozen_split.py" ]; do [ "$R" = / ] && { echo "go.sh must lie inside a copy of the repository" >&2; exit 1; }; R=$(dirname "$R"); done
python3 - "$STAGE" "$H/manifest.json" <<'PY'
import hashlib, json, os, shutil, sys
from pathlib import Path
stage, manifest = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
for target, spec in manifest["files"].items():
    dest = Path(os.path.expanduser(target)) if target.startswith("~") else stage / target
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out:
        for piece in spec["pieces"]:
            src = stage / piece
            if not src.exists():
                sys.exit(f"{src} is missing: copy every part of the bundle into {stage} first")
            out.write(src.read_bytes())
    got = hashlib.sha256(dest.read_bytes()).hexdigest()
    if got != spec["sha256"]:
        sys.exit(f"{dest}: sha256 {got[:12]}, expected {spec['sha256'][:12]}; a part arrived damaged or incomplete")
print(f"placed {len(manifest['files'])} files")
PY
RUN=$(python3 -c "import json,os,sys; print(os.path.expanduser(json.load(open(sys.argv[1]))['run']))" "$H/manifest.json")
BACKBONE=$(python3 -c "import json,os,sys; b=json.load(open(sys.argv[1]))['backbone']; print(os.path.expanduser(b) if b.startswith('~') else sys.argv[2] + '/' + b)" "$H/manifest.json" "$STAGE")
CONFIG=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['config'])" "$H/manifest.json")
export PYTHONPATH="$R:$STAGE/site" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
export VERIDIC_DATA="$STAGE/data"
mkdir -p "$DEST"
cd "$R"
python3 - "$CONFIG" "$RUN" "$MINUTES" "$H/manifest.json" > "$DEST/train.log" 2>&1 <<'PY' || { tail -c 6000 "$DEST/train.log"; exit 1; }
import dataclasses, json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
from veridic.train import Trainer, load_config
from veridic.train._loop import config_hash
config, run, minutes, manifest = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.load(open(sys.argv[4]))
cfg = load_config(config)
if config_hash(cfg) != manifest["config_hash"]:
    sys.exit(f"{config} hashes to {config_hash(cfg)} here but {manifest['config_hash']} where the bundle was made")
cfg = dataclasses.replace(cfg, runtime=dataclasses.replace(cfg.runtime, device="auto", reserve_minutes=1.0, num_threads=8,
                                                             checkpoint_minutes=3.0))
print("FINAL", Trainer(config=cfg, output_dir=run, max_minutes=minutes).train(resume=True), flush=True)
PY
grep -a "FINAL\|heldout" "$DEST/train.log" | tail -3
python3 scripts/frozen_split.py pack --run "$RUN" --backbone "$BACKBONE" --out "$DEST"
ls -la "$DEST"
"""


def _add(files: dict[str, dict], target: str, src: Path, parts: list[list[tuple[Path, int, int, str]]], part_bytes: int) -> None:
    """Register ``src`` to be rebuilt at ``target`` there, cut into pieces that fill the parts in order."""
    import hashlib

    size, offset, names = src.stat().st_size, 0, []
    while True:
        room = part_bytes - sum(n for _, _, n, _ in parts[-1])
        if room <= 0 and size - offset > 0:
            parts.append([])
            room = part_bytes
        n = min(room, size - offset)
        name = f"pieces/{len(files):03d}-{len(names):02d}-{src.name}"
        parts[-1].append((src, offset, n, name))
        names.append(name)
        offset += n
        if offset >= size:
            break
    files[target] = {"pieces": names, "sha256": hashlib.sha256(src.read_bytes()).hexdigest(), "bytes": size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, required=True)
    ap.add_argument("--run", type=Path, required=True, help="the run folder (as the config's ~/... paths give it there too)")
    ap.add_argument("--out", type=Path, default=Path("gpu"))
    ap.add_argument("--data", type=Path, default=None, help="shared data folder (default: $VERIDIC_DATA or ../shared/data)")
    ap.add_argument("--part-mb", type=float, default=58.0, help="size of each part (with the repository itself, under a 64 MiB transfer)")
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    data = args.data or default_data_dir()
    run = args.run.expanduser().resolve()
    home = Path.home()
    files: dict[str, dict] = {}
    part_bytes = int(args.part_mb * 1e6)
    parts: list[list[tuple[Path, int, int, str]]] = [[]]

    def home_rel(p: Path) -> str:
        p = p.resolve()
        if not p.is_relative_to(home):
            ap.error(f"{p} lies outside the home folder {home}; the GPU machine can only place it under ~/ "
                     "(move it there and point the config at ~/...)")
        return "~/" + str(p.relative_to(home))

    run_there = home_rel(run)  # the run folder must have the same ~/ path on the GPU machine
    missing = []
    for name in cfg.data.sets:
        f = data / "nli" / f"{name}.jsonl.gz"
        (missing.append(str(f)) if not f.exists() else _add(files, f"data/nli/{f.name}", f, parts, part_bytes))
    if cfg.augment.phrases:
        f = data / cfg.augment.phrases
        (missing.append(str(f)) if not f.exists() else _add(files, f"data/{cfg.augment.phrases}", f, parts, part_bytes))
    if cfg.contrast.enabled:
        for c in [cfg.contrast.corpus, *cfg.contrast.extra_corpora]:
            f = run_path(c, run)
            if not f.exists():
                missing.append(f"{f} (build it here first: veridic train nli --config {args.config} --output {args.run} --max-minutes 5)")
            else:
                _add(files, home_rel(f), f, parts, part_bytes)
    for f in sorted(run.iterdir()) if run.exists() else []:
        if f.is_file() and f.suffix in (".json", ".jsonl", ".gz", ".npy") and home_rel(f) not in files:
            _add(files, home_rel(f), f, parts, part_bytes)  # teacher logits, cached synthetic pairs, logs
    if cfg.distill.enabled:
        teacher = Path(str(cfg.distill.teacher)).expanduser()
        _add(files, home_rel(teacher / "config.json"), teacher / "config.json", parts, part_bytes)  # the labels are cached
    backbone = resolve_backbone_ref(str(cfg.model.path))
    if backbone is None:
        ap.error(f"model.path {cfg.model.path!r}: this script carries registered backbones (backbone:<name>) only")
    backbone = backbone.resolve()
    if backbone.is_relative_to(home) and ".venv" not in backbone.parts and "site-packages" not in backbone.parts:
        there = home_rel(backbone)  # a folder joined from part packages, cached under ~/
    else:
        # inside an installed package: the package's __init__ and the model folder, importable from site/ there
        pkg = next(p for p in backbone.parents if (p / "__init__.py").exists())
        _add(files, f"site/{pkg.name}/__init__.py", pkg / "__init__.py", parts, part_bytes)
        there = f"site/{pkg.name}/{backbone.relative_to(pkg)}"
    for f in sorted(backbone.rglob("*")):
        if f.is_file() and not f.name.startswith(".") and "__pycache__" not in f.parts:
            _add(files, f"{there}/{f.relative_to(backbone)}", f, parts, part_bytes)
    if missing:
        sys.stderr.write("missing here, so the bundle would not train:\n  " + "\n  ".join(missing) + "\n")
        return 1
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    for i, part in enumerate(parts, 1):
        for src, offset, n, name in part:
            dest = out / f"part-{i}" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(src, "rb") as fh:
                fh.seek(offset)
                dest.write_bytes(fh.read(n))
    (out / "run").mkdir(parents=True)
    manifest = {"config": str(args.config), "config_hash": config_hash(cfg), "run": run_there, "backbone": there,
                "files": files}
    (out / "run" / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "run" / "go.sh").write_text(GO)
    (out / "run" / "go.sh").chmod(0o755)
    sizes = [sum(n for _, _, n, _ in p) / 1e6 for p in parts]
    print(json.dumps({"parts": [f"{out}/part-{i}" for i in range(1, len(parts) + 1)], "mb": [round(s, 1) for s in sizes],
                      "files": len(files), "config_hash": manifest["config_hash"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
