"""The one-call Python API: ``veridic.score(sources=..., claims=...)``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.factory import cached_backend, load_scorer
from veridic.types import Verdict

__all__ = ["score", "cached_backend", "load_scorer"]


def score(
    *,
    sources: Sequence[str],
    claims: Sequence[str],
    contexts: Sequence[str | Sequence[str] | None] | None = None,
    config: ScorerConfig | str | None = None,
    method: str | None = None,
    model: str | Path | None = None,
    backend: str = "auto",
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
