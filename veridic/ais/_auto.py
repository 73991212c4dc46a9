"""AutoAIS: veridic's NLI scorer as an automatic stage-2 rater, compared with the human consensus.

The rater receives an NLI backend (never builds one) and says "attributable"
when the NLI score of output vs source is above the scorer's threshold.
Agreement with the human AIS consensus is reported like the crowd's vs
expert agreement (paper 003 Table 7): macro F1, pairwise agreement, alpha,
kappa over (AutoAIS, consensus) pairs, on items the humans found
interpretable and not flagged.

>>> import numpy as np
>>> from veridic.nli._labels import LabelMap
>>> class Overlap:  # a toy backend: entailment = word overlap
...     model_id, revision, max_length, supports_mc = "toy", None, 512, False
...     label_map = LabelMap.from_id2label({0: "entailment", 1: "neutral", 2: "contradiction"})
...     def predict(self, premises, hypotheses, **kw):
...         e = [len(set(h.split()) & set(p.split())) / max(len(set(h.split())), 1) for p, h in zip(premises, hypotheses)]
...         return np.array([[x, 0.0, 1 - x] for x in e])
...     def count_tokens(self, text): return len(text.split())
...     def token_offsets(self, text): return []
...     def describe(self): return {"model": "toy"}
>>> AutoAIS(backend=Overlap(), granularity="document").judge(sources=["cats purr"], outputs=["cats purr"])
[True]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from veridic.ais._stats import ItemVotes, Judgment, consensus, expert_agreement
from veridic.config import ScorerConfig, resolve_config
from veridic.errors import ConfigError, InputError
from veridic.factory import build_scorer
from veridic.nli._backend import NLIBackend

__all__ = ["AutoAIS", "auto_agreement"]


class AutoAIS:
    """Stage-2 decisions from a scorer: ``scorer`` (any :class:`veridic.types.Scorer`), or ``backend`` plus
    ``config`` (a :class:`veridic.config.ScorerConfig` or name; default ``e-c``) and its fields as keywords."""

    name = "autoais"

    def __init__(self, *, backend: NLIBackend | None = None, scorer: Any = None, config: ScorerConfig | str | None = None,
                 threshold: float | None = None, **options: Any):
        if scorer is not None:
            if backend is not None or config is not None or options or threshold is not None:
                raise ConfigError("Pass AutoAIS either scorer= (already built) or backend= with config/options, not both.")
            self.scorer = scorer
        else:
            cfg = resolve_config(config if config is not None else "e-c", **options, **({"threshold": threshold} if threshold is not None else {}))
            self.scorer = build_scorer(cfg, backend=backend)

    def describe(self) -> dict[str, Any]:
        return {"rater": self.name, "threshold": self.scorer.threshold, **self.scorer.describe()}

    def judge(self, *, sources: Sequence[str], outputs: Sequence[str]) -> list[bool]:
        if len(sources) != len(outputs):
            raise InputError(f"sources and outputs must have the same length; got {len(sources)} and {len(outputs)}.")
        verdicts = self.scorer.score(sources=list(sources), claims=list(outputs))
        return [self.scorer.decide(v.score, v.uncertainty) == "supported" for v in verdicts]


def _table_text(table: Mapping[str, Any]) -> str:
    parts = [str(table.get(k, "")) for k in ("title", "section", "description") if table.get(k)]
    header = [str(h) for h in table.get("header") or []]
    for row in table.get("rows") or []:
        cells = [f"{h} is {c}" if h else str(c) for h, c in zip(header + [""] * len(row), row)]
        parts.append("; ".join(cells) + ".")
    return " ".join(parts)


def auto_agreement(*, items: Sequence[Mapping[str, Any]], votes: Sequence[ItemVotes], rater: AutoAIS) -> dict[str, Any]:
    """Run ``rater`` on every human-interpretable item with a source and compare with the human AIS consensus."""
    cons = {c.item: c for c in consensus(votes)}
    todo = [it for it in items if (c := cons.get(it["id"])) is not None and c.interpretable and (it.get("source") or it.get("table"))]
    sources = [it.get("source") or _table_text(it["table"]) for it in todo]
    decisions = rater.judge(sources=sources, outputs=[it["claim"] for it in todo]) if todo else []
    judgments = [Judgment(item=it["id"], rater=rater.name, system=it.get("system", ""), interpretable=True, attributable=d) for it, d in zip(todo, decisions)]
    expert = {it["id"]: cons[it["id"]].attributable for it in todo}
    per_system: dict[str, list[bool]] = {}
    for it, d in zip(todo, decisions):
        per_system.setdefault(it.get("system", ""), []).append(d)
    return {
        "rater": rater.describe(),
        "n_items": len(todo),
        "agreement": expert_agreement(judgments, expert=expert, stage="ais").to_dict(),
        "auto_ais_pct": {s: 100.0 * sum(v) / len(v) for s, v in per_system.items()},
        "decisions": {it["id"]: d for it, d in zip(todo, decisions)},
    }
