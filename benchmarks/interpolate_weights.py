"""Average fine-tuned checkpoints of one architecture (WiSE-FT and model soups, Wortsman et al., 2022).

    python benchmarks/interpolate_weights.py --a runs/nli-v1/final --b runs/nli-v2/final --alpha 0.5 --out runs/nli-soup50
    python benchmarks/interpolate_weights.py --models START R5/final R6/final --out ~/.cache/veridic/train/soup/final

``--a/--b/--alpha`` writes ``(1 - alpha) * A + alpha * B``; ``--models`` writes the uniform average of two or more
checkpoints (``--weights`` gives other ones, normalised to sum to 1). Each checkpoint is a saved transformers folder
(``model.safetensors``) or a packed one (:mod:`veridic.nli.packed`, dequantised to fp32 first). Config and tokenizer
come from the first; ``soup.json`` records what was averaged. Fine-tunes of one start usually lie in one basin, so
their average keeps what each generalised while their separate errors partly cancel, at no cost at inference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

#: files of a model folder that describe its weights, not the architecture: not carried into the average
_WEIGHT_FILES = {"model.safetensors", "hybrid.json", "README.md", "veridic_model.json", "veridic_packed.json",
                 "training_summary.json", "training_args.bin", "tagger.json", "soup.json"}


def load_weights(folder: Path) -> dict[str, Any]:
    """The fp32 state dict of a saved or packed model folder."""
    from safetensors.torch import load_file

    from veridic.nli.packed import is_packed, read_packed

    if is_packed(folder):
        return read_packed(folder)
    weights = folder / "model.safetensors"
    if not weights.exists():
        raise SystemExit(f"{folder}: expected model.safetensors or packed shards (veridic_packed.json); found neither")
    return load_file(str(weights))


def average(states: list[dict[str, Any]], weights: list[float]) -> dict[str, Any]:
    """``sum(w_i * state_i)`` per tensor, weights normalised to sum to 1; every state must share names and shapes.

    Integer tensors (position ids) are taken from the first state: they are buffers, not learned.
    """
    if len(states) != len(weights) or len(states) < 2:
        raise ValueError(f"expected two or more states with one weight each; got {len(states)} states, {len(weights)} weights")
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(f"weights must be non-negative with a positive sum; got {weights}")
    total = sum(weights)
    ws = [w / total for w in weights]
    first = states[0]
    for i, s in enumerate(states[1:], start=2):
        if s.keys() != first.keys():
            diff = sorted(set(s) ^ set(first))[:5]
            raise ValueError(f"checkpoint {i} does not share checkpoint 1's tensors (differing names: {diff})")
        bad = [k for k in first if s[k].shape != first[k].shape]
        if bad:
            raise ValueError(f"checkpoint {i} does not share checkpoint 1's shapes ({bad[0]}: {tuple(s[bad[0]].shape)} "
                             f"against {tuple(first[bad[0]].shape)})")
    out = {}
    for k, t in first.items():
        if not t.is_floating_point():
            out[k] = t.contiguous()
            continue
        acc = ws[0] * t.double()
        for w, s in zip(ws[1:], states[1:]):
            acc = acc + w * s[k].double()
        out[k] = acc.to(t.dtype).contiguous()
    return out


def write_average(*, models: list[Path], weights: list[float], out: Path) -> Path:
    """Average ``models`` with ``weights`` into ``out`` (written beside, then renamed: never half a model)."""
    from safetensors.torch import save_file

    states = [load_weights(m) for m in models]
    avg = average(states, weights)
    tmp = out.with_name(out.name + ".writing")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in models[0].iterdir():
        if f.is_file() and f.name not in _WEIGHT_FILES and not f.name.startswith("packed-"):
            shutil.copy(f, tmp / f.name)
    save_file(avg, str(tmp / "model.safetensors"), metadata={"format": "pt"})
    digest = hashlib.sha256((tmp / "model.safetensors").read_bytes()).hexdigest()[:16]
    total = sum(weights)
    record = {"models": [str(m) for m in models], "weights": [w / total for w in weights], "sha256": digest}
    (tmp / "soup.json").write_text(json.dumps(record, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", type=Path)
    ap.add_argument("--b", type=Path)
    ap.add_argument("--alpha", type=float)
    ap.add_argument("--models", nargs="+", type=Path, help="two or more checkpoints, averaged uniformly unless --weights")
    ap.add_argument("--weights", nargs="+", type=float, help="one non-negative weight per --models entry")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--tagger-config-from", type=Path, metavar="TAGGER_JSON",
                    help="averaging span taggers: fit the average's thresholds as training does, on the held-back EntFA "
                         "train rows, with the training config stored in this tagger.json (one of the averaged taggers')")
    ap.add_argument("--spans-data", type=Path, default=Path("../shared/data/spans"),
                    help="the folder of human span sets, for --tagger-config-from (default: ../shared/data/spans)")
    args = ap.parse_args(argv)
    if args.models:
        if args.a or args.b or args.alpha is not None:
            ap.error("give either --models or --a/--b/--alpha, not both")
        models = args.models
        weights = args.weights or [1.0] * len(models)
    else:
        if not (args.a and args.b and args.alpha is not None):
            ap.error("give --a, --b and --alpha, or --models")
        if args.weights:
            ap.error("--weights goes with --models")
        models, weights = [args.a, args.b], [1 - args.alpha, args.alpha]
    missing = [str(m) for m in models if not m.is_dir()]
    if missing:
        ap.error(f"not a model folder: {', '.join(missing)}")
    if args.tagger_config_from and not args.tagger_config_from.is_file():
        ap.error(f"--tagger-config-from: no tagger.json at {args.tagger_config_from}; give the tagger.json of one of the averaged taggers")
    try:
        out = write_average(models=models, weights=weights, out=args.out)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("wrote", out)
    if args.tagger_config_from:
        from veridic.detect._tagger_train import TaggerTrainConfig, entfa_train_rows, fit_thresholds

        meta = json.loads(args.tagger_config_from.read_text(encoding="utf-8"))
        card = {**meta.get("data", {}), "soup": json.loads((out / "soup.json").read_text(encoding="utf-8"))}
        fit = fit_thresholds(model_dir=out, rows=entfa_train_rows(data_dir=args.spans_data),
                             config=TaggerTrainConfig(**meta["config"]), data_card=card)
        print("thresholds", json.dumps(fit))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
