"""The classifier baseline of paper 001 (Table 2, "FactCC (mean/max)"), with veridic's NLI scorer.

A consistency classifier is not generative, so only accuracy applies: how
often the target scores higher against g than against g′. The paper ran
FactCC over a sliding window of the grounding and pooled windows by mean or
max. veridic's :class:`~veridic.nli.NLIScorer` already slides sentence
windows over the source and keeps the best-supporting one (max); the two
variants here pool the *target's sentences* by mean or by min
(``claim_aggregation``). Ties (equal scores) count as failures, as in the
LM metric.

The scorer is received, never built:

>>> from veridic import ScorerConfig, build_scorer                           # doctest: +SKIP
>>> from veridic.nli import load_backend                                     # doctest: +SKIP
>>> scorer = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=load_backend())  # doctest: +SKIP
>>> nli_baseline(examples=examples, scorer=scorer).accuracy                  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from veridic.ablation._data import AblationExample
from veridic.ablation._metrics import bootstrap_ci
from veridic.errors import InputError

__all__ = ["NLIBaselineResult", "nli_baseline"]


@dataclass(frozen=True)
class NLIBaselineResult:
    """Accuracy of ``score(y | g) > score(y | g′)`` (a proportion; greater is better)."""

    name: str
    accuracy: float
    ci_low: float
    ci_high: float
    n: int
    ties: int
    scorer: dict[str, Any]
    scores_grounded: tuple[float, ...]
    scores_ablated: tuple[float, ...]

    def to_dict(self, *, with_scores: bool = False) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if not k.startswith("scores_")}
        if with_scores:
            d["scores_grounded"] = list(self.scores_grounded)
            d["scores_ablated"] = list(self.scores_ablated)
        return d


def nli_baseline(
    *,
    examples: Sequence[AblationExample],
    scorer: Any,
    name: str | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: bool = False,
) -> NLIBaselineResult:
    """Score each target against its grounding and its ablated grounding; count wins of g."""
    exs = list(examples)
    if not exs:
        raise InputError("nli_baseline needs at least one example.")
    claims = [e.target.strip() for e in exs]
    sources = [e.grounding for e in exs] + [e.ablated_grounding for e in exs]
    verdicts = scorer.score(sources=sources, claims=claims + claims, progress=progress)
    s = np.asarray([v.score for v in verdicts], dtype=float)
    sg, sa = s[: len(exs)], s[len(exs) :]
    wins = sg > sa
    lo, hi = bootstrap_ci(successes=wins, groups=[e.group or e.id for e in exs], n_resamples=n_resamples, seed=seed)
    desc = scorer.describe() if hasattr(scorer, "describe") else {"scorer": type(scorer).__name__}
    agg = (desc.get("aggregation") or {}).get("claim")
    return NLIBaselineResult(
        name=name or f"nli-{agg or 'score'}",
        accuracy=float(wins.mean()),
        ci_low=lo,
        ci_high=hi,
        n=len(exs),
        ties=int((sg == sa).sum()),
        scorer=desc,
        scores_grounded=tuple(float(x) for x in sg),
        scores_ablated=tuple(float(x) for x in sa),
    )
