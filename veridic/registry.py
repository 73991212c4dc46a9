"""What veridic knows about its scorers, backends and dataset groups, in one kind of registry.

A :class:`Registry` maps names to specs. Built-in entries are data (a factory is a ``"module:attr"``
string imported when first used), so this module imports nothing above :mod:`veridic.errors`.
Each registry has an entry-point group through which other packages add entries; built-in names
win, and a plugin is imported only when its name is asked for.

* :data:`SCORERS` — methods (:class:`ScorerSpec`): each carries its score scale, default threshold,
  the granularities it supports and the options it reads. :class:`veridic.config.ScorerConfig`
  validates against the spec; :func:`veridic.factory.build_scorer` calls its factory. An unknown
  method is an error, never a silent default.
* :data:`PRESETS` — named configurations (:class:`PresetSpec`, e.g. ``e-c-doc``) that benchmarks list.
* :data:`BACKENDS` — model runtimes (:class:`BackendSpec`: torch, onnx, dummy).
* :data:`DATASET_GROUPS` — named groups of benchmark files (``dev``, ``contrast``...).

A new method is one file plus one registration (the extending guide shows it):

>>> spec = ScorerSpec(name="e-n", factory="veridic.nli:NLIScorer", summary="entailment minus neutral",
...                   scale=(-1.0, 1.0), default_threshold=0.0, granularities=("sentence", "document"),
...                   options=NLI_OPTIONS, nli_score=lambda enc: enc[..., 0] - enc[..., 1])
>>> spec.scale, "e-n" in SCORERS
((-1.0, 1.0), False)
>>> SCORERS.get("e_c")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
veridic.errors.RegistryError: Unknown scorer 'e_c'; registered: ... Did you mean 'e-c'...
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from veridic.errors import ConfigError, RegistryError, did_you_mean

__all__ = [
    "BACKENDS",
    "DATASET_GROUPS",
    "ENTRY_POINT_GROUP",
    "NLI_OPTIONS",
    "PRESETS",
    "SCORERS",
    "BackendSpec",
    "PresetSpec",
    "Registry",
    "ScorerSpec",
    "get_method",
    "get_scorer_spec",
    "load_object",
    "register_method",
    "register_preset",
    "register_scorer",
    "scorer_names",
]

T = TypeVar("T")

#: entry-point group of scorer plugins (``name = "module:factory"``).
ENTRY_POINT_GROUP = "veridic.scorers"

#: the options only an NLI-based method reads; a method that does not read one requires its default.
NLI_OPTIONS = frozenset({"mc_samples", "granularity", "source_aggregation", "claim_aggregation", "window_sentences", "max_windows",
                         "whole_source", "context_mode", "abstain_above", "seed", "structure_check", "verbatim_support"})


def load_object(ref: str) -> Any:
    """The object a ``"module:attr"`` reference names (``attr`` may be dotted)."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise RegistryError(f"A registry reference must look like 'package.module:attribute'; got {ref!r}.")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Names → specs of one kind, with an entry-point group for plugins.

    ``coerce(name, obj)`` turns a loaded plugin object into a spec (None: the object must already be one).

    >>> r = Registry("colour")
    >>> r.register("red", 1)
    >>> r.get("red"), r.names()
    (1, ['red'])
    >>> r.get("rde")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    veridic.errors.RegistryError: Unknown colour 'rde'; registered: red. Did you mean 'red'?
    """

    def __init__(self, kind: str, *, entry_point_group: str | None = None, coerce: Callable[[str, Any], T] | None = None,
                 hint: Callable[[str], str] | None = None):
        self.kind = kind
        self.entry_point_group = entry_point_group
        self._coerce = coerce
        self._hint = hint
        self._entries: dict[str, T] = {}

    def register(self, name: str, spec: T, *, overwrite: bool = False) -> None:
        """Add ``spec`` as ``name``; a taken name is an error unless ``overwrite``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"A {self.kind} name must be a non-empty string; got {name!r}.")
        if not overwrite and name in self._entries:
            raise ConfigError(f"A {self.kind} named {name!r} is already registered; pick another name or pass overwrite=True.")
        self._entries[name] = spec

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def _plugins(self) -> dict[str, Any]:
        if self.entry_point_group is None:
            return {}
        from importlib.metadata import entry_points

        out: dict[str, Any] = {}
        for ep in entry_points(group=self.entry_point_group):
            if ep.name in self._entries or ep.name in out or self._taken_elsewhere(ep.name):
                warnings.warn(f"The {self.kind} plugin {ep.value!r} is named {ep.name!r}, which is already taken; it is ignored.", stacklevel=3)
                continue
            out[ep.name] = ep
        return out

    def _taken_elsewhere(self, name: str) -> bool:
        # Scorer plugins may not shadow presets either (they share one namespace of scorer names).
        return self is SCORERS and name in PRESETS

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def names(self, *, plugins: bool = True) -> list[str]:
        """Registered names, and (``plugins``) the entry points' names, without importing them."""
        return sorted({*self._entries, *(self._plugins() if plugins else {})})

    def get(self, name: str) -> T:
        """The spec of ``name`` (a plugin is imported and kept now); a 'did you mean' error when unknown."""
        if name in self._entries:
            return self._entries[name]
        plugins = self._plugins()
        if name in plugins:
            ep = plugins[name]
            dist = getattr(getattr(ep, "dist", None), "name", None) or "its package"
            try:
                obj = ep.load()
            except Exception as exc:  # a broken plugin must not take the registry down, but must say why
                raise RegistryError(f"The {self.kind} plugin {name!r} ({ep.value}, from {dist}) failed to import: {type(exc).__name__}: {exc}") from exc
            spec = self._coerce(name, obj) if self._coerce else obj
            self._entries[name] = spec
            return spec
        names = sorted({*self._entries, *plugins, *(PRESETS.names(plugins=False) if self is SCORERS else ())})
        extra = self._hint(name) if self._hint else ""
        raise RegistryError(f"Unknown {self.kind} {name!r}; registered: {', '.join(names)}.{extra or did_you_mean(name, names)}")


# ---------------------------------------------------------------------------
# scorers


@dataclass(frozen=True)
class ScorerSpec:
    """A method: how to build it and the facts the configuration is checked against.

    ``factory(config, backend, resources) -> Scorer``, or a ``"module:attr"`` string naming one.
    ``scale``: the verdict score's range; ``default_threshold``: where ``decide`` splits it.
    ``granularities``: the ``granularity`` values it supports (checked only when it reads that option).
    ``options``: the :class:`~veridic.config.ScorerConfig` options it reads (beyond method, threshold,
    name); others must keep their defaults. ``nli_score``: for NLI-derived methods, the score of
    ``[..., 3]`` arrays of entailment, neutral, contradiction probabilities. ``calibrated``: whether
    reports may judge it at its own threshold (else at an oracle threshold, as for word overlap).
    """

    name: str
    factory: Callable[..., Any] | str
    summary: str
    needs_backend: bool = True
    scale: tuple[float, float] = (0.0, 1.0)
    default_threshold: float = 0.5
    granularities: tuple[str, ...] = ("sentence", "document")
    options: frozenset[str] = field(default_factory=frozenset)
    nli_score: Callable[[Any], Any] | None = None
    #: whether ``default_threshold`` is a real decision point (an uncalibrated baseline's is a convenience)
    calibrated: bool = True

    def __post_init__(self) -> None:
        lo, hi = self.scale
        if not lo <= self.default_threshold <= hi:
            raise ConfigError(f"Scorer {self.name!r}: default_threshold={self.default_threshold} lies off its scale [{lo:g}, {hi:g}].")

    def load_factory(self) -> Callable[..., Any]:
        """The factory, imported now when it is a reference."""
        return load_object(self.factory) if isinstance(self.factory, str) else self.factory


@dataclass(frozen=True)
class PresetSpec:
    """A named configuration: ``options`` are :class:`~veridic.config.ScorerConfig` fields (``method`` included)."""

    name: str
    options: Mapping[str, Any]
    summary: str

    @property
    def method(self) -> str:
        return str(self.options.get("method", "hybrid"))


def _scorer_from_plugin(name: str, obj: Any) -> ScorerSpec:
    """A plugin object as a spec: a :class:`ScorerSpec`, or a callable ``factory(backend) -> Scorer``."""
    if isinstance(obj, ScorerSpec):
        return replace(obj, name=name)
    if not callable(obj):
        raise RegistryError(f"The scorer plugin {name!r} should be a ScorerSpec or a callable factory(backend) -> Scorer; got {type(obj).__name__}.")
    summary = getattr(obj, "summary", None) or ((obj.__doc__ or "").strip().splitlines() or ["plugin"])[0]
    return ScorerSpec(name=name, factory=_PluginFactory(obj), needs_backend=bool(getattr(obj, "needs_backend", True)), summary=summary,
                      granularities=("document",), calibrated=False)


@dataclass(frozen=True)
class _PluginFactory:
    """``factory(backend)`` of a plain plugin, called the way every factory is."""

    make: Callable[[Any], Any]

    def __call__(self, config: Any, backend: Any, resources: Any = None) -> Any:
        return self.make(backend)


def _preset_hint(name: str) -> str:
    if name not in PRESETS:
        return ""
    opts = ", ".join(f"{k}={v!r}" for k, v in PRESETS.get(name).options.items())
    return f" {name!r} is a preset; use it as the scorer name, or as ScorerConfig options: {opts}."


SCORERS: Registry[ScorerSpec] = Registry("scorer", entry_point_group=ENTRY_POINT_GROUP, coerce=_scorer_from_plugin, hint=_preset_hint)
PRESETS: Registry[PresetSpec] = Registry("preset")


def register_method(name: str, *, needs_backend: bool, summary: str, options: frozenset[str] | set[str] = frozenset(),
                    scale: tuple[float, float] = (0.0, 1.0), default_threshold: float = 0.5,
                    granularities: tuple[str, ...] = ("sentence", "document"), overwrite: bool = False
                    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``factory(config, backend, resources) -> Scorer`` as method ``name``.

    >>> @register_method("demo-len", needs_backend=False, summary="claim length (a demo)")
    ... def _demo(config, backend, resources):
    ...     raise NotImplementedError
    >>> get_method("demo-len").needs_backend
    False
    >>> SCORERS.unregister("demo-len")
    """

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        if not overwrite and name in PRESETS:
            raise ConfigError(f"A scorer named {name!r} is already registered; pick another name or pass overwrite=True.")
        SCORERS.register(name, ScorerSpec(name=name, factory=factory, needs_backend=needs_backend, summary=summary, options=frozenset(options),
                                          scale=scale, default_threshold=default_threshold, granularities=granularities), overwrite=overwrite)
        return factory

    return decorate


def register_scorer(name: str, *, needs_backend: bool, summary: str, overwrite: bool = False) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Decorator for a plain ``factory(backend) -> Scorer`` that reads no options, e.g. a wrapped external model."""

    def decorate(factory: Callable[[Any], Any]) -> Callable[[Any], Any]:
        if not overwrite and name in PRESETS:
            raise ConfigError(f"A scorer named {name!r} is already registered; pick another name or pass overwrite=True.")
        SCORERS.register(name, replace(_scorer_from_plugin(name, factory), needs_backend=needs_backend, summary=summary), overwrite=overwrite)
        return factory

    return decorate


def register_preset(name: str, options: Mapping[str, Any], *, summary: str) -> None:
    """Register ``name`` as a named configuration (what ``veridic bench --scorer NAME`` builds)."""
    if name in SCORERS or name in PRESETS:
        raise ConfigError(f"A scorer named {name!r} is already registered; pick another name.")
    PRESETS.register(name, PresetSpec(name=name, options=dict(options), summary=summary))


def get_method(name: str) -> ScorerSpec:
    """The method ``name`` (a plugin is imported now); presets are not methods (see :func:`get_scorer_spec`)."""
    return SCORERS.get(name)


def get_scorer_spec(name: str) -> ScorerSpec:
    """The spec behind a scorer name: a method's own, or a preset's method's under the preset's name and summary."""
    if name in PRESETS:
        preset = PRESETS.get(name)
        return replace(SCORERS.get(preset.method), name=name, summary=preset.summary)
    return SCORERS.get(name)


def scorer_names() -> list[str]:
    """Every name a scorer can be built from: methods, presets and plugins (plugins are not imported)."""
    return sorted({*SCORERS.names(), *PRESETS.names()})


# ---------------------------------------------------------------------------
# backends


@dataclass(frozen=True)
class BackendSpec:
    """A model runtime: ``loader(model, **options) -> NLIBackend`` (or a ``"module:attr"`` reference)."""

    name: str
    loader: Callable[..., Any] | str
    summary: str
    #: whether it can sample Monte-Carlo dropout (``mc_samples``)
    supports_mc: bool = False

    def load_loader(self) -> Callable[..., Any]:
        return load_object(self.loader) if isinstance(self.loader, str) else self.loader


BACKENDS: Registry[BackendSpec] = Registry("backend", entry_point_group="veridic.backends",
                                           coerce=lambda name, obj: obj if isinstance(obj, BackendSpec) else BackendSpec(name=name, loader=obj, summary="plugin"))

#: benchmark file groups: name → ``resolver() -> list[Path]``.
DATASET_GROUPS: Registry[Callable[[], list[Any]]] = Registry("dataset group", entry_point_group="veridic.datasets")


# ---------------------------------------------------------------------------
# built-in entries (data only: factories are imported when a scorer is built)

_NLI_GRANULARITIES = ("sentence", "document")
for _spec in (
    ScorerSpec(name="e", factory="veridic.nli._scorer:NLIScorer", summary="entailment probability, sentence-level (paper 004 Base)",
               scale=(0.0, 1.0), default_threshold=0.5, granularities=_NLI_GRANULARITIES, options=NLI_OPTIONS,
               nli_score=lambda enc: enc[..., 0]),
    ScorerSpec(name="e-c", factory="veridic.nli._scorer:NLIScorer", summary="entailment minus contradiction, sentence-level (004 +e-c)",
               scale=(-1.0, 1.0), default_threshold=0.0, granularities=_NLI_GRANULARITIES, options=NLI_OPTIONS,
               nli_score=lambda enc: enc[..., 0] - enc[..., 2]),
    ScorerSpec(name="hybrid", factory="veridic.nli._hybrid:HybridScorer",
               summary="NLI e-c (sentence-level) + lexical/entity signals, logistic weights shipped with the model",
               scale=(0.0, 1.0), default_threshold=0.5, granularities=("sentence",), options=NLI_OPTIONS | {"hybrid_weights"}),
    ScorerSpec(name="overlap", factory="veridic.overlap:OverlapScorer", summary="content-word unigram overlap with the source",
               needs_backend=False, granularities=("document",), calibrated=False),
    ScorerSpec(name="overlap-bigram", factory="veridic.overlap:OverlapScorer", summary="token bigram overlap with the source",
               needs_backend=False, granularities=("document",), calibrated=False),
):
    SCORERS.register(_spec.name, _spec)

for _name, _summary, _options in (
    ("e+mc", "entailment probability with 15 Monte-Carlo dropout samples", {"method": "e", "mc_samples": 15}),
    ("e-c+mc", "e-c with 15 Monte-Carlo dropout samples (004 All)", {"method": "e-c", "mc_samples": 15}),
    ("e-doc", "entailment probability, whole claim against source chunks", {"method": "e", "granularity": "document"}),
    ("e-c-doc", "e-c, whole claim against source chunks", {"method": "e-c", "granularity": "document"}),
    ("hybrid+mc", "hybrid with 15 Monte-Carlo dropout samples", {"method": "hybrid", "mc_samples": 15}),
):
    register_preset(_name, _options, summary=_summary)

for _b in (
    BackendSpec(name="torch", loader="veridic.nli._backend:TorchNLIBackend", summary="PyTorch (every option, Monte-Carlo dropout included)",
                supports_mc=True),
    BackendSpec(name="onnx", loader="veridic.nli._backend:OnnxNLIBackend", summary="ONNX Runtime (int8 or float32 export; CPU)"),
    BackendSpec(name="dummy", loader="veridic.nli._dummy:load_dummy", summary="deterministic word-overlap stand-in (tests, examples)"),
):
    BACKENDS.register(_b.name, _b)
