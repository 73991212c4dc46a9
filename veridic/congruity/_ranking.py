"""Rank multiple-choice options with a causal LM's log-likelihood, or with any scorer.

Each option is put in the description slot and the LM scores the rest of
the sentence from the slot on (option + what follows it), conditioned on
the previous sentence and the sentence up to the slot::

    context      = "<previous sentence> <sentence up to the slot>"      e.g. "... said J. Anthony Lukas ,"
    continuation = " <option><rest of the sentence>"                     e.g. " the author and journalist , said ..."

so the words after the slot also vote on whether the option fits. The
score is ``log P(continuation | context)`` divided by the continuation's
UTF-8 byte length (``normalization="per_byte"``, lm-evaluation-harness's
``acc_norm``; options differ a lot in length) or the plain sum
(``"sum"``). Higher = preferred.

The ranker receives a backend (:class:`veridic.lm.LanguageModel`); wrap
it in :class:`veridic.lm.CachingLM` with a path to make re-runs free.

>>> from veridic.lm._dummy import DummyLM
>>> from veridic.congruity._build import MCItem
>>> item = MCItem(id="1", task="claim", entity="Ann Lee", left="Ann Lee ,", right=" , said .", previous="",
...               options={"accurate": "senator", "incongruous": "born in Ohio", "nonfactual": "drummer", "both": "chef"})
>>> [r.id for r in rank_items(items=[item], backend=DummyLM())]
['1']
>>> requests_for(item)[0]
LoglikelihoodRequest(context='Ann Lee ,', continuation=' senator , said .')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from veridic.congruity._build import MCItem
from veridic.errors import ConfigError, InputError
from veridic.lm._api import LanguageModel, LoglikelihoodRequest
from veridic.types import _Record

__all__ = ["NORMALIZATIONS", "ItemScores", "rank_items", "requests_for", "score_with"]

Normalization = Literal["per_byte", "sum"]
NORMALIZATIONS = ("per_byte", "sum")


@dataclass(frozen=True)
class ItemScores(_Record):
    """Scores of one item's options (higher = preferred), with what the report needs to split it."""

    id: str
    task: str
    scores: dict[str, float]
    familiar: bool | None = None
    meta: dict[str, Any] = field(default_factory=dict)


    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ItemScores:
        return cls(id=str(d["id"]), task=str(d.get("task", "")), scores={k: float(v) for k, v in d["scores"].items()}, familiar=d.get("familiar"), meta=dict(d.get("meta") or {}))


def requests_for(item: MCItem, *, with_previous: bool = True) -> list[LoglikelihoodRequest]:
    """One request per option, in ``item.options`` order (see the module docstring)."""
    ctx = item.left
    if with_previous and item.previous.strip():
        ctx = item.previous.strip() + " " + ctx
    return [LoglikelihoodRequest(context=ctx, continuation=" " + opt.strip() + item.right.rstrip()) for opt in item.options.values()]


def rank_items(
    *,
    items: Sequence[MCItem],
    backend: LanguageModel,
    normalization: Normalization = "per_byte",
    with_previous: bool = True,
    chunk_size: int = 64,
    progress: bool = False,
    on_chunk: Callable[[int, int], None] | None = None,
) -> list[ItemScores]:
    """Score every option of every item with ``backend.loglikelihood``."""
    if normalization not in NORMALIZATIONS:
        raise ConfigError(f"normalization must be one of {NORMALIZATIONS}; got {normalization!r}.")
    if not items:
        raise InputError("No items to rank.")
    out: list[ItemScores] = []
    for a in range(0, len(items), chunk_size):
        chunk = items[a : a + chunk_size]
        reqs = [r for it in chunk for r in requests_for(it, with_previous=with_previous)]
        res = backend.loglikelihood(reqs, progress=progress)
        k = 0
        for it in chunk:
            scores = {}
            for cls in it.options:
                r, q = res[k], reqs[k]
                k += 1
                scores[cls] = r.logprob / len(q.continuation.encode("utf-8")) if normalization == "per_byte" else r.logprob
            out.append(ItemScores(id=it.id, task=it.task, scores=scores, familiar=it.familiar, meta=dict(it.meta)))
        if on_chunk is not None:
            on_chunk(min(a + chunk_size, len(items)), len(items))
    return out


def score_with(*, items: Sequence[MCItem], scorer: Callable[[MCItem], Mapping[str, float]]) -> list[ItemScores]:
    """Rank with any function ``item -> {class: score}`` (e.g. a fine-tuned multiple-choice model).

    >>> it = MCItem(id="1", task="claim", entity="A", left="A ,", right=" .", previous="", options={"accurate": "x", "both": "yy"})
    >>> score_with(items=[it], scorer=lambda i: {k: -len(v) for k, v in i.options.items()})[0].scores
    {'accurate': -1.0, 'both': -2.0}
    """
    out = []
    for it in items:
        s = dict(scorer(it))
        if set(s) != set(it.options):
            raise InputError(f"The scorer returned classes {sorted(s)} for item {it.id}; expected {sorted(it.options)}.")
        bad = [k for k, v in s.items() if not isinstance(v, (int, float)) or math.isnan(float(v))]
        if bad:
            raise InputError(f"The scorer returned non-numeric or NaN scores for {bad} on item {it.id}.")
        out.append(ItemScores(id=it.id, task=it.task, scores={k: float(v) for k, v in s.items()}, familiar=it.familiar, meta=dict(it.meta)))
    return out
