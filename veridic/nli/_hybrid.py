"""A dev-validated combination of NLI verdicts with cheap lexical/entity signals.

A small NLI model misses what word overlap catches (invented names and
numbers) and word overlap misses what NLI catches (negations, swapped
roles). :class:`HybridScorer` feeds both into a logistic regression with a
handful of weights, fitted by :func:`fit_hybrid` on labelled benchmark rows
and validated leave-one-dataset-out (``benchmarks/fit_hybrid.py``), so the
reported AUC of each dataset comes from weights that never saw it.

>>> from veridic import build_scorer
>>> from veridic.nli import load_backend
>>> s = build_scorer("hybrid", backend=load_backend())          # weights shipped with the model
>>> s.score(sources=["Alice paid 30 dollars."], claims=["Alice paid 40 dollars."])[0].label
'unsupported'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from veridic.config import ScorerConfig
from veridic.errors import ConfigError, ModelLoadError
from veridic.ling.lexical import lexical_features
from veridic.nli._backend import NLIBackend
from veridic.nli._models import resolve_model_path
from veridic.nli._scorer import NLIScorer
from veridic.types import Verdict

__all__ = ["HybridScorer", "HybridWeights", "NLI_FEATURES", "ALL_FEATURES", "features_from_verdict", "fit_hybrid"]

# e_mean: the chosen windows' entailment alone (the contradiction that e-c subtracts is noisier for small models).
NLI_FEATURES = ("ec_min", "ec_mean", "e_min", "c_max", "e_mean")
ALL_FEATURES = NLI_FEATURES + ("overlap_unigram", "overlap_bigram", "novel_numbers", "novel_names")
# A second model's NLI features carry this suffix (``ec_mean@companion``): fitted by fit_hybrid.py --companion.
COMPANION = "@companion"
COMPANION_FEATURES = tuple(n + COMPANION for n in NLI_FEATURES)
WEIGHTS_FILE = "hybrid.json"


def features_from_verdict(v: Verdict, *, source: str, claim: str) -> dict[str, float]:
    """Features of one pair from a sentence-level e−c verdict plus lexical signals."""
    sent_ec = np.array([s.e - s.c for s in v.sentences]) if v.sentences else np.array([v.e - v.c])
    sent_e = np.array([s.e for s in v.sentences]) if v.sentences else np.array([v.e])
    sent_c = np.array([s.c for s in v.sentences]) if v.sentences else np.array([v.c])
    f = {"ec_min": float(sent_ec.min()), "ec_mean": float(sent_ec.mean()), "e_min": float(sent_e.min()), "c_max": float(sent_c.max()),
         "e_mean": float(sent_e.mean())}
    f.update(lexical_features(source=source, claim=claim))
    return f


@dataclass(frozen=True)
class HybridWeights:
    """Standardise-then-logistic weights over named features."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.features)
        if not (len(self.mean) == len(self.scale) == len(self.coef) == n):
            raise ConfigError(f"Hybrid weights are inconsistent: {n} features but {len(self.mean)} means, {len(self.scale)} scales, {len(self.coef)} coefficients.")
        unknown = set(self.features) - set(ALL_FEATURES) - set(COMPANION_FEATURES)
        if unknown:
            raise ConfigError(f"Hybrid weights name unknown features {sorted(unknown)}; known: {list(ALL_FEATURES + COMPANION_FEATURES)}.")

    def logit(self, x: np.ndarray) -> np.ndarray:
        z = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return z @ np.asarray(self.coef) + self.intercept

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef), "intercept": self.intercept, "meta": self.meta}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> HybridWeights:
        try:
            return cls(tuple(d["features"]), tuple(d["mean"]), tuple(d["scale"]), tuple(d["coef"]), float(d["intercept"]), dict(d.get("meta", {})))
        except KeyError as exc:
            raise ConfigError(f"Hybrid weights lack the key {exc.args[0]!r}; expected features, mean, scale, coef, intercept.") from None

    @classmethod
    def load(cls, path: str | Path) -> HybridWeights:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def save(self, path: str | Path) -> None:
        from veridic.io._atomic import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=2) + "\n")


def fit_hybrid(*, features: np.ndarray, labels: np.ndarray, names: Sequence[str], C: float = 1.0, meta: dict[str, Any] | None = None) -> HybridWeights:
    """Fit standardise + L2 logistic regression (balanced classes) on labelled feature rows."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=int)
    if x.ndim != 2 or x.shape[1] != len(names) or len(y) != len(x):
        raise ConfigError(f"features must be [n, {len(names)}] with n labels; got {x.shape} and {y.shape}.")
    if np.isnan(x).any():
        raise ConfigError("features contain NaN; fix the rows before fitting.")
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    lr = LogisticRegression(C=C, class_weight="balanced", max_iter=1000)
    lr.fit((x - mean) / scale, y)
    return HybridWeights(tuple(names), tuple(map(float, mean)), tuple(map(float, scale)), tuple(map(float, lr.coef_[0])), float(lr.intercept_[0]), meta or {})


class HybridScorer:
    """NLI (sentence-level e−c) + lexical features → probability that the claim is faithful.

    ``score`` is that probability (label ``supported`` at ≥ 0.5); ``e``, ``n``,
    ``c``, ``sentences`` and evidence are the underlying NLI verdict's. Weights:
    ``config.hybrid_weights`` (a ``hybrid.json`` path), else those shipped with the model.
    Build it with :func:`veridic.factory.build_scorer`.
    """

    def __init__(self, config: ScorerConfig, backend: NLIBackend, resources: Any = None):
        if not isinstance(config, ScorerConfig) or config.method != "hybrid":
            raise ConfigError(f"HybridScorer takes (config, backend, resources) with a ScorerConfig(method='hybrid') first; got {config!r}. "
                              "Build scorers with veridic.build_scorer(ScorerConfig(...), backend=...).")
        self.config = config
        self.backend = backend
        self.weights = self._resolve_weights(config.hybrid_weights, backend)
        if any(f.endswith(COMPANION) for f in self.weights.features):
            raise ConfigError(f"These hybrid weights read a second model's features ({list(self.weights.features)}); "
                              "the hybrid scorer reads one model. Use weights fitted on one model's features.")
        # The NLI half: the same options on the e-c scale, with e-c's own threshold.
        self.nli = NLIScorer(config.replace(method="e-c", hybrid_weights=None, threshold=None, name=None), backend, resources)
        self.name = config.label
        # Scorer protocol: verdict scores are probabilities; sentence scores are the NLI's e-c.
        self.granularity = "sentence"
        self.threshold = config.decision_threshold
        self.sentence_threshold = self.nli.threshold

    def decide(self, score: float, uncertainty: float | None = None) -> str:
        """The label of a verdict with this probability (and MC-dropout spread)."""
        abstain = self.nli.abstain_above
        if abstain is not None and uncertainty is not None and uncertainty > abstain:
            return "abstain"
        return "supported" if score >= self.threshold else "unsupported"

    @staticmethod
    def _resolve_weights(weights: str | Path | None, backend: NLIBackend) -> HybridWeights:
        if weights is None and getattr(backend, "default_hybrid_weights", None) is not None:
            # A backend that is not a model folder (the dummy) names the weights it runs hybrid with.
            weights = str(backend.default_hybrid_weights)
        if weights is not None:
            return HybridWeights.load(weights)
        # Default: the weights fitted for this model, stored beside its config.
        model = getattr(backend, "model_id", None)
        if model is not None:
            model = str(model).split("#")[0]  # the ONNX backend appends "#file.onnx"
        try:
            path, _ = resolve_model_path(model)
        except ModelLoadError:
            path = None
        f = Path(str(path)) / WEIGHTS_FILE if path is not None else None
        if f is None or not f.exists():
            raise ConfigError(
                f"No hybrid weights for model {model!r} (looked for {f}). Fit them with benchmarks/fit_hybrid.py and pass weights=PATH."
            )
        return HybridWeights.load(f)

    def describe(self) -> dict[str, Any]:
        d = self.nli.describe()
        d.update({"scorer": "hybrid", "name": self.name, "hybrid_features": list(self.weights.features), "hybrid_meta": self.weights.meta})
        return d

    def score(self, *, sources: Sequence[str], claims: Sequence[str], contexts: Sequence[Any] | None = None, progress: bool = False) -> list[Verdict]:
        verdicts = self.nli.score(sources=sources, claims=claims, contexts=contexts, progress=progress)
        out = []
        for v, s, c in zip(verdicts, sources, claims):
            f = features_from_verdict(v, source=s, claim=c)
            x = np.array([f[k] for k in self.weights.features])
            p = float(1.0 / (1.0 + np.exp(-self.weights.logit(x))))
            label = "abstain" if v.label == "abstain" else self.decide(p)
            out.append(Verdict(score=p, label=label, e=v.e, n=v.n, c=v.c, uncertainty=v.uncertainty, method=self.name, model=v.model, sentences=v.sentences, evidence=v.evidence))
        return out
