"""The one registry of scorers, the :class:`Scorer` protocol and the one way to build a scorer.

Every entry point (``veridic.score``, ``veridic score``, the service, the Ray
engine, the detector's CLI, AutoAIS, ``veridic bench``) goes through
:func:`build_scorer`; none chooses a scorer class itself.

*Methods* are what :attr:`ScorerConfig.method` names (``hybrid``, ``e``,
``e-c``, ``overlap``, ``overlap-bigram``, plugins); each has a factory
``factory(config, backend) -> Scorer``. *Presets* are named configurations
that benchmarks list (``e+mc``, ``e-c-doc``, ``hybrid+mc``...); every method
is also a preset of itself. Scorers receive a backend; they never load one.

Other packages add scorers through the ``veridic.scorers`` entry-point
group (``name = "module:factory"``): a :class:`ScorerSpec` or a callable
``factory(backend)`` with optional ``needs_backend`` (default True) and
``summary`` attributes. They are imported only when their name is asked
for; built-in names win.

>>> s = build_scorer("overlap")
>>> [round(v.score, 2) for v in s.score(sources=["The cat sat on the mat."], claims=["The cat sat on a hat."])]
[0.67]
>>> s.decide(0.67), s.granularity
('supported', 'document')
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from veridic.config import NLI_OPTIONS, ScorerConfig
from veridic.errors import ConfigError, RegistryError, did_you_mean
from veridic.types import Label, Verdict

__all__ = [
    "ENTRY_POINT_GROUP",
    "Scorer",
    "ScorerSpec",
    "build_scorer",
    "get_method",
    "get_scorer_spec",
    "register_method",
    "register_preset",
    "register_scorer",
    "resolve_config",
    "scorer_names",
]

ENTRY_POINT_GROUP = "veridic.scorers"


@runtime_checkable
class Scorer(Protocol):
    """What the detector, AutoAIS, the service and the benchmark use from a scorer.

    ``granularity``: ``sentence`` when verdicts carry per-sentence results
    (the detector needs them), else ``document``. ``threshold``: where
    ``decide`` splits the verdict-score scale. ``sentence_threshold``: the
    same on a sentence verdict's score (the NLI scale: e, or e−c).
    ``decide(score, uncertainty)``: the label a verdict with that score gets.
    """

    name: str
    granularity: str
    threshold: float
    sentence_threshold: float

    def score(
        self,
        *,
        sources: Sequence[str],
        claims: Sequence[str],
        contexts: Sequence[Any] | None = None,
        progress: bool = False,
    ) -> list[Verdict]: ...

    def decide(self, score: float, uncertainty: float | None = None) -> Label: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ScorerSpec:
    """A registered name: its factory, whether it needs a model, and its configuration.

    ``factory(config, backend) -> Scorer``. ``config``: the configuration the
    name stands for (a preset). ``options``: the NLI options the method reads
    (others must stay at their defaults).
    """

    name: str
    factory: Callable[[ScorerConfig, Any], Any]
    needs_backend: bool
    summary: str
    config: ScorerConfig | None = None
    options: frozenset[str] = field(default_factory=frozenset)


_METHODS: dict[str, ScorerSpec] = {}
_PRESETS: dict[str, ScorerConfig] = {}
_PRESET_SUMMARIES: dict[str, str] = {}
# Kept as the name older code patches in tests: the union of methods and presets is built on demand.
_REGISTRY = _METHODS


def register_method(name: str, *, needs_backend: bool, summary: str, options: frozenset[str] | set[str] = frozenset(),
                    overwrite: bool = False) -> Callable[[Callable[[ScorerConfig, Any], Any]], Callable[[ScorerConfig, Any], Any]]:
    """Decorator: register ``factory(config, backend) -> Scorer`` as method ``name``."""

    def decorate(factory):
        if not overwrite and (name in _METHODS or name in _PRESETS):
            raise ConfigError(f"A scorer named {name!r} is already registered; pick another name or pass overwrite=True.")
        _METHODS[name] = ScorerSpec(name=name, factory=factory, needs_backend=needs_backend, summary=summary, options=frozenset(options))
        return factory

    return decorate


def register_scorer(name: str, *, needs_backend: bool, summary: str, overwrite: bool = False) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorator for a plain ``factory(backend) -> Scorer`` (no options), e.g. a wrapped external model."""

    def decorate(factory):
        register_method(name, needs_backend=needs_backend, summary=summary, overwrite=overwrite)(lambda config, backend: factory(backend))
        return factory

    return decorate


def register_preset(name: str, config: ScorerConfig, *, summary: str) -> None:
    """Register ``name`` as a named configuration (what ``veridic bench --scorer NAME`` builds)."""
    if name in _METHODS or name in _PRESETS:
        raise ConfigError(f"A scorer named {name!r} is already registered; pick another name.")
    _PRESETS[name] = config.replace(name=name)
    _PRESET_SUMMARIES[name] = summary


def _plugin_entry_points() -> dict[str, Any]:
    """Entry points of the ``veridic.scorers`` group whose names no built-in scorer takes."""
    from importlib.metadata import entry_points

    out: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _METHODS or ep.name in _PRESETS or ep.name in out:
            warnings.warn(f"The scorer plugin {ep.value!r} is named {ep.name!r}, which is already taken; it is ignored.", stacklevel=3)
            continue
        out[ep.name] = ep
    return out


def _spec_from_plugin(name: str, ep: Any) -> ScorerSpec:
    dist = getattr(getattr(ep, "dist", None), "name", None) or "its package"
    try:
        obj = ep.load()
    except Exception as exc:  # a broken plugin must not take the registry down, but must say why
        raise RegistryError(f"The scorer plugin {name!r} ({ep.value}, from {dist}) failed to import: {type(exc).__name__}: {exc}") from exc
    if isinstance(obj, ScorerSpec):
        return ScorerSpec(name=name, factory=obj.factory, needs_backend=obj.needs_backend, summary=obj.summary, options=obj.options)
    if not callable(obj):
        raise RegistryError(f"The scorer plugin {name!r} ({ep.value}) should be a ScorerSpec or a callable factory(backend) -> Scorer; got {type(obj).__name__}.")
    summary = getattr(obj, "summary", None) or ((obj.__doc__ or "").strip().splitlines() or [f"plugin from {dist}"])[0]
    return ScorerSpec(name=name, factory=lambda config, backend: obj(backend), needs_backend=bool(getattr(obj, "needs_backend", True)), summary=summary)


def scorer_names() -> list[str]:
    """Every name ``build_scorer`` accepts: methods, presets and plugins (without importing plugins)."""
    return sorted({*_METHODS, *_PRESETS, *_plugin_entry_points()})


def get_method(name: str) -> ScorerSpec:
    """The method ``name`` (a plugin is imported now), with a 'did you mean' hint when unknown."""
    if name in _METHODS:
        return _METHODS[name]
    plugins = _plugin_entry_points()
    if name in plugins:
        spec = _spec_from_plugin(name, plugins[name])
        _METHODS[name] = spec
        return spec
    names = sorted({*_METHODS, *_PRESETS, *plugins})
    extra = f" {name!r} is a preset; use it as the scorer name, or as ScorerConfig options: {_preset_hint(name)}." if name in _PRESETS else ""
    raise RegistryError(f"Unknown scorer {name!r}; registered scorers: {', '.join(names)}."
                        f"{extra}{did_you_mean(name, names) if not extra else ''}")


def _preset_hint(name: str) -> str:
    cfg, base = _PRESETS[name], ScorerConfig(method=_PRESETS[name].method)
    return ", ".join(f"{k}={getattr(cfg, k)!r}" for k in ("method", *sorted(NLI_OPTIONS)) if k == "method" or getattr(cfg, k) != getattr(base, k))


def get_scorer_spec(name: str) -> ScorerSpec:
    """A method or preset by name, with the configuration it stands for."""
    if name in _PRESETS:
        cfg = _PRESETS[name]
        m = get_method(cfg.method)
        return ScorerSpec(name=name, factory=m.factory, needs_backend=m.needs_backend, summary=_PRESET_SUMMARIES[name], config=cfg, options=m.options)
    m = get_method(name)
    cfg = m.config or _method_config(name)
    return ScorerSpec(name=name, factory=m.factory, needs_backend=m.needs_backend, summary=m.summary, config=cfg, options=m.options)


def _method_config(name: str) -> ScorerConfig:
    # A bare method: its defaults (the derived name is the method's own).
    return ScorerConfig(method=name)


def resolve_config(config: ScorerConfig | str | None = None, **options: Any) -> ScorerConfig:
    """A :class:`ScorerConfig` from a config, a registered name (method or preset) or None (the default), plus ``options``."""
    if config is None:
        base = ScorerConfig()
    elif isinstance(config, ScorerConfig):
        base = config
    elif isinstance(config, str):
        base = get_scorer_spec(config).config  # type: ignore[assignment]
        if options:
            options.setdefault("name", None)  # a preset changed by options is no longer that preset
    else:
        raise ConfigError(f"config must be a ScorerConfig or a scorer name; got {type(config).__name__}.")
    return base.replace(**options) if options else base


def build_scorer(config: ScorerConfig | str | None = None, *, backend: Any = None, name: str | None = None) -> Any:
    """Build the scorer ``config`` describes around ``backend`` (None for model-free methods).

    ``config``: a :class:`ScorerConfig`, a registered name (``"hybrid"``,
    ``"e-c-doc"``...) or None for the default. ``name=`` is the older
    spelling of a registered name.
    """
    if name is not None:
        if config is not None:
            raise ConfigError("Pass the scorer as config= (a ScorerConfig or a name) or as name=, not both.")
        config = name
    cfg = resolve_config(config)
    spec = get_method(cfg.method)
    if spec.needs_backend and backend is None:
        raise ConfigError(f"Scorer {cfg.label!r} needs a model backend; load one with veridic.nli.load_backend() and pass it as backend=.")
    if cfg.mc_samples and spec.needs_backend and not getattr(backend, "supports_mc", False):
        kind = backend.describe().get("backend", type(backend).__name__) if hasattr(backend, "describe") else type(backend).__name__
        raise ConfigError(f"mc_samples={cfg.mc_samples} needs a backend with dropout (the torch backend); the {kind!r} backend has none. "
                          "Use --backend torch, or mc_samples=0.")
    scorer = spec.factory(cfg, backend)
    for attr, value in (("name", cfg.label), ("config", cfg)):
        # The configuration's name is what reports show, whatever the object calls itself.
        try:
            setattr(scorer, attr, value)
        except AttributeError:
            pass
    _add_protocol_defaults(scorer, cfg)
    return scorer


def _add_protocol_defaults(scorer: Any, cfg: ScorerConfig) -> None:
    # A plain plugin scorer may lack the protocol's decision attributes; give it the config's.
    for attr, value in (("granularity", "document"), ("threshold", cfg.decision_threshold), ("sentence_threshold", cfg.decision_threshold)):
        if not hasattr(scorer, attr):
            try:
                setattr(scorer, attr, value)
            except AttributeError:
                pass
    if not hasattr(scorer, "decide"):
        try:
            scorer.decide = lambda score, uncertainty=None: "supported" if score >= scorer.threshold else "unsupported"
        except AttributeError:
            pass


# ---------------------------------------------------------------------------
# built-in methods (their modules are imported when a scorer is built)

_NLI_READS = NLI_OPTIONS


@register_method("e", needs_backend=True, summary="entailment probability, sentence-level (paper 004 Base)", options=_NLI_READS)
@register_method("e-c", needs_backend=True, summary="entailment minus contradiction, sentence-level (004 +e-c)", options=_NLI_READS)
def _nli(config: ScorerConfig, backend: Any) -> Any:
    from veridic.nli.scorer import NLIScorer

    return NLIScorer(backend=backend, config=config, structure=_structure(config))


def _structure(config: ScorerConfig) -> Any:
    """The parse-based structure check a config asks for (loaded once per process), or None."""
    if not config.structure_check or config.granularity != "sentence":
        return None
    from veridic.nli.structure import load_structure_check

    return load_structure_check()


@register_method("hybrid", needs_backend=True, options=_NLI_READS,
                 summary="NLI e-c (sentence-level) + lexical/entity signals, logistic weights shipped with the model")
def _hybrid(config: ScorerConfig, backend: Any) -> Any:
    from veridic.nli.hybrid import HybridScorer

    if config.hybrid_weights is None and getattr(backend, "default_hybrid_weights", None) is not None:
        # A backend that is not a model folder (the dummy) names the weights it runs hybrid with.
        config = config.replace(hybrid_weights=str(backend.default_hybrid_weights))
    return HybridScorer.from_config(config, backend=backend, structure=_structure(config))


@register_method("overlap", needs_backend=False, summary="content-word unigram overlap with the source")
def _overlap(config: ScorerConfig, backend: Any) -> Any:
    from veridic.overlap import OverlapScorer

    return OverlapScorer(ngram=1, threshold=config.threshold)


@register_method("overlap-bigram", needs_backend=False, summary="token bigram overlap with the source")
def _overlap_bigram(config: ScorerConfig, backend: Any) -> Any:
    from veridic.overlap import OverlapScorer

    return OverlapScorer(ngram=2, threshold=config.threshold)


for _name, _summary, _cfg in (
    ("e+mc", "entailment probability with 15 Monte-Carlo dropout samples", ScorerConfig(method="e", mc_samples=15)),
    ("e-c+mc", "e-c with 15 Monte-Carlo dropout samples (004 All)", ScorerConfig(method="e-c", mc_samples=15)),
    ("e-doc", "entailment probability, whole claim against source chunks", ScorerConfig(method="e", granularity="document")),
    ("e-c-doc", "e-c, whole claim against source chunks", ScorerConfig(method="e-c", granularity="document")),
    ("hybrid+mc", "hybrid with 15 Monte-Carlo dropout samples", ScorerConfig(method="hybrid", mc_samples=15)),
):
    register_preset(_name, _cfg, summary=_summary)
