"""One scorer configuration, shared by every entry point (API, CLI, service, Ray, detector, AutoAIS, bench).

A :class:`ScorerConfig` is frozen and validated once, when it is made: a
bad value or a combination no scorer supports fails here, with a message
that names the options involved, before any model loads.
Each method's facts (scale, default threshold, granularities, the options it
reads) come from its :class:`~veridic.registry.ScorerSpec`;
:func:`veridic.factory.build_scorer` turns a config into a scorer around a
backend.

Scales: a verdict's ``score`` is on the method's scale — ``e``: entailment
probability in [0, 1]; ``e-c``: entailment minus contradiction in [-1, 1];
``hybrid``: probability that the claim is faithful in [0, 1]. A *sentence*
verdict's ``score`` is always the NLI scale (``e`` for method ``e``, e−c
otherwise, hybrid included). ``threshold`` is on the verdict scale.

>>> cfg = ScorerConfig(method="e-c", max_windows=4)
>>> cfg.decision_threshold, cfg.replace(mc_samples=15).mc_samples
(0.0, 15)
>>> ScorerConfig(method="hybrid", granularity="document")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
veridic.errors.ConfigError: method='hybrid' needs granularity='sentence' ...
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from veridic.aggregate import CLAIM_AGGREGATIONS, SOURCE_AGGREGATIONS
from veridic.errors import ConfigError, RegistryError, did_you_mean
from veridic.registry import NLI_OPTIONS, PRESETS, SCORERS, ScorerSpec
from veridic.types import _Record

__all__ = ["GRANULARITIES", "CONTEXT_MODES", "NLI_OPTIONS", "ScorerConfig", "resolve_config"]

GRANULARITIES = ("sentence", "document")
CONTEXT_MODES = ("ignore", "premise")


@dataclass(frozen=True)
class ScorerConfig(_Record):
    """What a scorer computes, independent of the model that runs it.

    ``method``: a registered method (``hybrid`` default, ``e``, ``e-c``,
    ``overlap``, ``overlap-bigram`` or a plugin). ``mc_samples``: Monte-Carlo
    dropout samples (0 off, else >= 2; needs the torch backend).
    ``granularity``: ``sentence`` (each claim sentence against windows of
    ``window_sentences`` consecutive source sentences; a list of lengths,
    e.g. ``[1, 2]``, pools windows of each length, ``max_windows`` of each
    kept) or ``document`` (the whole claim against token-budgeted chunks). ``source_aggregation``
    (``max``, ``first``, ``uncontradicted``, ``uncontradicted-relevant``) picks a window per claim piece
    (``uncontradicted``: ``max``'s window, its contradiction raised to the strongest of any kept window;
    ``-relevant``: of any kept window holding half the claim sentence's content words);
    ``claim_aggregation`` (``mean``, ``min``, ``softmin``) pools sentences.
    ``max_windows``: keep at most this many windows per claim sentence, those
    sharing most content words with it (None: all). ``whole_source``: also
    judge each claim sentence against the whole source when it fits the
    model in one piece (costly: a long pair per sentence). ``context_mode``:
    ``ignore`` or ``premise`` (prepend the dialogue context to the source).
    ``threshold``: on the verdict-score scale (None: the method's default,
    0.5 for ``e``/``hybrid``, 0.0 for ``e-c``). ``abstain_above``: label
    ``abstain`` when the MC-dropout std exceeds it (needs ``mc_samples``).
    ``structure_check``: parse each claim sentence and its evidence window,
    and judge it a contradiction when two arguments are in exchanged roles
    or the predicate is reversed ("YouTube acquired Google" against "Google
    acquired YouTube"; :mod:`veridic.nli._structure`; needs spaCy).
    ``verbatim_support``: a claim sentence that repeats a source sentence
    word for word (case and punctuation aside) is entailed, whatever the
    model says (the embedded model calls most such copies contradictions).
    ``hybrid_weights``: a ``hybrid.json`` path (None: the weights shipped
    with the model). ``name``: what reports call the scorer (default derived).
    """

    method: str = "hybrid"
    mc_samples: int = 0
    granularity: str = "sentence"
    source_aggregation: str = "max"
    claim_aggregation: str = "mean"
    window_sentences: int | tuple[int, ...] = 2
    # Defaults measured on the dev sets: 4 windows and no whole-source pair cost no AUC against 8 windows + whole
    # source, with ~45 % fewer model tokens. The hybrid weights are fitted on this setting.
    max_windows: int | None = 4
    whole_source: bool = False
    context_mode: str = "ignore"
    # On by default: argument swaps on the contrast suite 64 -> 94 % (hybrid), dev pool unchanged.
    structure_check: bool = True
    verbatim_support: bool = True
    threshold: float | None = None
    abstain_above: float | None = None
    seed: int = 0
    hybrid_weights: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        m = self.method
        if not isinstance(m, str) or not m:
            raise ConfigError(f"method must be a method name such as 'hybrid', 'e-c' or 'e'; got {m!r}.")
        _int("mc_samples", self.mc_samples)
        if self.mc_samples < 0 or self.mc_samples == 1:
            raise ConfigError(f"mc_samples must be 0 (off) or >= 2; got {self.mc_samples}.")
        if self.granularity not in GRANULARITIES:
            raise ConfigError(f"granularity must be 'sentence' or 'document'; got {self.granularity!r}.{did_you_mean(str(self.granularity), GRANULARITIES)}")
        if self.source_aggregation not in SOURCE_AGGREGATIONS:
            raise ConfigError(f"Unknown source_aggregation {self.source_aggregation!r}; expected one of {sorted(SOURCE_AGGREGATIONS)}."
                              + did_you_mean(str(self.source_aggregation), SOURCE_AGGREGATIONS))
        if self.claim_aggregation not in CLAIM_AGGREGATIONS:
            raise ConfigError(f"Unknown claim_aggregation {self.claim_aggregation!r}; expected one of {sorted(CLAIM_AGGREGATIONS)}."
                              + did_you_mean(str(self.claim_aggregation), CLAIM_AGGREGATIONS))
        object.__setattr__(self, "window_sentences", _window_lengths(self.window_sentences))
        if self.max_windows is not None:
            _int("max_windows", self.max_windows)
            if self.max_windows < 1:
                raise ConfigError(f"max_windows must be >= 1 or None (all windows); got {self.max_windows}.")
        if not isinstance(self.whole_source, bool):
            raise ConfigError(f"whole_source must be true or false; got {self.whole_source!r}.")
        for flag in ("structure_check", "verbatim_support"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{flag} must be true or false; got {getattr(self, flag)!r}.")
        if self.context_mode not in CONTEXT_MODES:
            raise ConfigError(f"context_mode must be 'ignore' or 'premise'; got {self.context_mode!r}.")
        _int("seed", self.seed)
        if self.abstain_above is not None:
            _number("abstain_above", self.abstain_above)
            if self.abstain_above < 0:
                raise ConfigError(f"abstain_above is a standard deviation and must be >= 0; got {self.abstain_above}.")
            if not self.mc_samples:
                raise ConfigError(f"abstain_above={self.abstain_above} needs an uncertainty estimate, which mc_samples=0 does not give: "
                                  "set mc_samples (e.g. 15) too, or drop abstain_above.")
        if self.threshold is not None:
            _number("threshold", self.threshold)
        if self.hybrid_weights is not None and not isinstance(self.hybrid_weights, str):
            raise ConfigError(f"hybrid_weights must be a path to a hybrid.json file (a string); got {type(self.hybrid_weights).__name__}.")
        self._check_against_spec(self.spec)

    @property
    def spec(self) -> ScorerSpec:
        """The registered method this configuration names (a plugin is imported now)."""
        try:
            return SCORERS.get(self.method)
        except RegistryError as exc:
            raise RegistryError(f"method={self.method!r}: {exc}") from None

    def _check_against_spec(self, spec: ScorerSpec) -> None:
        m = self.method
        unread = sorted((NLI_OPTIONS | {"hybrid_weights"}) - spec.options)
        for f in unread:
            if getattr(self, f) != _FIELD_DEFAULTS[f]:
                readers = sorted(n for n in SCORERS if f in SCORERS.get(n).options)
                if f == "hybrid_weights":
                    raise ConfigError(f"hybrid_weights={self.hybrid_weights!r} is read only by method={' or '.join(map(repr, readers))}; "
                                      f"got method={m!r}. Drop one of the two.")
                raise ConfigError(f"method={m!r} does not use {f} (got {f}={getattr(self, f)!r}); drop {f} or pick a method that reads it "
                                  f"({', '.join(readers)}).")
        if "granularity" in spec.options and self.granularity not in spec.granularities:
            raise ConfigError(f"method={m!r} needs granularity={' or '.join(map(repr, spec.granularities))} (its scores are defined per "
                              f"{' or '.join(spec.granularities)}); got granularity={self.granularity!r}. "
                              f"Use method='e-c' with granularity={self.granularity!r}, or keep granularity={spec.granularities[0]!r}.")
        if self.threshold is not None:
            lo, hi = spec.scale
            if not lo <= self.threshold <= hi:
                raise ConfigError(f"threshold={self.threshold} is off the scale of method={m!r}, whose scores lie in [{lo:g}, {hi:g}].")

    # ------------------------------------------------------------------ derived values
    @property
    def decision_threshold(self) -> float:
        """``threshold``, or the method's default when it is None."""
        if self.threshold is not None:
            return float(self.threshold)
        return float(self.spec.default_threshold)

    @property
    def label(self) -> str:
        """The scorer's display name: ``name`` or one derived from the method and options."""
        if self.name:
            return self.name
        return self.method + ("+mc" if self.mc_samples else "") + ("-doc" if self.granularity == "document" else "")

    # ------------------------------------------------------------------ building
    def replace(self, **changes: Any) -> ScorerConfig:
        """A copy with ``changes`` (validated again); an unknown option is a clear error."""
        _check_names(changes)
        return replace(self, **changes)

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None = None, **more: Any) -> ScorerConfig:
        """Build from a mapping (a service request's ``options``, a YAML block); unknown keys are refused by name."""
        merged = {**dict(options or {}), **more}
        _check_names(merged)
        return cls(**merged)


    def nli_options(self) -> dict[str, Any]:
        """Keyword arguments of :class:`veridic.nli.NLIScorer` for this configuration."""
        return {f: getattr(self, f) for f in sorted(NLI_OPTIONS)} | {"threshold": self.threshold}


OPTION_NAMES = tuple(f.name for f in fields(ScorerConfig))
_FIELD_DEFAULTS = {f.name: f.default for f in fields(ScorerConfig)}


def resolve_config(config: ScorerConfig | str | None = None, **options: Any) -> ScorerConfig:
    """A :class:`ScorerConfig` from a config, a registered name (method or preset) or None (the default), plus ``options``.

    >>> resolve_config("e-c-doc").granularity, resolve_config("e-c-doc", seed=3).label
    ('document', 'e-c-doc')
    """
    if config is None:
        base = ScorerConfig()
    elif isinstance(config, ScorerConfig):
        base = config
    elif isinstance(config, str):
        if config in PRESETS:
            preset = PRESETS.get(config)
            base = ScorerConfig(**{**preset.options, "name": config})
        else:
            base = ScorerConfig(method=config)
        if options:
            options.setdefault("name", None)  # a preset changed by options is no longer that preset
    else:
        raise ConfigError(f"config must be a ScorerConfig or a scorer name; got {type(config).__name__}.")
    return base.replace(**options) if options else base


def _check_names(options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        hint = did_you_mean(unknown[0], OPTION_NAMES)
        raise ConfigError(f"Unknown scorer option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTION_NAMES)}.{hint}")


def _int(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"{name} must be a whole number; got {v!r}.")


def _window_lengths(v: Any) -> int | tuple[int, ...]:
    """``window_sentences`` as an int, or as a sorted tuple of distinct lengths (a YAML list arrives as a list)."""
    lengths = list(v) if isinstance(v, (list, tuple)) else [v]
    for n in lengths:
        _int("window_sentences", n)
        if n < 1:
            raise ConfigError(f"window_sentences must be >= 1 (or a list of such lengths); got {v!r}.")
    if not lengths or len(set(lengths)) != len(lengths):
        raise ConfigError(f"window_sentences as a list needs distinct lengths, e.g. [1, 2]; got {v!r}.")
    # One length in a list is that length: the same reading, the same cache key.
    return lengths[0] if len(lengths) == 1 else tuple(sorted(lengths))


def _number(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{name} must be a finite number; got {v!r}.")
