"""Carry NLI training runs to a machine with a GPU that has no network, no veridic data and no spaCy.

Everything the runs read is prepared here and cut into parts small enough for a transfer limit (``--part-mb``, 58 by
default): the NLI sets their configs name, the augmentation phrases, their contrast corpora (built here: they need
spaCy), the teacher's soft labels of a distillation run, the backbone's weights (cut in pieces) and the run folders'
other small files. ``--config``/``--run`` may be given several times: the phases train in that order there, and a
later phase's ``model.path`` must lie in an earlier phase's run folder (it is trained there, never carried).
``--backbone-fp16`` carries the backbone as fp16 compressed with xz (a base-size encoder: 438 MB -> 197 MB, four parts
instead of eight) and rebuilds fp32 weights there; training then starts from weights rounded to fp16 (relative error
below 1e-3), which the run's record must say.

On the GPU machine each part is copied to one folder (``cp -r PART/. $STAGE/``) and ``go.sh`` puts every file where
the configs expect it, trains each phase with this tree's code, and packs the last phase's weights to come back:
without the frozen word embeddings when its config froze them (``scripts/frozen_split.py pack``), else as the
shipping format, int8 rows with fp16 scales (``frozen_split.py pack-int8``), in 15 MB pieces grouped into folders
``return-1``, ``return-2`` ... of at most 66 MB (under a 64 MiB transfer), one per transfer back. It writes ``DONE`` (or ``FAILED``) in its
output folder at the end, so it can run detached while ``fetch.sh`` waits for it in calls of their own.

Usage:
    veridic train nli --config CONFIG --output RUN --max-minutes 5   # here, once: builds the corpora the run needs
    python scripts/gpu_bundle.py --config C1 --run R1 [--config C2 --run R2] [--backbone-fp16] [--fresh] --out gpu
    # on the GPU machine, from a copy of this repository (each part may travel in its own call):
    mkdir -p /root/stage && cp -r gpu/part-1/. /root/stage/   # ... every part
    setsid nohup bash gpu/run/go.sh /root/stage MINUTES OUT_DIR > /root/go.log 2>&1 &   # each phase gets MINUTES
    bash gpu/run/fetch.sh OUT_DIR 1 540   # waits up to 540 s for the end, then copies return-1 into $OUT; then 2, ...
    # back here:
    python scripts/frozen_split.py unpack-int8 --src FETCHED_DIR --run NEW_RUN    # or `unpack` for a frozen run

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
# Runs on the GPU machine: place the staged files, train each phase with this tree's code, pack the last phase's
# weights (scripts/gpu_bundle.py). Writes DONE or FAILED into OUT_DIR at the end.
set -euo pipefail
STAGE=${1:?usage: go.sh STAGE_DIR MINUTES OUT_DIR}; MINUTES=${2:?minutes}; DEST=${3:?output folder}
H=$(cd "$(dirname "$0")" && pwd); R=$H
while [ ! -f "$R/scripts/frozen_split.py" ]; do [ "$R" = / ] && { echo "go.sh must lie inside a copy of the repository" >&2; exit 1; }; R=$(dirname "$R"); done
mkdir -p "$DEST"; rm -f "$DEST/DONE" "$DEST/FAILED"
trap '[ -f "$DEST/DONE" ] || touch "$DEST/FAILED"' EXIT
python3 - "$STAGE" "$H/manifest.json" <<'PY'
import hashlib, json, lzma, os, sys
from pathlib import Path
stage, manifest = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
for target, spec in manifest["files"].items():
    dest = Path(os.path.expanduser(target)) if target.startswith("~") else stage / target
    dest.parent.mkdir(parents=True, exist_ok=True)
    joined = dest.with_name(dest.name + ".joined") if spec.get("transform") else dest
    with open(joined, "wb") as out:
        for piece in spec["pieces"]:
            src = stage / piece
            if not src.exists():
                sys.exit(f"{src} is missing: copy every part of the bundle into {stage} first")
            out.write(src.read_bytes())
    got = hashlib.sha256(joined.read_bytes()).hexdigest()
    if got != spec["sha256"]:
        sys.exit(f"{joined}: sha256 {got[:12]}, expected {spec['sha256'][:12]}; a part arrived damaged or incomplete")
    if spec.get("transform") == "fp16-xz":  # fp16 weights compressed here; the trainer loads fp32
        import torch
        from safetensors.torch import load, save_file
        sd = load(lzma.decompress(joined.read_bytes()))
        save_file({k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in sd.items()}, str(dest),
                  metadata={"format": "pt"})
        joined.unlink()
print(f"placed {len(manifest['files'])} files")
PY
export PYTHONPATH="$R:$STAGE/site" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
export VERIDIC_DATA="$STAGE/data"
cd "$R"
N=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['phases']))" "$H/manifest.json")
for i in $(seq 0 $((N - 1))); do
  python3 - "$H/manifest.json" "$i" "$MINUTES" > "$DEST/train-$((i + 1)).log" 2>&1 <<'PY' || { tail -c 6000 "$DEST/train-$((i + 1)).log"; exit 1; }
import dataclasses, json, logging, os, sys
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
import veridic.train._backbones as backbones
backbones.find_parts = lambda archive: []  # a joined backbone is placed in the cache with its marker; no part packages here
from veridic.train import Trainer, load_config
from veridic.train._loop import config_hash
manifest, i, minutes = json.load(open(sys.argv[1])), int(sys.argv[2]), float(sys.argv[3])
phase = manifest["phases"][i]
cfg = load_config(phase["config"])
if config_hash(cfg) != phase["config_hash"]:
    sys.exit(f"{phase['config']} hashes to {config_hash(cfg)} here but {phase['config_hash']} where the bundle was made")
# no checkpoint inside a phase: none can leave the lent machine (the optimiser state is too large), and writing one
# costs seconds a lease does not have; a phase stopped by MINUTES still exports final/
cfg = dataclasses.replace(cfg, runtime=dataclasses.replace(cfg.runtime, device="auto", reserve_minutes=1.0, num_threads=8,
                                                             checkpoint_minutes=60.0, progress=False))
print("FINAL", Trainer(config=cfg, output_dir=os.path.expanduser(phase["run"]), max_minutes=minutes).train(resume=True), flush=True)
PY
  grep -a "FINAL" "$DEST/train-$((i + 1)).log" | tail -1
done
RUN=$(python3 -c "import json,os,sys; print(os.path.expanduser(json.load(open(sys.argv[1]))['run']))" "$H/manifest.json")
if [ "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['return'])" "$H/manifest.json")" = frozen ]; then
  BACKBONE=$(python3 -c "import json,os,sys; b=json.load(open(sys.argv[1]))['backbone']; print(os.path.expanduser(b) if b.startswith('~') else sys.argv[2] + '/' + b)" "$H/manifest.json" "$STAGE")
  python3 scripts/frozen_split.py pack --run "$RUN" --backbone "$BACKBONE" --out "$DEST/return-1"
else
  python3 scripts/frozen_split.py pack-int8 --run "$RUN" --out "$DEST"
fi
ls -la "$DEST"/return-*
touch "$DEST/DONE"
"""

FETCH = r"""#!/bin/bash
# fetch.sh OUT_DIR N [SECONDS]: wait (at most SECONDS, default 540) for go.sh to finish, show the logs' ends, then
# copy OUT_DIR/return-N into $OUT (the folder a lent machine sends back), or name what is there.
DEST=${1:?usage: fetch.sh OUT_DIR N [SECONDS]}; N=${2:?which return folder}; T=${3:-540}; s=0
while [ ! -f "$DEST/DONE" ] && [ ! -f "$DEST/FAILED" ] && [ "$s" -lt "$T" ]; do sleep 1; s=$((s + 1)); done
for f in "$DEST"/train-*.log; do [ -f "$f" ] && { echo "== $f"; grep -a "INFO\|Error\|FINAL" "$f" | tail -4 | cut -c1-300; }; done
if [ -f "$DEST/FAILED" ]; then echo "go.sh failed; its log holds why"; exit 1; fi
if [ ! -f "$DEST/DONE" ]; then echo "still training after ${T}s; call again"; exit 3; fi
ls -la "$DEST/return-$N"
if [ -n "${OUT:-}" ]; then cp "$DEST/return-$N"/* "$OUT"/; fi
"""


def _fp16_xz(src: Path, dest: Path) -> Path:
    """``src`` (safetensors) with its float tensors in fp16, compressed with xz: about 45 % of the fp32 size."""
    import lzma

    import torch
    from safetensors.torch import load_file, save

    sd = load_file(str(src))
    blob = save({k: (v.to(torch.float16) if v.is_floating_point() else v).contiguous() for k, v in sd.items()})
    dest.write_bytes(lzma.compress(blob, preset=6))
    return dest


def _add(files: dict[str, dict], target: str, src: Path, parts: list[list[tuple[Path, int, int, str]]], part_bytes: int,
         **extra: str) -> None:
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
    files[target] = {"pieces": names, "sha256": hashlib.sha256(src.read_bytes()).hexdigest(), "bytes": size, **extra}


# Hidden files carried with a backbone: the marker that tells the trainer a joined backbone is complete.
_KEEP_HIDDEN = {".veridic-backbone.json"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, action="append", required=True, help="a phase's config (repeat for later phases)")
    ap.add_argument("--run", type=Path, action="append", required=True,
                    help="its run folder, one per --config (as the configs' ~/... paths give it there too)")
    ap.add_argument("--out", type=Path, default=Path("gpu"))
    ap.add_argument("--data", type=Path, default=None, help="shared data folder (default: $VERIDIC_DATA or ../shared/data)")
    ap.add_argument("--part-mb", type=float, default=58.0, help="size of each part (with the repository itself, under a 64 MiB transfer)")
    ap.add_argument("--backbone-fp16", action="store_true", help="carry the backbone as fp16 + xz (about 45 %% of fp32)")
    ap.add_argument("--fresh", action="store_true",
                    help="carry none of the run folders' own logs and summaries (a distillation teacher's labels still go): "
                         "the runs start from step 0 there, beside a CPU run of the same folders here")
    args = ap.parse_args(argv)
    if len(args.config) != len(args.run):
        ap.error(f"give one --run per --config: {len(args.config)} configs, {len(args.run)} run folders")
    cfgs = [load_config(c) for c in args.config]
    data = args.data or default_data_dir()
    runs = [r.expanduser().resolve() for r in args.run]
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

    runs_there = [home_rel(r) for r in runs]  # each run folder must have the same ~/ path on the GPU machine
    missing: list[str] = []
    for k, (cfg, run, config) in enumerate(zip(cfgs, runs, args.config)):
        for name in cfg.data.sets:
            f = data / "nli" / f"{name}.jsonl.gz"
            if f"data/nli/{f.name}" in files:
                continue
            (missing.append(str(f)) if not f.exists() else _add(files, f"data/nli/{f.name}", f, parts, part_bytes))
        if cfg.augment.phrases and f"data/{cfg.augment.phrases}" not in files:
            f = data / cfg.augment.phrases
            (missing.append(str(f)) if not f.exists() else _add(files, f"data/{cfg.augment.phrases}", f, parts, part_bytes))
        if cfg.contrast.enabled:
            for c in [cfg.contrast.corpus, *cfg.contrast.extra_corpora]:
                f = run_path(c, run)
                if not f.exists():
                    missing.append(f"{f} (build it here first: veridic train nli --config {config} --output {run} --max-minutes 5)")
                elif home_rel(f) not in files:
                    _add(files, home_rel(f), f, parts, part_bytes)
        for f in sorted(run.iterdir()) if run.exists() else []:
            if args.fresh and not f.name.startswith("teacher_logits."):
                continue
            if f.is_file() and f.suffix in (".json", ".jsonl", ".gz", ".npy") and home_rel(f) not in files:
                _add(files, home_rel(f), f, parts, part_bytes)  # teacher logits, cached synthetic pairs, logs
        if cfg.distill.enabled:
            teacher = Path(str(cfg.distill.teacher)).expanduser()
            labels = run / "teacher_logits.json"
            meta = json.loads(labels.read_text()) if labels.exists() else {}
            if not (teacher / "config.json").exists():
                missing.append(f"{teacher} (distill.teacher: a model folder with config.json)")
            elif meta.get("n") and meta.get("done") == meta.get("n"):
                _add(files, home_rel(teacher / "config.json"), teacher / "config.json", parts, part_bytes)  # labels cached
            else:  # the teacher labels the pairs there: the whole model folder goes (a packed one is about 113 MB)
                for f in sorted(teacher.rglob("*")):
                    if f.is_file() and "__pycache__" not in f.parts and home_rel(f) not in files:
                        _add(files, home_rel(f), f, parts, part_bytes)
        if k > 0:
            start = Path(str(cfg.model.path)).expanduser().resolve()
            if not any(start.is_relative_to(r) for r in runs[:k]):
                ap.error(f"{config}: model.path {cfg.model.path!r} must lie in an earlier phase's run folder "
                         f"({', '.join(map(str, runs[:k]))}): a later phase starts from weights trained there")
    backbone = resolve_backbone_ref(str(cfgs[0].model.path))
    if backbone is None:
        ap.error(f"model.path {cfgs[0].model.path!r}: this script carries registered backbones (backbone:<name>) only")
    backbone = backbone.resolve()
    if backbone.is_relative_to(home) and ".venv" not in backbone.parts and "site-packages" not in backbone.parts:
        there = home_rel(backbone)  # a folder joined from part packages, cached under ~/
    else:
        # inside an installed package: the package's __init__ and the model folder, importable from site/ there
        pkg = next(p for p in backbone.parents if (p / "__init__.py").exists())
        _add(files, f"site/{pkg.name}/__init__.py", pkg / "__init__.py", parts, part_bytes)
        there = f"site/{pkg.name}/{backbone.relative_to(pkg)}"
    if missing:
        missing = list(dict.fromkeys(missing))  # a file two phases read is named once
        sys.stderr.write("missing here, so the bundle would not train:\n  " + "\n  ".join(missing) + "\n")
        return 1
    out = args.out
    if out.exists():
        shutil.rmtree(out)
    (out / "run").mkdir(parents=True)
    for f in sorted(backbone.rglob("*")):
        if not f.is_file() or "__pycache__" in f.parts or (f.name.startswith(".") and f.name not in _KEEP_HIDDEN):
            continue
        target = f"{there}/{f.relative_to(backbone)}"
        if args.backbone_fp16 and f.suffix == ".safetensors":
            _add(files, target, _fp16_xz(f, out / "run" / (f.name + ".fp16.xz")), parts, part_bytes, transform="fp16-xz")
        else:
            _add(files, target, f, parts, part_bytes)
    for i, part in enumerate(parts, 1):
        for src, offset, n, name in part:
            dest = out / f"part-{i}" / name
            dest.parent.mkdir(parents=True, exist_ok=True)
            with open(src, "rb") as fh:
                fh.seek(offset)
                dest.write_bytes(fh.read(n))
    for f in (out / "run").glob("*.fp16.xz"):
        f.unlink()  # now in the parts
    phases = [{"config": str(c), "config_hash": config_hash(cfg), "run": r} for c, cfg, r in zip(args.config, cfgs, runs_there)]
    manifest = {"phases": phases, "config": phases[-1]["config"], "config_hash": phases[-1]["config_hash"],
                "run": runs_there[-1], "backbone": there, "backbone_fp16": args.backbone_fp16,
                "return": "frozen" if cfgs[-1].model.freeze_word_embeddings else "int8", "files": files}
    (out / "run" / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for name, text in (("go.sh", GO), ("fetch.sh", FETCH)):
        (out / "run" / name).write_text(text)
        (out / "run" / name).chmod(0o755)
    sizes = [sum(n for _, _, n, _ in p) / 1e6 for p in parts]
    print(json.dumps({"parts": [f"{out}/part-{i}" for i in range(1, len(parts) + 1)], "mb": [round(s, 1) for s in sizes],
                      "files": len(files), "config_hash": manifest["config_hash"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
