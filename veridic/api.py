"""The one-call Python API: ``veridic.score(sources=..., claims=...)``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from veridic.types import Verdict

__all__ = ["score"]

_CACHE: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def _backend(model: str | Path | None, backend: str, **kwargs: Any):
    # Loading a model takes seconds; repeated calls reuse the loaded one.
    from veridic.nli import load_backend

    key = (str(model), backend, tuple(sorted(kwargs.items())))
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_backend(model, kind=backend, **kwargs)
        return _CACHE[key]


def score(
    *,
    sources: Sequence[str],
    claims: Sequence[str],
    contexts: Sequence[str | Sequence[str] | None] | None = None,
    method: Literal["e", "e-c", "hybrid"] = "hybrid",
    mc_samples: int = 0,
    granularity: Literal["sentence", "document"] = "sentence",
    claim_aggregation: str = "mean",
    model: str | Path | None = None,
    backend: Literal["torch", "onnx"] = "torch",
    seed: int = 0,
    progress: bool = False,
    **scorer_options: Any,
) -> list[Verdict]:
    """Score each claim against its source with an NLI model.

    ``method``: ``e`` (entailment probability), ``e-c`` (entailment minus
    contradiction) or ``hybrid`` (e−c combined with lexical/entity signals by
    weights shipped with the model; the score is a probability of being
    faithful). ``model`` None uses the embedded default; a directory, an
    installed package name or a hub id also work. Extra keyword options go to
    :class:`veridic.nli.NLIScorer`.

    >>> vs = score(sources=["Paris is in France."], claims=["Paris is in Spain."])
    >>> vs[0].label
    'unsupported'
    """
    from veridic.nli import NLIScorer

    if method == "hybrid":
        from veridic.nli.hybrid import HybridScorer

        hybrid = HybridScorer(backend=_backend(model, backend), mc_samples=mc_samples, seed=seed, claim_aggregation=claim_aggregation, **scorer_options)
        return hybrid.score(sources=sources, claims=claims, contexts=contexts, progress=progress)
    scorer = NLIScorer(
        backend=_backend(model, backend),
        method=method,
        mc_samples=mc_samples,
        granularity=granularity,
        claim_aggregation=claim_aggregation,
        seed=seed,
        **scorer_options,
    )
    return scorer.score(sources=sources, claims=claims, contexts=contexts, progress=progress)
