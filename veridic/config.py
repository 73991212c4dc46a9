"""One scorer configuration, shared by every entry point (API, CLI, service, Ray, detector, AutoAIS, bench).

A :class:`ScorerConfig` is frozen and validated once, when it is made: a
bad value or a combination no scorer supports fails here, with a message
that names the options involved, before any model loads.
:func:`veridic.registry.build_scorer` turns it into a scorer around a
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
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from veridic.errors import ConfigError, did_you_mean

__all__ = ["GRANULARITIES", "CONTEXT_MODES", "NLI_OPTIONS", "ScorerConfig", "SCALES"]

GRANULARITIES = ("sentence", "document")
CONTEXT_MODES = ("ignore", "premise")

#: verdict-score scale of each built-in method: (low, high, default threshold).
SCALES: dict[str, tuple[float, float, float]] = {"e": (0.0, 1.0, 0.5), "e-c": (-1.0, 1.0, 0.0), "hybrid": (0.0, 1.0, 0.5)}

#: options that only an NLI-based method reads.
NLI_OPTIONS = frozenset({"mc_samples", "granularity", "source_aggregation", "claim_aggregation", "window_sentences", "max_windows",
                         "whole_source", "context_mode", "abstain_above", "seed", "structure_check",
                         "verbatim_support"})


@dataclass(frozen=True)
class ScorerConfig:
    """What a scorer computes, independent of the model that runs it.

    ``method``: a registered method (``hybrid`` default, ``e``, ``e-c``,
    ``overlap``, ``overlap-bigram`` or a plugin). ``mc_samples``: Monte-Carlo
    dropout samples (0 off, else >= 2; needs the torch backend).
    ``granularity``: ``sentence`` (each claim sentence against windows of
    ``window_sentences`` consecutive source sentences) or ``document`` (the
    whole claim against token-budgeted chunks). ``source_aggregation``
    (``max``, ``first``) picks a window per claim piece;
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
    acquired YouTube"; :mod:`veridic.nli.structure`; needs spaCy).
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
    window_sentences: int = 2
    # Defaults measured on the dev sets (docs/benchmarks.md, issue 15): 4 windows and no whole-source pair cost
    # no AUC against 8 windows + whole source, with ~45 % fewer model tokens. The hybrid weights are fitted on this setting.
    max_windows: int | None = 4
    whole_source: bool = False
    context_mode: str = "ignore"
    # On by default (issue 14, session 12): argument swaps on the contrast suite 64 -> 94 % (hybrid), dev pool unchanged.
    structure_check: bool = True
    verbatim_support: bool = True
    threshold: float | None = None
    abstain_above: float | None = None
    seed: int = 0
    hybrid_weights: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        from veridic.nli.aggregate import CLAIM_AGGREGATIONS, SOURCE_AGGREGATIONS

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
        _int("window_sentences", self.window_sentences)
        if self.window_sentences < 1:
            raise ConfigError(f"window_sentences must be >= 1; got {self.window_sentences}.")
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
        if m == "hybrid" and self.granularity != "sentence":
            raise ConfigError(f"method='hybrid' needs granularity='sentence' (its weights were fitted on sentence-level e-c features); "
                              f"got granularity={self.granularity!r}. Use method='e-c' with granularity='document', or keep granularity='sentence'.")
        if self.hybrid_weights is not None and m != "hybrid":
            raise ConfigError(f"hybrid_weights={self.hybrid_weights!r} is read only by method='hybrid'; got method={m!r}. Drop one of the two.")
        if self.threshold is not None:
            _number("threshold", self.threshold)
            if m in SCALES:
                lo, hi, _ = SCALES[m]
                if not lo <= self.threshold <= hi:
                    raise ConfigError(f"threshold={self.threshold} is off the scale of method={m!r}, whose scores lie in [{lo:g}, {hi:g}].")
        if m not in SCALES:
            self._check_other_method()

    def _check_other_method(self) -> None:
        # Model-free and plugin methods read none of the NLI options: a non-default one is a mistake, said now.
        from veridic.errors import RegistryError
        from veridic.registry import get_method

        try:
            spec = get_method(self.method)
        except RegistryError as exc:
            raise RegistryError(f"method={self.method!r}: {exc}") from None
        default = ScorerConfig(method="e-c")
        for f in sorted(NLI_OPTIONS - spec.options):
            if getattr(self, f) != getattr(default, f):
                raise ConfigError(f"method={self.method!r} does not use {f} (got {f}={getattr(self, f)!r}); "
                                  f"drop {f} or pick an NLI method (hybrid, e-c, e).")

    # ------------------------------------------------------------------ derived values
    @property
    def decision_threshold(self) -> float:
        """``threshold``, or the method's default when it is None."""
        if self.threshold is not None:
            return float(self.threshold)
        return SCALES.get(self.method, (0.0, 1.0, 0.5))[2]

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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def nli_options(self) -> dict[str, Any]:
        """Keyword arguments of :class:`veridic.nli.NLIScorer` for this configuration."""
        return {f: getattr(self, f) for f in sorted(NLI_OPTIONS)} | {"threshold": self.threshold}


OPTION_NAMES = tuple(f.name for f in fields(ScorerConfig))


def _check_names(options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        hint = did_you_mean(unknown[0], OPTION_NAMES)
        raise ConfigError(f"Unknown scorer option(s) {', '.join(map(repr, unknown))}; known: {', '.join(OPTION_NAMES)}.{hint}")


def _int(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ConfigError(f"{name} must be a whole number; got {v!r}.")


def _number(name: str, v: Any) -> None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConfigError(f"{name} must be a finite number; got {v!r}.")
