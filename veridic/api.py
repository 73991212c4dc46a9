"""The one-call Python API: ``veridic.score(sources=..., claims=...)``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from veridic.config import ScorerConfig
from veridic.types import Verdict

__all__ = ["score", "cached_backend", "load_scorer"]

_CACHE: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def cached_backend(model: str | Path | None = None, *, kind: str = "auto", **kwargs: Any):
    """Load a backend once per process; repeated calls with the same arguments reuse it (loading takes seconds)."""
    from veridic.nli import load_backend
    from veridic.nli.backend import resolve_backend_kind

    kind = resolve_backend_kind(kind, model=model, device=kwargs.get("device", "cpu"), dtype=kwargs.get("dtype", "auto"), options=list(kwargs))
    key = (str(model), kind, tuple(sorted(kwargs.items())))
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_backend(model, kind=kind, **kwargs)
        return _CACHE[key]


def score(
    *,
    sources: Sequence[str],
    claims: Sequence[str],
    contexts: Sequence[str | Sequence[str] | None] | None = None,
    config: ScorerConfig | str | None = None,
    method: Literal["e", "e-c", "hybrid"] | str | None = None,
    model: str | Path | None = None,
    backend: Literal["auto", "torch", "onnx", "dummy"] = "auto",
    device: str = "cpu",
    dtype: str = "auto",
    progress: bool = False,
    **options: Any,
) -> list[Verdict]:
    """Score each claim against its source.

    The scorer is a :class:`veridic.config.ScorerConfig`: pass one as
    ``config`` (or a registered name such as ``"e-c-doc"``), or its fields as
    keywords (``method``, ``mc_samples``, ``granularity``, ``max_windows``,
    ``context_mode``, ``threshold``...), which override ``config``'s. Default:
    ``hybrid`` (e−c combined with lexical/entity signals; the verdict's score
    is a probability of being faithful). ``model`` None uses the embedded
    model; a directory, an installed package name or a hub id also work.
    ``backend``: ``auto`` (ONNX int8 on the CPU when the model ships an int8
    export and no Monte-Carlo dropout is asked for, else torch), ``torch``,
    ``onnx`` or ``dummy``. ``device``: ``cpu``, ``cuda[:N]`` or ``auto``.
    Sources over ``$VERIDIC_MAX_SOURCE_CHARS`` and claims over
    ``$VERIDIC_MAX_CLAIM_CHARS`` / ``$VERIDIC_MAX_CLAIM_SENTENCES``
    (:mod:`veridic.limits`) are an :class:`~veridic.errors.InputError`.

    >>> vs = score(sources=["Paris is in France."], claims=["Paris is in Spain."])
    >>> vs[0].label
    'unsupported'
    """
    from veridic.limits import check_pairs

    # The same guards as `veridic score` and the service, before any model loads (lists first: a generator is read once).
    sources = sources if isinstance(sources, str) else list(sources)
    claims = claims if isinstance(claims, str) else list(claims)
    check_pairs(sources=sources, claims=claims)
    if method is not None:
        options["method"] = method
    scorer = load_scorer(config, model=model, backend=backend, device=device, dtype=dtype, **options)
    return scorer.score(sources=sources, claims=claims, contexts=contexts, progress=progress)


def load_scorer(
    config: ScorerConfig | str | None = None,
    *,
    model: str | Path | None = None,
    backend: str = "auto",
    device: str = "cpu",
    dtype: str = "auto",
    batch_size: int = 32,
    reuse: bool = True,
    **options: Any,
):
    """Load the backend (once per process with ``reuse``) and build the scorer ``config`` describes.

    What ``veridic score``, ``veridic serve``, each Ray actor and the detector's
    CLI call. Options are validated (and ``device`` checked) before any model
    loads; model-free methods load nothing.

    >>> load_scorer("overlap").name
    'overlap'
    """
    from veridic.nli.backend import check_device, check_dtype, load_backend, resolve_backend_kind
    from veridic.registry import build_scorer, get_method, resolve_config

    cfg = resolve_config(config, **options)
    if not get_method(cfg.method).needs_backend:
        return build_scorer(cfg)
    check_dtype(dtype, device=check_device(device))
    # auto: the fastest backend that runs this configuration (Monte-Carlo dropout needs torch).
    kind = resolve_backend_kind(backend, model=model, device=device, dtype=dtype, mc_samples=cfg.mc_samples)
    if kind == "onnx" and dtype == "auto" and backend == "auto":
        dtype = "int8"
    load = cached_backend if reuse else load_backend
    return build_scorer(cfg, backend=load(model, kind=kind, device=device, dtype=dtype, batch_size=batch_size))
