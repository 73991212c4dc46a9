"""The factual-ablation probe: does a grounded LM prefer y after g over y after g′?

The probe holds the data and the protocol; it *receives* a backend
(sentence-transformers' evaluator pattern: ``FactualAblationProbe(...)(lm)``).
Per example it scores the target under g and under g′ (and, for PMI
scoring, under no grounding), then reports accuracy and margin-accuracy
with bootstrap CIs for the plain model and for every PMI variant asked for.

PMI variants *score* the target with the renormalised PMI distribution of
:mod:`veridic.ablation._pmi` (the paper decodes with it; scoring y under the
decoding distribution is how Table 2 compares them). They need full
next-token distributions, so those requests go through
``backend.next_token_logprobs`` in chunks; without PMI only
``backend.loglikelihood`` is used (and can be cached).

>>> from veridic.lm._dummy import DummyLM
>>> from veridic.ablation._data import AblationExample
>>> ex = [AblationExample(grounding="4 miners were stuck.", ablated_grounding="2 miners were stuck.",
...                       context="The mine.", target="4 miners.", id="a")]
>>> report = FactualAblationProbe(examples=ex, margins=(0.0,), pmi_alphas=(0.5,), n_resamples=10)(DummyLM())
>>> [r.method for r in report.results]
['lm', 'pmi-add@0.5']
>>> report.results[0].metrics[0].value
1.0
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veridic.ablation._data import AblationExample
from veridic.ablation._metrics import DEFAULT_MARGINS, MarginAccuracy, summarize
from veridic.ablation._pmi import PMI_MODES, pmi_sequence_logprob
from veridic.ablation._templates import TEMPLATES, PromptTemplate, fit_to_window
from veridic.errors import ConfigError, InputError
from veridic.lm._api import LanguageModel, LoglikelihoodRequest

__all__ = ["AblationReport", "ExampleScore", "FactualAblationProbe", "MethodResult"]


@dataclass(frozen=True)
class ExampleScore:
    """Per-example log-probs (nats). ``differences[method] = logp(y | g) − logp(y | g′)`` under that method."""

    id: str
    group: str | None
    logp_grounded: float
    logp_ablated: float
    logp_ungrounded: float | None
    n_target_tokens: int
    grounding_tokens_dropped: int
    differences: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class MethodResult:
    """Metrics of one scoring method (``lm`` or ``pmi-<mode>@<alpha>``)."""

    method: str
    metrics: tuple[MarginAccuracy, ...]
    mean_difference: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "mean_difference": self.mean_difference, "metrics": [m.to_dict() for m in self.metrics]}


@dataclass
class AblationReport:
    """Everything a run produced, with what produced it (model, template, config hash)."""

    model: dict[str, Any]
    config: dict[str, Any]
    config_hash: str
    n_examples: int
    results: list[MethodResult]
    examples: list[ExampleScore] = field(default_factory=list)
    seconds: float = 0.0

    def result(self, method: str) -> MethodResult:
        for r in self.results:
            if r.method == method:
                return r
        raise KeyError(f"No method {method!r}; have {[r.method for r in self.results]}.")

    def to_dict(self, *, with_examples: bool = True) -> dict[str, Any]:
        from veridic.version import __version__

        out = {
            "probe": "factual-ablation",
            "veridic_version": __version__,
            "model": self.model,
            "config": self.config,
            "config_hash": self.config_hash,
            "n_examples": self.n_examples,
            "seconds": round(self.seconds, 1),
            "results": [r.to_dict() for r in self.results],
        }
        if with_examples:
            out["examples"] = [e.to_dict() for e in self.examples]
        return out


def _method_name(mode: str, alpha: float) -> str:
    return f"pmi-{mode}@{alpha:g}"


class FactualAblationProbe:
    """Factual ablation (paper 001, eq. 2 and margin-accuracy) over a list of examples."""

    def __init__(
        self,
        *,
        examples: Sequence[AblationExample],
        template: PromptTemplate | str = "west-zs",
        margins: Sequence[float] = DEFAULT_MARGINS,
        pmi_alphas: Sequence[float] = (),
        pmi_modes: Sequence[str] = ("add",),
        max_tokens: int | None = None,
        chunk_size: int = 8,
        n_resamples: int = 1000,
        seed: int = 0,
        progress: bool = False,
    ):
        self.examples = list(examples)
        if not self.examples:
            raise InputError("FactualAblationProbe needs at least one example.")
        if not all(isinstance(e, AblationExample) for e in self.examples):
            raise InputError("examples must be AblationExample objects (see veridic.ablation._data).")
        self.template = TEMPLATES[template] if isinstance(template, str) and template in TEMPLATES else template
        if not isinstance(self.template, PromptTemplate):
            raise ConfigError(f"Unknown template {template!r}; expected a PromptTemplate or one of {sorted(TEMPLATES)}.")
        self.margins = tuple(float(m) for m in margins)
        self.pmi_alphas = tuple(float(a) for a in pmi_alphas)
        for mode in pmi_modes:
            if mode not in PMI_MODES:
                raise ConfigError(f"Unknown PMI mode {mode!r}; expected one of {PMI_MODES}.")
        self.pmi_modes = tuple(pmi_modes)
        self.max_tokens = max_tokens
        if chunk_size < 1:
            raise ConfigError(f"chunk_size must be >= 1; got {chunk_size}.")
        self.chunk_size = chunk_size
        self.n_resamples = n_resamples
        self.seed = seed
        self.progress = progress

    def config(self) -> dict[str, Any]:
        return {
            "template": self.template.to_dict(),
            "margins": list(self.margins),
            "pmi_alphas": list(self.pmi_alphas),
            "pmi_modes": list(self.pmi_modes),
            "max_tokens": self.max_tokens,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "difference": "log P(y|c,g) - log P(y|c,g') in nats; success = difference > margin",
        }

    def _requests(self, backend: LanguageModel, ex: AblationExample, *, ungrounded: bool) -> tuple[list[LoglikelihoodRequest], int]:
        reqs = []
        dropped = 0
        for g in (ex.grounding, ex.ablated_grounding):
            fp = fit_to_window(backend=backend, template=self.template, grounding=g, context=ex.context, target=ex.target, max_tokens=self.max_tokens)
            dropped = max(dropped, fp.grounding_tokens_dropped)
            reqs.append(LoglikelihoodRequest(context=fp.prompt, continuation=fp.continuation))
        if ungrounded:
            fp = fit_to_window(backend=backend, template=self.template, grounding=None, context=ex.context, target=ex.target, max_tokens=self.max_tokens)
            reqs.append(LoglikelihoodRequest(context=fp.prompt, continuation=fp.continuation))
        return reqs, dropped

    def __call__(self, backend: LanguageModel) -> AblationReport:
        t0 = time.perf_counter()
        use_pmi = bool(self.pmi_alphas)
        methods = ["lm"] + [_method_name(m, a) for m in self.pmi_modes for a in self.pmi_alphas]
        scores: list[ExampleScore] = []
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(self.examples), desc="factual ablation", unit="ex")
        for start in range(0, len(self.examples), self.chunk_size):
            chunk = self.examples[start : start + self.chunk_size]
            built = [self._requests(backend, ex, ungrounded=use_pmi) for ex in chunk]
            flat = [r for reqs, _ in built for r in reqs]
            per = 3 if use_pmi else 2
            if use_pmi:
                dists = backend.next_token_logprobs(flat)
                ids = [backend.tok_encode(r.continuation) for r in flat]
            else:
                lls = backend.loglikelihood(flat)
            for k, (ex, (_, dropped)) in enumerate(zip(chunk, built)):
                diffs: dict[str, float] = {}
                if use_pmi:
                    g, a, u = dists[per * k], dists[per * k + 1], dists[per * k + 2]
                    tid = ids[per * k]
                    rows = np.arange(len(tid))
                    lp_g, lp_a, lp_u = (float(d[rows, tid].astype(np.float64).sum()) for d in (g, a, u))
                    for mode in self.pmi_modes:
                        for alpha in self.pmi_alphas:
                            pg = pmi_sequence_logprob(grounded=g, ungrounded=u, token_ids=tid, alpha=alpha, mode=mode)
                            pa = pmi_sequence_logprob(grounded=a, ungrounded=u, token_ids=tid, alpha=alpha, mode=mode)
                            diffs[_method_name(mode, alpha)] = pg - pa
                    n_tok = len(tid)
                else:
                    rg, ra = lls[per * k], lls[per * k + 1]
                    lp_g, lp_a, lp_u = rg.logprob, ra.logprob, None
                    n_tok = len(rg.token_ids)
                diffs = {"lm": lp_g - lp_a, **diffs}
                scores.append(ExampleScore(id=ex.id, group=ex.group, logp_grounded=lp_g, logp_ablated=lp_a, logp_ungrounded=lp_u,
                                           n_target_tokens=n_tok, grounding_tokens_dropped=dropped, differences=diffs))
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
        groups = [s.group or s.id for s in scores]
        results = []
        for m in methods:
            d = [s.differences[m] for s in scores]
            metrics = summarize(differences=d, margins=self.margins, groups=groups, n_resamples=self.n_resamples, seed=self.seed)
            results.append(MethodResult(method=m, metrics=tuple(metrics), mean_difference=float(np.mean(d))))
        cfg = self.config()
        data_hash = hashlib.sha256(json.dumps([e.to_dict() for e in self.examples], sort_keys=True).encode()).hexdigest()[:12]
        cfg["data_sha256_12"] = data_hash
        chash = hashlib.sha256(json.dumps([cfg, backend.describe()], sort_keys=True, default=str).encode()).hexdigest()[:12]
        return AblationReport(
            model=backend.describe(),
            config=cfg,
            config_hash=chash,
            n_examples=len(scores),
            results=results,
            examples=scores,
            seconds=time.perf_counter() - t0,
        )


