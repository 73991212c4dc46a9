"""Compact model weights for shipping: per-row int8 with fp16 scales, in shards under a size limit.

A base-size encoder is 438 MB in fp32: too large to ship in a repository many times over. Every 2-D
weight matrix is stored as int8 with one fp16 scale per row (``w ≈ q * scale``); 1-D tensors (biases,
LayerNorm) stay fp32, since they are small and sensitive. Loading dequantises to fp32 once, so the
model then runs exactly as a full-precision model with slightly rounded weights: the scores move by
the rounding error only (measured per model and stated in its card; tested on the shipped models).

Layout of a packed folder: ``config.json``, the tokenizer, ``veridic_packed.json`` (format, shard
names, the sha256 of each shard) and ``packed-00000.safetensors``, ``packed-00001...``.

>>> import torch
>>> sd = {"w": torch.tensor([[1.0, -2.0], [0.5, 0.25]]), "b": torch.tensor([0.1, 0.2])}
>>> back = unpack_state_dict(pack_state_dict(sd))
>>> float((back["w"] - sd["w"]).abs().max()) < 0.01, back["b"].equal(sd["b"])
(True, True)
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from veridic.errors import ModelLoadError

__all__ = ["PACKED_MARKER", "pack_state_dict", "unpack_state_dict", "write_packed", "reshard_packed", "read_packed", "is_packed", "load_packed_model"]

PACKED_MARKER = "veridic_packed.json"
FORMAT = "veridic-int8-rows-v1"
_Q, _S = ".q8", ".scale16"


ROUNDINGS = ("nearest", "stochastic")


def pack_state_dict(state: dict[str, Any], *, rounding: str = "nearest") -> dict[str, Any]:
    """Per-row int8 (symmetric, scale = max|row| / 127 in fp16) for 2-D float tensors; others as fp32.

    ``rounding="stochastic"`` rounds up with probability equal to the remainder, from a generator seeded by the
    tensor's name (the same weights give the same bytes). Use it for a model fine-tuned from packed weights: they
    lie on the int8 grid, most updates are smaller than half a step, and nearest rounding would put them back.
    """
    import torch

    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding: expected one of {ROUNDINGS}, got {rounding!r}")
    out: dict[str, Any] = {}
    for name, t in state.items():
        t = t.detach().cpu()
        if t.is_floating_point() and t.dim() == 2:
            w = t.float()
            scale = (w.abs().amax(dim=1, keepdim=True) / 127.0).to(torch.float16)
            # fp16 rounding of the scale is folded into the quantisation: q is computed against the stored scale.
            s = scale.float()
            s = torch.where(s > 0, s, torch.ones_like(s))  # an all-zero row: any divisor gives q = 0
            if rounding == "stochastic":
                gen = torch.Generator().manual_seed(int(hashlib.sha256(name.encode()).hexdigest()[:15], 16))
                q = torch.floor(w / s + torch.rand(w.shape, generator=gen))
            else:
                q = torch.round(w / s)
            out[name + _Q] = torch.clamp(q, -127, 127).to(torch.int8).contiguous()
            out[name + _S] = scale.contiguous()
        elif t.is_floating_point():
            out[name] = t.float().contiguous()
        else:
            out[name] = t.contiguous()
    return out


def unpack_state_dict(packed: dict[str, Any]) -> dict[str, Any]:
    """The fp32 state dict back from :func:`pack_state_dict`."""
    out: dict[str, Any] = {}
    for name, t in packed.items():
        if name.endswith(_S):
            continue
        if name.endswith(_Q):
            base = name[: -len(_Q)]
            scale = packed.get(base + _S)
            if scale is None:
                raise ModelLoadError(f"packed weights: {base} has int8 values but no scales ({base + _S})")
            out[base] = t.float() * scale.float()
        else:
            out[name] = t
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_packed(*, model_dir: str | Path, out_dir: str | Path, max_shard_mb: float = 95.0,
                 rounding: str = "nearest") -> list[Path]:
    """Pack a saved transformers model (``model_dir``) into ``out_dir``; returns the shard paths.

    Config, tokenizer and every other small file are copied; weights become int8 shards of at most
    ``max_shard_mb`` MB each (kept under common 100 MB file limits). Written to a temporary folder
    and renamed into place, so a failure never leaves half a model.
    """
    from safetensors.torch import load_file

    src, dest = Path(model_dir), Path(out_dir)
    weights = src / "model.safetensors"
    if not weights.exists():
        raise ModelLoadError(f"{src} holds no model.safetensors to pack")
    return _write_shards(pack_state_dict(load_file(str(weights)), rounding=rounding), src=src, dest=dest, max_shard_mb=max_shard_mb)


def reshard_packed(*, model_dir: str | Path, max_shard_mb: float = 95.0) -> list[Path]:
    """Split a packed folder's shards again, at most ``max_shard_mb`` MB each; returns the shard paths.

    The int8 values and scales are moved, never quantised again: weights packed on another machine (one shard for
    a whole base-size model) ship under a repository's file limits with exactly the values that were scored.
    """
    d = Path(model_dir)
    return _write_shards(_read_raw(d, verify=True), src=d, dest=d, max_shard_mb=max_shard_mb)


def _write_shards(packed: dict[str, Any], *, src: Path, dest: Path, max_shard_mb: float) -> list[Path]:
    """``src``'s small files (config, tokenizer, card; no weights) and the packed tensors in shards, written to a
    temporary folder that then becomes ``dest`` (which may be ``src``)."""
    from safetensors.torch import save_file

    tmp = dest.with_name(dest.name + ".packing")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and f.name not in {"model.safetensors", "training_args.bin", PACKED_MARKER} and not f.name.startswith("packed-"):
            shutil.copy(f, tmp / f.name)
    limit = int(max_shard_mb * 1e6)
    shards: list[dict[str, Any]] = [{}]
    size = 0
    for name in sorted(packed):
        n = packed[name].numel() * packed[name].element_size()
        if shards[-1] and size + n > limit:
            shards.append({})
            size = 0
        shards[-1][name] = packed[name]
        size += n
    names = []
    for i, shard in enumerate(shards):
        fname = f"packed-{i:05d}.safetensors"
        save_file(shard, str(tmp / fname), metadata={"format": FORMAT})
        (tmp / fname).chmod(0o644)  # the writer creates owner-only files; a shipped model is read by every user
        names.append(fname)
    meta = {"format": FORMAT, "shards": {n: _sha256(tmp / n) for n in names},
            "note": "2-D weights: int8 per row with fp16 scales; other tensors fp32 (veridic.nli.packed)"}
    (tmp / PACKED_MARKER).write_text(json.dumps(meta, indent=2) + "\n")
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return [dest / n for n in names]


def load_packed_model(model_dir: str | Path, *, auto_cls: Any, **from_config: Any) -> Any:
    """A packed folder as a model: ``auto_cls`` (e.g. ``AutoModelForTokenClassification``) built from its config,
    the dequantised fp32 weights loaded into it; a weight the config wants and the shards lack is an error."""
    from transformers import AutoConfig

    d = Path(model_dir)
    model = auto_cls.from_config(AutoConfig.from_pretrained(str(d), local_files_only=True), **from_config)
    missing, unexpected = model.load_state_dict(read_packed(d), strict=False)
    # Position ids and similar buffers are rebuilt from the config; a missing weight is an error.
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise ModelLoadError(f"packed model {d} does not fit its config: missing {missing[:5]}, unexpected {unexpected[:5]}; "
                             "repack it with scripts/ship_model.py")
    return model


def is_packed(model_dir: str | Path) -> bool:
    return (Path(model_dir) / PACKED_MARKER).exists()


def read_packed(model_dir: str | Path, *, verify: bool = True) -> dict[str, Any]:
    """The fp32 state dict of a packed folder; each shard's sha256 is checked first (``verify``)."""
    return unpack_state_dict(_read_raw(Path(model_dir), verify=verify))


def _read_raw(d: Path, *, verify: bool) -> dict[str, Any]:
    """The packed tensors (int8 values, fp16 scales, fp32 others) of every shard, as stored."""
    from safetensors.torch import load_file

    meta = json.loads((d / PACKED_MARKER).read_text())
    if meta.get("format") != FORMAT:
        raise ModelLoadError(f"{d}: packed format {meta.get('format')!r} is not {FORMAT!r}; upgrade veridic")
    packed: dict[str, Any] = {}
    for name, digest in meta["shards"].items():
        p = d / name
        if not p.exists():
            raise ModelLoadError(f"{d}: shard {name} is missing; reinstall the model")
        if verify and _sha256(p) != digest:
            raise ModelLoadError(f"{d}: shard {name} is damaged (sha256 differs from {PACKED_MARKER}); reinstall the model")
        packed.update(load_file(str(p)))
    return packed
