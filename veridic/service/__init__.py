"""HTTP service: ``veridic serve`` (FastAPI) over models loaded once at start-up.

``create_app(scorer=..., detector=..., settings=...)`` builds the app from
loaded objects; :func:`load_service_scorer` is what the CLI uses to load them.
Needs the ``service`` extra (fastapi, uvicorn, prometheus-client).

>>> from veridic.service import ServiceSettings
>>> ServiceSettings(max_batch=16).max_batch
16
"""

from veridic.service._batching import MicroBatcher, Overloaded
from veridic.service._settings import ServiceSettings

__all__ = ["MicroBatcher", "Overloaded", "ServiceSettings", "create_app", "load_service_scorer"]


def create_app(**kwargs):
    """See :func:`veridic.service._app.create_app` (imported lazily: it needs the 'service' extra)."""
    from veridic.service._app import create_app as _create

    return _create(**kwargs)


def load_service_scorer(config=None, *, model: str | None = None, backend: str = "auto", batch_size: int = 32, device: str = "cpu",
                 dtype: str = "auto", max_mc_samples: int = 0, **options):
    """Load the backend once and build (:func:`veridic.build_scorer`) the scorer the service and each Ray actor serve with.

    ``config``: a :class:`veridic.config.ScorerConfig` or a registered name;
    keyword ``options`` are its fields. Same as :func:`veridic.factory.load_scorer`,
    whose default backend (``auto``: ONNX int8 on the CPU where it runs the
    configuration, else torch) it shares. ``max_mc_samples``: the most
    Monte-Carlo samples a request may ask for; above 0, ``auto`` means torch,
    the one backend with dropout.

    >>> load_service_scorer(method="nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veridic.errors.RegistryError: method='nope': Unknown scorer 'nope'; registered: ...
    """
    from veridic.factory import load_scorer

    if backend == "auto" and max_mc_samples > 0:
        # requests may ask for dropout samples later, on this same backend: pick the one that runs them now
        backend = "torch"
    return load_scorer(config, model=model, backend=backend, batch_size=batch_size, device=device, dtype=dtype, **options)
