"""Where a model reference points: the embedded model, a folder, an installed package or a hub id.

>>> resolve_model_path(None)[1]
'embedded'
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from pathlib import Path

from veridic.errors import ModelLoadError, did_you_mean

__all__ = ["ACCURATE_MODEL_NAME", "EMBEDDED_MODELS", "EMBEDDED_MODEL_NAME", "KNOWN_CHECKPOINTS", "RETIRED_MODELS", "embedded_model_path",
           "resolve_model_path"]

EMBEDDED_MODEL_NAME = "veridic-nli-minilm-l6"
#: The embedded model that is the accurate tier (``--model`` picks it by this name; the benchmarks score it).
ACCURATE_MODEL_NAME = "veridic-nli-mpnet-base"

#: Real checkpoints users with a model hub can point veridic at.
KNOWN_CHECKPOINTS = {
    "juliussteen/DeBERTa-v3-FaithAug": "paper 004's model (DeBERTa-v3-large + dialogue augmentation), MIT",
    "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli": "paper 004's Base NLI model",
    "vectara/hallucination_evaluation_model": "HHEM-2.1-open (2-way; needs trust_remote_code)",
}


#: NLI models trained by this project and shipped inside the package (``veridic/models/<name>``), selectable by name.
EMBEDDED_MODELS = {
    EMBEDDED_MODEL_NAME: "the fast default: MiniLM-L6 (22M parameters) distilled from the accurate tier, "
                         "configs/nli-minilm-distill-l12.yaml",
    "veridic-nli-mpnet-base": "the accurate tier: all 12 layers of MPNet-base (about 110M parameters), "
                              "configs/nli-base-l12s-v*.yaml, then configs/nli-base-l12r3-v1.yaml",
    "veridic-nli-minilm-commercial": "the fast model trained only on data whose licences allow commercial use: MiniLM-L6, "
                                     "configs/nli-minilm-commercial.yaml",
}

#: Models that shipped once and were taken out of the package: name -> (successor, the commit that last holds its
#: files). The name stays known so that a script or config written for it gets a way forward, not a hub lookup.
RETIRED_MODELS = {
    "veridic-nli-mpnet-l6": ("veridic-nli-mpnet-base", "6edb1d2"),
}


def embedded_model_path(name: str = EMBEDDED_MODEL_NAME) -> Path:
    """Folder of a model shipped inside the package (may not exist in a dev checkout or before it is trained)."""
    return Path(str(importlib.resources.files("veridic"))) / "models" / name


def resolve_model_path(model: str | Path | None) -> tuple[str | Path, str]:
    """Turn a user's model reference into something ``from_pretrained`` loads.

    Order: ``None``/``"embedded"`` → the shipped model; an existing directory;
    an installed Python package holding a model folder (``pkg`` or
    ``pkg/model``); otherwise a hub id (loaded through the same
    ``from_pretrained`` code path, offline if ``HF_HUB_OFFLINE=1``).
    Returns ``(path_or_id, kind)`` with kind in {embedded, directory, package, hub}.
    """
    if model is None or str(model) == "embedded":
        model = EMBEDDED_MODEL_NAME
    if str(model) in RETIRED_MODELS:
        successor, commit = RETIRED_MODELS[str(model)]
        raise ModelLoadError(f"The model {str(model)!r} was retired and no longer ships with veridic; its successor is "
                             f"{successor!r} ({EMBEDDED_MODELS[successor]}): select it with --model {successor}. To run the "
                             f"retired model, restore its files in a clone of the repository with "
                             f"`git checkout {commit} -- veridic/models/{model}` and pass that folder with --model.")
    if str(model) in EMBEDDED_MODELS:
        path = embedded_model_path(str(model))
        if not (path / "config.json").exists():
            if str(model) == EMBEDDED_MODEL_NAME:
                raise ModelLoadError(f"The embedded NLI model is missing: expected {path}/config.json. "
                                     "Reinstall veridic (pip install -e .) from a full clone, or pass a model directory with --model / model=.")
            raise ModelLoadError(f"The model {str(model)!r} ({EMBEDDED_MODELS[str(model)]}) is not in this copy of veridic: expected "
                                 f"{path}/config.json. It ships with releases that include it; meanwhile use the default (no --model), "
                                 "or train it yourself with the config named above and pass its folder with --model.")
        return path, "embedded"
    p = Path(str(model)).expanduser()
    if p.is_dir():
        if not (p / "config.json").exists():
            raise ModelLoadError(f"{str(p)!r} is a directory but holds no config.json; point at a folder written by save_pretrained().")
        return p, "directory"
    name = str(model)
    if name.isidentifier() or all(part.isidentifier() for part in name.split(".")):
        spec = importlib.util.find_spec(name.split(".")[0]) if "." not in name else None
        if spec is not None and spec.submodule_search_locations:
            base = Path(list(spec.submodule_search_locations)[0])
            for cand in (base, base / "model"):
                if (cand / "config.json").exists():
                    return cand, "package"
    if p.suffix or name.startswith((".", "/", "~")):
        raise ModelLoadError(f"Model path {name!r} does not exist.")
    if "/" not in name and name.lower().startswith("veridic"):
        # A hub id has an owner ("owner/name"); a bare "veridic-..." is a mistyped embedded name, and sending it to a
        # hub would only fail later with a network error that hides the typo.
        raise ModelLoadError(f"{name!r} is not a model shipped with veridic; the embedded models are "
                             f"{', '.join(repr(n) for n in EMBEDDED_MODELS)}.{did_you_mean(name, EMBEDDED_MODELS)}")
    return name, "hub"
