"""The scorer registry of the benchmark runner, and the model-free scorers.

A registered scorer is a *factory* ``factory(backend) -> Scorer``: scorers
receive a model backend, they never load one (only the CLI calls
``veridic.nli.load_backend``, and only when a model scorer was asked for).
Model-free scorers (``overlap``, ``overlap-bigram``) ignore the backend.
Per-example score files (``--scores``) become :class:`ExternalScores`, which
look scores up by row id instead of computing them.

Other packages add scorers through the ``veridic.scorers`` entry-point group
(``name = "module:factory"``). The factory is imported only when its name is
asked for; it may be a :class:`ScorerSpec` or a callable ``factory(backend)``
with optional ``needs_backend`` (default True) and ``summary`` attributes.
Built-in names win over a plugin of the same name.

>>> s = build_scorer(name="overlap")
>>> [round(v.score, 2) for v in s.score(sources=["The cat sat on the mat."], claims=["The cat sat on a hat."])]
[0.67]
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from veridic.errors import ConfigError, DataFormatError, InputError, RegistryError, did_you_mean
from veridic.io.records import read_records
from veridic.lexical import lexical_features
from veridic.types import Verdict

__all__ = [
    "ENTRY_POINT_GROUP",
    "ExternalScores",
    "OverlapScorer",
    "Scorer",
    "ScorerSpec",
    "build_scorer",
    "get_scorer_spec",
    "load_external_scores",
    "register_scorer",
    "scorer_names",
]


@runtime_checkable
class Scorer(Protocol):
    """What the runner needs from a scorer (mirrors ``veridic.nli.scorer.Scorer``)."""

    name: str

    def score(
        self,
        *,
        sources: Sequence[str],
        claims: Sequence[str],
        contexts: Sequence[str | None] | None = None,
        progress: bool = False,
    ) -> list[Verdict]: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class ScorerSpec:
    """A registered scorer: its factory and whether it needs a model backend."""

    name: str
    factory: Callable[[Any], Scorer]
    needs_backend: bool
    summary: str


_REGISTRY: dict[str, ScorerSpec] = {}
ENTRY_POINT_GROUP = "veridic.scorers"


def register_scorer(name: str, *, needs_backend: bool, summary: str, overwrite: bool = False):
    """Decorator registering ``factory(backend) -> Scorer`` under ``name``.

    >>> @register_scorer("const-demo", needs_backend=False, summary="demo", overwrite=True)
    ... def _const(backend):
    ...     return OverlapScorer()
    >>> "const-demo" in scorer_names()
    True
    """

    def decorate(factory: Callable[[Any], Scorer]) -> Callable[[Any], Scorer]:
        if name in _REGISTRY and not overwrite:
            raise ConfigError(f"A scorer named {name!r} is already registered; pick another name or pass overwrite=True.")
        _REGISTRY[name] = ScorerSpec(name=name, factory=factory, needs_backend=needs_backend, summary=summary)
        return factory

    return decorate


def _plugin_entry_points() -> dict[str, Any]:
    """Entry points of the ``veridic.scorers`` group whose names no built-in scorer takes."""
    from importlib.metadata import entry_points

    out: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _REGISTRY or ep.name in out:
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
        return ScorerSpec(name=name, factory=obj.factory, needs_backend=obj.needs_backend, summary=obj.summary)
    if not callable(obj):
        raise RegistryError(f"The scorer plugin {name!r} ({ep.value}) should be a ScorerSpec or a callable factory(backend) -> Scorer; got {type(obj).__name__}.")
    summary = getattr(obj, "summary", None) or ((obj.__doc__ or "").strip().splitlines() or [f"plugin from {dist}"])[0]
    return ScorerSpec(name=name, factory=obj, needs_backend=bool(getattr(obj, "needs_backend", True)), summary=summary)


def scorer_names() -> list[str]:
    """Names of the registered scorers, plugins included (without importing them)."""
    return sorted({*_REGISTRY, *_plugin_entry_points()})


def get_scorer_spec(name: str) -> ScorerSpec:
    """Look up a registered scorer (or a plugin, imported now), with a 'did you mean' hint when unknown."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    plugins = _plugin_entry_points()
    if name in plugins:
        spec = _spec_from_plugin(name, plugins[name])
        _REGISTRY[name] = spec
        return spec
    names = sorted({*_REGISTRY, *plugins})
    raise RegistryError(
        f"Unknown scorer {name!r}; registered scorers: {', '.join(names)}. "
        f"Per-example score files go to --scores instead.{did_you_mean(name, names)}"
    )


def build_scorer(*, name: str, backend: Any = None) -> Scorer:
    """Build the registered scorer ``name`` around ``backend`` (None for model-free scorers)."""
    spec = get_scorer_spec(name)
    if spec.needs_backend and backend is None:
        raise ConfigError(f"Scorer {name!r} needs a model backend; load one with veridic.nli.load_backend() and pass it as backend=.")
    scorer = spec.factory(backend)
    # Registry names are what reports show, whatever the object calls itself.
    try:
        scorer.name = name
    except AttributeError:
        pass
    return scorer


# ---------------------------------------------------------------------------
# NLI scorers (veridic.nli is imported lazily: it is optional for this module)


def _nli_factory(**options: Any) -> Callable[[Any], Scorer]:
    def factory(backend: Any) -> Scorer:
        try:
            from veridic.nli import NLIScorer
        except ImportError as exc:
            raise ConfigError(f"The NLI scorers need veridic.nli.NLIScorer, which could not be imported ({exc}).") from None
        return NLIScorer(backend=backend, **options)

    return factory


_NLI = {
    "e": ("entailment probability, sentence-level (paper 004 Base)", {"method": "e", "granularity": "sentence"}),
    "e-c": ("entailment minus contradiction, sentence-level (004 +e-c)", {"method": "e-c", "granularity": "sentence"}),
    "e+mc": ("entailment probability with 15 Monte-Carlo dropout samples", {"method": "e", "granularity": "sentence", "mc_samples": 15}),
    "e-c+mc": ("e-c with 15 Monte-Carlo dropout samples (004 All)", {"method": "e-c", "granularity": "sentence", "mc_samples": 15}),
    "e-doc": ("entailment probability, whole claim against source chunks", {"method": "e", "granularity": "document"}),
    "e-c-doc": ("e-c, whole claim against source chunks", {"method": "e-c", "granularity": "document"}),
}
for _name, (_summary, _options) in _NLI.items():
    # Document-level scorers keep NLIScorer's default source aggregation, "max" over chunks.
    register_scorer(_name, needs_backend=True, summary=_summary)(_nli_factory(seed=0, name=_name, **_options))



def _hybrid_factory(**options: Any) -> Callable[[Any], Scorer]:
    def factory(backend: Any) -> Scorer:
        from veridic.nli.hybrid import HybridScorer

        return HybridScorer(backend=backend, **options)

    return factory


register_scorer("hybrid", needs_backend=True, summary="NLI e-c (sentence-level) + lexical/entity signals, logistic weights shipped with the model")(_hybrid_factory())
register_scorer("hybrid+mc", needs_backend=True, summary="hybrid with 15 Monte-Carlo dropout samples")(_hybrid_factory(mc_samples=15))


# ---------------------------------------------------------------------------
# lexical-overlap baseline


class OverlapScorer:
    """Lexical baseline: the fraction of the claim's n-grams found in the source.

    The n-grams are those of :func:`veridic.lexical.lexical_features`, the same
    features the hybrid scorer combines with NLI, so the baseline rows of a
    benchmark are exactly the lexical half of the shipped default.
    ``ngram=1``: content-word unigrams (lower-cased, stop words removed; a
    claim with no content words falls back to all its tokens). ``ngram=2``:
    bigrams over all lower-cased tokens (removing stop words first would invent
    adjacencies); a one-token claim falls back to the unigram share. A claim
    with no tokens at all (punctuation only) asserts nothing checkable, so it
    scores 1.0. ``e``, ``n``, ``c`` are NaN: this is not a probability model.

    >>> OverlapScorer(ngram=2).score(sources=["a b c"], claims=["a b d"])[0].score
    0.5
    """

    def __init__(self, *, ngram: int = 1, name: str | None = None) -> None:
        if ngram not in (1, 2):
            raise ConfigError(f"OverlapScorer supports ngram=1 or 2; got {ngram}.")
        self.ngram = ngram
        self.name = name or ("overlap" if ngram == 1 else "overlap-bigram")
        self._feature = "overlap_unigram" if ngram == 1 else "overlap_bigram"

    def _one(self, source: str, claim: str) -> float:
        return lexical_features(source=source, claim=claim)[self._feature]

    def score(
        self,
        *,
        sources: Sequence[str],
        claims: Sequence[str],
        contexts: Sequence[str | None] | None = None,
        progress: bool = False,
    ) -> list[Verdict]:
        if len(sources) != len(claims):
            raise InputError(f"sources and claims must be equally long; got {len(sources)} and {len(claims)}.")
        nan = float("nan")
        out = []
        for src, claim in zip(sources, claims):
            s = self._one(src, claim)
            # The label is an uncalibrated convenience; the benchmark only ranks by score.
            out.append(Verdict(score=s, label="supported" if s >= 0.5 else "unsupported", e=nan, n=nan, c=nan,
                               uncertainty=None, method=self.name, model="none"))
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "model": None,
            "revision": None,
            "method": "overlap",
            "ngram": self.ngram,
            "features": f"veridic.lexical {self._feature}",
            "mc_samples": 0,
            "granularity": "document",
            "aggregation": "fraction of claim n-grams in source",
            "parameters": 0,
            "model_calls_per_example": 0,
        }


register_scorer("overlap", needs_backend=False, summary="content-word unigram overlap with the source")(lambda backend: OverlapScorer(ngram=1))
register_scorer("overlap-bigram", needs_backend=False, summary="token bigram overlap with the source")(lambda backend: OverlapScorer(ngram=2))


# ---------------------------------------------------------------------------
# external per-example score files


class ExternalScores:
    """Published per-example scores read from a file, matched to rows by ``id``.

    Not a :class:`Scorer`: it cannot score new text, only look up ids.
    """

    def __init__(self, *, name: str, path: str, column: str, scores: Mapping[str, float], file_sha256: str) -> None:
        self.name = name
        self.path = path
        self.column = column
        self.scores = dict(scores)
        self.file_sha256 = file_sha256

    def lookup(self, *, ids: Sequence[str], dataset: str) -> list[float]:
        """Scores for ``ids`` in order; a clear error lists ids the file lacks."""
        missing = [i for i in ids if i not in self.scores]
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise InputError(
                f"The score file {self.path!r} (column {self.column!r}) has no score for {len(missing)} of the "
                f"{len(ids)} rows of dataset {dataset!r}: ids {shown}. Expected one row per benchmark id; "
                "add the missing ids or benchmark only the datasets the file covers."
            )
        return [self.scores[i] for i in ids]

    def describe(self) -> dict[str, Any]:
        return {
            "model": None,
            "revision": None,
            "method": "external",
            "file": self.path,
            "file_sha256": self.file_sha256,
            "column": self.column,
            "parameters": None,
            "model_calls_per_example": None,
        }


def load_external_scores(*, path: str | Path) -> list[ExternalScores]:
    """Read a score file: columns ``id, score`` or ``id`` plus named score columns.

    A single ``score`` column is named after the file stem; other numeric
    columns keep their own names. Every score must be a finite number.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t5.csv"
    >>> _ = p.write_text("id,score\\na,0.9\\nb,0.1\\n")
    >>> [(s.name, s.scores) for s in load_external_scores(path=p)]
    [('t5', {'a': 0.9, 'b': 0.1})]
    """
    path = Path(path)
    str_path = str(path)
    rows = list(read_records(path))
    if not rows:
        raise InputError(f"The score file {str_path!r} is empty; expected columns id, score.")
    if "id" not in rows[0]:
        raise DataFormatError(f"a score file needs an 'id' column; got columns {sorted(rows[0])}.", path=str_path, row=1)
    ignored = {"id", "dataset", "label", "source", "claim", "context", "grounding", "generated_text", "task", "meta"}
    columns = [c for c in rows[0] if c not in ignored]
    if not columns:
        raise DataFormatError(f"a score file needs a score column next to 'id'; got columns {sorted(rows[0])}.", path=str_path, row=1)
    values: dict[str, dict[str, float]] = {c: {} for c in columns}
    for i, row in enumerate(rows, start=1):
        rid = row.get("id")
        if rid is None or str(rid).strip() == "":
            raise DataFormatError("the 'id' cell is empty.", path=str_path, row=i)
        rid = str(rid)
        for c in columns:
            raw = row.get(c)
            try:
                v = float(raw)  # CSV cells arrive as text
            except (TypeError, ValueError):
                raise DataFormatError(f"column {c!r} must hold numbers; got {raw!r:.40}.", path=str_path, row=i) from None
            if not math.isfinite(v):
                raise DataFormatError(f"column {c!r} is {raw!r}; scores must be finite numbers (no NaN/inf).", path=str_path, row=i)
            if rid in values[c]:
                raise DataFormatError(f"id {rid!r} appears twice; each id needs exactly one score.", path=str_path, row=i)
            values[c][rid] = v
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    stem = path.name.split(".")[0]
    return [
        ExternalScores(name=stem if c == "score" else c, path=str_path, column=c, scores=values[c], file_sha256=digest)
        for c in columns
    ]
