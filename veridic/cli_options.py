"""Command-line flags shared by ``veridic score``, ``serve``, ``detect``, ``bench``, ``index`` and ``export``.

Each flag is declared once here (a Typer ``Annotated`` alias) and means the
same in every command; :func:`scorer_config` turns the scorer flags into
one :class:`veridic.config.ScorerConfig`. A flag left out (None) keeps the
command's default configuration. Importing this module costs only typer.

Text or file is never guessed: ``--source TEXT`` is text, however long;
``--source-file PATH`` (or ``--source @PATH``) is a file; ``@@`` escapes a
literal leading ``@``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from veridic.errors import InputError

__all__ = ["SCORER_FLAGS", "read_text_arg", "scorer_config", "check_model_flags", "check_hub_model", "with_scorer_flags", "Bf16", "Threads", "Resume", "Progress", "parse_bf16"]

Bf16 = Annotated[str, typer.Option("--bf16", help="auto (when the CPU has native bf16: AMX or AVX512-BF16), on or off.")]
# The other run flags of the fine-tuning and scoring commands.
Threads = Annotated[int | None, typer.Option("--threads")]
Resume = Annotated[bool, typer.Option("--resume/--no-resume", help="Continue from the newest checkpoint in --out-dir.")]
Progress = Annotated[bool, typer.Option("--progress/--no-progress")]


def parse_bf16(value: str) -> bool | None:
    """``--bf16`` for the fine-tuning commands: None (decide from the CPU), True or False.

    >>> parse_bf16("auto"), parse_bf16("on"), parse_bf16("off")
    (None, True, False)
    """
    from veridic.errors import ConfigError

    if value not in ("auto", "on", "off"):
        raise ConfigError(f"--bf16 must be auto, on or off; got {value!r}.")
    return None if value == "auto" else value == "on"


_SCORER = "Scorer options"
_MODEL = "Model options"

Config = Annotated[Path | None, typer.Option("--config", metavar="FILE", rich_help_panel=_SCORER,
                                                help="ScorerConfig as JSON or YAML (its fields: method, mc_samples, ...); flags override it.")]


def _method_help() -> str:
    # Generated from the registry, so a new method appears here by being registered.
    from veridic.registry import PRESETS, SCORERS

    methods = [n for n in SCORERS.names(plugins=False) if n != "hybrid"]
    return (f"Scorer method: 'hybrid' (default: e-c + lexical signals; score = P(faithful)), {', '.join(map(repr, methods))}, "
            f"a preset ({', '.join(PRESETS.names(plugins=False))}) or a plugin's name.")


Method = Annotated[str | None, typer.Option("--method", rich_help_panel=_SCORER, help=_method_help())]
McSamples = Annotated[int | None, typer.Option("--mc-samples", rich_help_panel=_SCORER, help="Monte-Carlo dropout samples (0 = off; paper 004 uses 15; torch backend only).")]
Granularity = Annotated[str | None, typer.Option("--granularity", rich_help_panel=_SCORER, help="'sentence' (claim sentences vs source windows) or 'document' (whole claim vs chunks).")]
SourceAgg = Annotated[str | None, typer.Option("--source-aggregation", rich_help_panel=_SCORER, help="Window per claim piece: max, first, uncontradicted (max, with the strongest contradiction of any window) or uncontradicted-relevant (of any window holding half the claim's content words).")]
ClaimAgg = Annotated[str | None, typer.Option("--claim-aggregation", "--aggregation", rich_help_panel=_SCORER, help="How claim sentences are pooled: mean, min or softmin.")]
WindowSentences = Annotated[str | None, typer.Option("--window-sentences", rich_help_panel=_SCORER,
                                                     help="Consecutive source sentences per window; several lengths pooled: 1,2.")]
MaxWindows = Annotated[int | None, typer.Option("--max-windows", rich_help_panel=_SCORER, help="Windows kept per claim sentence, most word overlap first (0 = all).")]
WholeSource = Annotated[bool | None, typer.Option("--whole-source/--no-whole-source", rich_help_panel=_SCORER,
                                                     help="Also judge each claim sentence against the whole source when it fits the model.")]
StructureCheck = Annotated[bool | None, typer.Option("--structure-check/--no-structure-check", rich_help_panel=_SCORER,
                                                        help="Judge a claim sentence a contradiction when the parse shows two arguments in exchanged roles "
                                                             "or a reversed predicate ('YouTube acquired Google' vs 'Google acquired YouTube'); on by default.")]
VerbatimSupport = Annotated[bool | None, typer.Option("--verbatim-support/--no-verbatim-support", rich_help_panel=_SCORER,
                                                         help="A claim sentence that repeats a source sentence word for word is entailed, whatever the model says; on by default.")]
ContextMode = Annotated[str | None, typer.Option("--context-mode", rich_help_panel=_SCORER, help="'ignore' or 'premise' (prepend the dialogue context to the source).")]
Threshold = Annotated[float | None, typer.Option("--threshold", rich_help_panel=_SCORER, help="Decision threshold on the verdict-score scale (default: the method's).")]
AbstainAbove = Annotated[float | None, typer.Option("--abstain-above", rich_help_panel=_SCORER, help="Label 'abstain' when the MC-dropout std exceeds this (needs --mc-samples).")]
Seed = Annotated[int | None, typer.Option("--seed", rich_help_panel=_SCORER, help="Seed of Monte-Carlo dropout.")]
HybridWeights = Annotated[Path | None, typer.Option("--hybrid-weights", metavar="FILE", rich_help_panel=_SCORER, help="hybrid.json to use instead of the model's own.")]

#: The scorer flags, by ScorerConfig field (plus --config): what ``with_scorer_flags`` adds to a command.
SCORER_FLAGS = {
    "config_file": Config, "method": Method, "mc_samples": McSamples, "granularity": Granularity,
    "source_aggregation": SourceAgg, "claim_aggregation": ClaimAgg, "window_sentences": WindowSentences,
    "max_windows": MaxWindows, "whole_source": WholeSource, "structure_check": StructureCheck, "verbatim_support": VerbatimSupport, "context_mode": ContextMode, "threshold": Threshold,
    "abstain_above": AbstainAbove, "seed": Seed, "hybrid_weights": HybridWeights,
}


def with_scorer_flags(fn):
    """Give a Typer command every scorer flag, declared once (here); it receives them as ``scorer_flags``, a dict.

    The command turns them into its configuration with ``scorer_config(default, **scorer_flags)``.
    """
    import functools
    import inspect

    sig = inspect.signature(fn, eval_str=True)
    own = [p for p in sig.parameters.values() if p.name != "scorer_flags"]
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=alias) for name, alias in SCORER_FLAGS.items()]

    @functools.wraps(fn)
    def command(**kwargs: Any) -> Any:
        flags = {name: kwargs.pop(name) for name in SCORER_FLAGS if name in kwargs}
        return fn(**kwargs, scorer_flags=flags)

    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + extra
    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    del command.__wrapped__  # Typer must read the new signature, not the wrapped one
    return command


Model = Annotated[str | None, typer.Option("--model", "-m", rich_help_panel=_MODEL, help="Model directory, installed package or hub id (default: the embedded model).")]
Backend = Annotated[str, typer.Option("--backend", rich_help_panel=_MODEL, help="'auto' (ONNX int8 on the CPU when the model has an int8 export and no --mc-samples is asked for, else torch), "
                                                 "'torch', 'onnx' or 'dummy' (a word-overlap stand-in for tests and examples).")]
Device = Annotated[str, typer.Option("--device", rich_help_panel=_MODEL, help="auto (CUDA when present), cpu, cuda or cuda:N.")]
Dtype = Annotated[str, typer.Option("--dtype", rich_help_panel=_MODEL, help="auto, float32, bfloat16, float16 or int8 (CPU: int8 Linear weights on torch, model.int8.onnx on onnx).")]
BatchSize = Annotated[int, typer.Option("--batch-size", min=1, rich_help_panel=_MODEL, help="Pairs per model call.")]


def scorer_config(base: Any = None, *, config_file: Path | None = None, **flags: Any):
    """The :class:`ScorerConfig` of ``base`` (a config or name) updated by a config file, then by the flags given (not None)."""
    from veridic.config import resolve_config

    options: dict[str, Any] = {}
    if config_file is not None:
        options.update(_read_config_file(config_file))
    given = {k: v for k, v in flags.items() if v is not None}
    if given.get("max_windows") == 0:
        given["max_windows"] = None  # the flag's spelling of "all windows"
    if "hybrid_weights" in given:
        given["hybrid_weights"] = str(given["hybrid_weights"])
    if isinstance(given.get("window_sentences"), str):
        given["window_sentences"] = _window_lengths_flag(given["window_sentences"])
    options.update(given)
    method = options.pop("method", None)
    if method is not None:
        # --method names a method or a preset; the other options apply on top of it.
        from veridic.errors import RegistryError

        try:
            return resolve_config(method, **options)
        except RegistryError as exc:
            raise RegistryError(f"--method {method}: {exc}") from None
    return resolve_config(base, **options)


def _window_lengths_flag(text: str) -> int | list[int]:
    """``--window-sentences`` as one length (``2``) or several (``1,2``); ScorerConfig checks the values."""
    from veridic.errors import ConfigError

    try:
        lengths = [int(part) for part in text.split(",")]
    except ValueError:
        raise ConfigError(f"--window-sentences takes a whole number or comma-separated ones, e.g. 2 or 1,2; got {text!r}.") from None
    return lengths[0] if len(lengths) == 1 else lengths


def _read_config_file(path: Path) -> dict[str, Any]:
    import json

    text = read_text_arg(f"@{path}", flag="--config")
    try:
        data = json.loads(text) if path.suffix == ".json" else _yaml(text)
    except ValueError as exc:
        raise InputError(f"--config {path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'} ({exc}).") from None
    if not isinstance(data, dict):
        raise InputError(f"--config {path}: expected a mapping of ScorerConfig fields; got {type(data).__name__}.")
    return data


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def read_text_arg(value: str, *, flag: str, file: Path | None = None) -> str:
    """Inline text as it is; ``@PATH`` (or ``file``) read as UTF-8; ``@@...`` a literal leading ``@``. Never guessed from the text."""
    if file is not None:
        return _read_file(file, flag=flag)
    if value.startswith("@@"):
        return value[1:]
    if value.startswith("@") and len(value) > 1:
        return _read_file(Path(value[1:]), flag=flag)
    return value


def _read_file(path: Path, *, flag: str) -> str:
    import sys

    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{flag}: no file {str(path)!r}. A leading @ names a file ({flag}-file PATH works too); write @@ for text that starts with @.") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{flag}: {str(path)!r} is not valid UTF-8 ({exc.reason} at byte {exc.start}); re-encode it as UTF-8.") from None
    except OSError as exc:
        raise InputError(f"{flag}: cannot read {str(path)!r} ({exc.strerror}).") from None


def check_model_flags(*, backend: str, device: str, dtype: str) -> str:
    """Validate ``--backend``, ``--device`` and ``--dtype`` before any model loads; returns the resolved device."""
    from veridic.errors import ConfigError
    from veridic.nli._backend import backend_kinds, check_device, check_dtype

    if backend not in backend_kinds():
        raise ConfigError(f"--backend must be one of {', '.join(backend_kinds())}; got {backend!r}.")
    resolved = check_device(device)
    check_dtype(dtype, device=resolved)
    if backend == "onnx" and resolved != "cpu":
        raise ConfigError(f"--backend onnx runs on the CPU; got --device {device}. Use --backend torch for a GPU.")
    return resolved


def check_hub_model(model: str | None, *, probe_timeout: float = 3.0) -> None:
    """Fail at once, before any loading, when ``model`` is a hub id that is neither cached nor reachable.

    Without this, transformers retries the hub for up to a minute before giving up. A folder, an installed
    package, the embedded model and a hub id already in the local cache pass; so does any hub id while the hub
    answers (the loader then fetches it). ``HF_HUB_OFFLINE=1`` counts as unreachable.
    """
    if model is None:
        return
    import os

    from veridic.errors import ModelLoadError
    from veridic.nli._backend import resolve_model_path

    ref, kind = resolve_model_path(model)
    if kind != "hub":
        return
    try:
        from huggingface_hub import try_to_load_from_cache
        from huggingface_hub.constants import ENDPOINT, HF_HUB_CACHE
    except ImportError:
        return  # the loader will say which extra is missing
    if isinstance(try_to_load_from_cache(str(ref), "config.json"), str):
        return
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    if not offline:
        import socket
        from urllib.parse import urlparse

        url = urlparse(ENDPOINT)
        try:
            socket.create_connection((url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)), timeout=probe_timeout).close()
            return
        except OSError:
            pass
    why = "HF_HUB_OFFLINE is set" if offline else f"{ENDPOINT} cannot be reached"
    raise ModelLoadError(
        f"Could not load NLI model {model!r} (hub). It is a hub id: this needs network access to a model hub (or a local copy). "
        f"Cause: {why}, and it is not in the local cache ({HF_HUB_CACHE}). Pass a model folder with --model, or leave --model out for the embedded model."
    )
