"""Score generated descriptions against accurate / incongruous / nonfactual references (§2.1, appendix C eq. 3–4).

For every example the generated description's precision against each
reference (:func:`~veridic.congruity._build.build_references`) becomes an
:class:`~veridic.congruity._ranking.ItemScores` row (task
``generation-<metric>``), so the report ranks the three classes per
example and computes T and M exactly as for the multiple-choice tasks, plus
the mean precision per class (Figure 4). Generations with no content word
have no precision and are left out (counted in the returned description).

>>> refs = [{"id": "1", "accurate": "the poet", "incongruous": "born in Coventry ; librarian", "nonfactual": "the actor and singer"}]
>>> per_metric, info = score_generations(references=refs, generations={"1": "the British poet"}, metrics=("bleu1",))
>>> per_metric["bleu1"][0].scores
{'accurate': 0.5, 'incongruous': 0.0, 'nonfactual': 0.0}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from veridic.congruity._build import REFERENCE_CLASSES
from veridic.congruity._metrics import MiniLMBertScore, bleu1_precision, rouge_l_precision
from veridic.congruity._ranking import ItemScores
from veridic.errors import ConfigError, InputError

__all__ = ["GENERATION_METRICS", "score_generations"]

GENERATION_METRICS = ("bleu1", "rougeL", "bertscore")


def score_generations(
    *,
    references: Sequence[Mapping[str, Any]],
    generations: Mapping[str, str],
    metrics: Sequence[str] = GENERATION_METRICS,
    bertscore: MiniLMBertScore | None = None,
) -> tuple[dict[str, list[ItemScores]], dict[str, Any]]:
    """Precision of each generation against each reference class, per metric; returns (scores by metric, description)."""
    bad = [m for m in metrics if m not in GENERATION_METRICS]
    if bad or not metrics:
        raise ConfigError(f"metrics must be a non-empty subset of {GENERATION_METRICS}; got {list(metrics)}.")
    rows = [r for r in references if str(r.get("id")) in generations]
    if not rows:
        raise InputError(f"No generation matches a reference id (e.g. reference ids {[r.get('id') for r in references[:3]]}, generation ids {list(generations)[:3]}).")
    gens = [generations[str(r["id"])] for r in rows]
    out: dict[str, list[ItemScores]] = {}
    skipped = 0
    for m in metrics:
        if m == "bertscore":
            bs = bertscore or MiniLMBertScore()
            cols = {c: bs.precision(candidates=gens, references=[str(r.get(c) or "") for r in rows]) for c in REFERENCE_CLASSES}
        else:
            fn = bleu1_precision if m == "bleu1" else rouge_l_precision
            cols = {c: [fn(candidate=g, reference=str(r.get(c) or "")) for g, r in zip(gens, rows)] for c in REFERENCE_CLASSES}
        items = []
        for i, r in enumerate(rows):
            s = {c: cols[c][i] for c in REFERENCE_CLASSES}
            if any(math.isnan(v) for v in s.values()):
                skipped += 1
                continue
            items.append(ItemScores(id=str(r["id"]), task=f"generation-{m}", scores=s, familiar=r.get("familiar"),
                                    meta={k: r.get(k) for k in ("n_claims", "n_mentions", "entity", "summary") if k in r}))
        out[m] = items
    info = {"backend": "generation-precision", "model": "precision vs references", "metrics": list(metrics), "n_generations": len(rows),
            "n_empty_generations": skipped // len(metrics)}
    if "bertscore" in metrics:
        info["bertscore"] = (bertscore or bs).describe()
    return out, info
