"""The one way to make a scorer: :func:`build_scorer` (around a backend you have) and :func:`load_scorer` (loading it).

Every entry point — :func:`veridic.score`, ``veridic score``, the service, the Ray engine, the detector,
AutoAIS, the probes, ``veridic bench`` — goes through :func:`build_scorer`, and every scorer class takes
exactly ``(config, backend, resources)``. Whatever a configuration asks for (the parse-based structure
check, the hybrid weights shipped with the model) is attached here, so equal configurations always give
equal scorers.

>>> s = build_scorer("overlap")
>>> round(s.score(sources=["The cat sat on the mat."], claims=["The cat sat on a hat."])[0].score, 2)
0.67
>>> s.decide(0.67), s.granularity
('supported', 'document')
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from veridic.config import ScorerConfig, resolve_config
from veridic.errors import ConfigError
from veridic.registry import ScorerSpec, get_method
from veridic.types import Label, Scorer, Verdict

__all__ = ["Resources", "build_scorer", "cached_backend", "load_scorer"]


@dataclass(frozen=True)
class Resources:
    """What a scorer uses beside its model backend, loaded once and shared.

    ``structure``: the parse-based structure check (:class:`veridic.nli._structure.StructureCheck`),
    needed when a sentence-level NLI configuration has ``structure_check`` on. :func:`build_scorer`
    loads the default one when it is needed and not given.
    """

    structure: Any = None


def _resources_for(cfg: ScorerConfig, spec: ScorerSpec, given: Resources | None) -> Resources:
    res = given or Resources()
    wants_structure = "structure_check" in spec.options and cfg.structure_check and cfg.granularity == "sentence"
    if wants_structure and res.structure is None:
        from veridic.nli._structure import load_structure_check

        res = Resources(structure=load_structure_check())
    return res


def build_scorer(config: ScorerConfig | str | None = None, *, backend: Any = None, resources: Resources | None = None) -> Scorer:
    """Build the scorer ``config`` describes around ``backend`` (None for model-free methods).

    ``config``: a :class:`~veridic.config.ScorerConfig`, a registered name (``"hybrid"``, ``"e-c-doc"``...)
    or None for the default. ``resources``: shared components (see :class:`Resources`); what the
    configuration needs and is missing is loaded here.
    """
    cfg = resolve_config(config)
    spec = get_method(cfg.method)
    if spec.needs_backend and backend is None:
        raise ConfigError(f"Scorer {cfg.label!r} needs a model backend; load one with veridic.nli.load_backend() and pass it as backend=, "
                          "or use veridic.load_scorer(config), which loads it.")
    if cfg.mc_samples and spec.needs_backend and not getattr(backend, "supports_mc", False):
        kind = backend.describe().get("backend", type(backend).__name__) if hasattr(backend, "describe") else type(backend).__name__
        raise ConfigError(f"mc_samples={cfg.mc_samples} needs a backend with dropout (the torch backend); the {kind!r} backend has none. "
                          "Use --backend torch, or mc_samples=0.")
    scorer = spec.load_factory()(cfg, backend, _resources_for(cfg, spec, resources))
    if not all(hasattr(scorer, a) for a in ("threshold", "sentence_threshold", "granularity", "decide", "config")):
        scorer = PluginScorer(scorer, cfg)
    try:
        scorer.name = cfg.label  # the configuration's name is what reports show, whatever the object calls itself
    except AttributeError:
        scorer = PluginScorer(scorer, cfg)
    return cast(Scorer, scorer)


class PluginScorer:
    """A plugin's scorer that lacks part of the :class:`~veridic.types.Scorer` protocol, completed from its configuration."""

    def __init__(self, inner: Any, config: ScorerConfig):
        self.inner = inner
        self.config = config
        self.name = config.label
        self.granularity = getattr(inner, "granularity", "document")
        self.threshold = float(getattr(inner, "threshold", config.decision_threshold))
        self.sentence_threshold = float(getattr(inner, "sentence_threshold", self.threshold))

    def score(self, *, sources: Any, claims: Any, contexts: Any = None, progress: bool = False) -> list[Verdict]:
        return list(self.inner.score(sources=sources, claims=claims, contexts=contexts, progress=progress))

    def decide(self, score: float, uncertainty: float | None = None) -> Label:
        if hasattr(self.inner, "decide"):
            return cast(Label, self.inner.decide(score, uncertainty))
        return "supported" if score >= self.threshold else "unsupported"

    def describe(self) -> dict[str, Any]:
        d = dict(self.inner.describe()) if hasattr(self.inner, "describe") else {"scorer": type(self.inner).__name__}
        return {**d, "name": self.name}


_CACHE: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.Lock()


def cached_backend(model: str | Path | None = None, *, kind: str = "auto", **kwargs: Any) -> Any:
    """Load a backend once per process; repeated calls with the same arguments reuse it (loading takes seconds)."""
    from veridic.nli._backend import load_backend

    key = (str(model), kind, tuple(sorted(kwargs.items())))
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_backend(model, kind=kind, **kwargs)
        return _CACHE[key]


def load_scorer(
    config: ScorerConfig | str | None = None,
    *,
    model: str | Path | None = None,
    backend: str = "auto",
    device: str = "cpu",
    dtype: str = "auto",
    batch_size: int = 32,
    reuse: bool = True,
    resources: Resources | None = None,
    **options: Any,
) -> Scorer:
    """Load the backend (once per process with ``reuse``) and :func:`build_scorer` what ``config`` describes.

    What ``veridic score``, ``veridic serve``, each Ray actor and the detector's CLI call. Options are
    validated (and ``device`` checked) before any model loads; model-free methods load nothing. The backend
    kind and dtype are decided by :func:`veridic.nli.load_backend` alone (``auto``: ONNX int8 on the CPU
    where it runs the configuration, else torch).

    >>> load_scorer("overlap").name
    'overlap'
    """
    from veridic.device import check_device, check_dtype
    from veridic.nli._backend import load_backend

    cfg = resolve_config(config, **options)
    if not get_method(cfg.method).needs_backend:
        return build_scorer(cfg, resources=resources)
    check_dtype(dtype, device=check_device(device))
    load = cached_backend if reuse else load_backend
    extra = {"mc_samples": cfg.mc_samples} if backend == "auto" and cfg.mc_samples else {}
    return build_scorer(cfg, backend=load(model, kind=backend, device=device, dtype=dtype, batch_size=batch_size, **extra), resources=resources)
