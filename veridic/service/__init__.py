"""HTTP service: ``veridic serve`` (FastAPI) over models loaded once at start-up.

``create_app(scorer=..., detector=..., settings=...)`` builds the app from
loaded objects; :func:`build_scorer` is what the CLI uses to load them.
Needs the ``service`` extra (fastapi, uvicorn, prometheus-client).

>>> from veridic.service import ServiceSettings
>>> ServiceSettings(max_batch=16).max_batch
16
"""

from veridic.service.batching import MicroBatcher, Overloaded
from veridic.service.settings import ServiceSettings

__all__ = ["MicroBatcher", "Overloaded", "ServiceSettings", "build_scorer", "create_app"]


def create_app(**kwargs):
    """See :func:`veridic.service.app.create_app` (imported lazily: it needs the 'service' extra)."""
    from veridic.service.app import create_app as _create

    return _create(**kwargs)


def build_scorer(*, model: str | None = None, backend: str = "torch", method: str = "hybrid", batch_size: int = 32, mc_samples: int = 0,
                 seed: int = 0, claim_aggregation: str = "mean", granularity: str = "sentence"):
    """Load the backend once and build the scorer the service (and each Ray actor) serves with.

    >>> build_scorer(method="nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veridic.errors.ConfigError: Unknown method 'nope'; expected one of ('e', 'e-c', 'hybrid').
    """
    from veridic.errors import ConfigError
    from veridic.nli import NLIScorer, load_backend

    if method not in ("e", "e-c", "hybrid"):
        raise ConfigError(f"Unknown method {method!r}; expected one of ('e', 'e-c', 'hybrid').")
    b = load_backend(model, kind=backend, batch_size=batch_size)
    if method == "hybrid":
        from veridic.nli.hybrid import HybridScorer

        return HybridScorer(backend=b, mc_samples=mc_samples, seed=seed, claim_aggregation=claim_aggregation)
    return NLIScorer(backend=b, method=method, mc_samples=mc_samples, granularity=granularity, claim_aggregation=claim_aggregation, seed=seed)  # type: ignore[arg-type]
