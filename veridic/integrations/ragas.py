"""RAGAS: :class:`VeridicFaithfulness`, a metric for ``ragas.evaluate`` that needs no LLM.

Install: ``pip install 'veridic[ragas]'``. It scores each sample's
``response`` against its ``retrieved_contexts`` (joined as
:func:`veridic.integrations.join_contexts` does) with veridic's scorer;
``user_input`` is not read. Rows that RAGAS runs concurrently are scored
together (:class:`veridic.integrations._core.AsyncBatcher`).

The score is veridic's verdict score (default ``hybrid``: the probability
that the response is faithful, in [0, 1]); a sample that cannot be judged
(no contexts, a None response, a source over the length limit) scores NaN,
which RAGAS leaves out of the mean, and the run goes on. The explanation —
label, reason (the unsupported sentences with their closest evidence) and
per-sentence scores with evidence offsets — is in RAGAS's own traces:
``result.traces[i]["veridic_faithfulness"]["veridic"]["output"]``.

>>> from ragas import EvaluationDataset, evaluate
>>> ds = EvaluationDataset.from_list([{"user_input": "Capital of France?", "response": "Paris is the capital of France.",
...                                   "retrieved_contexts": ["Paris is the capital of France."]}])
>>> result = evaluate(ds, metrics=[VeridicFaithfulness(backend="dummy", structure_check=False)], show_progress=False)
>>> round(result["veridic_faithfulness"][0], 2)
0.74
"""

from __future__ import annotations

import math
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from veridic.config import ScorerConfig
from veridic.integrations._core import AsyncBatcher, Judge, Judgement, require

require("ragas", extra="ragas", purpose="The RAGAS metric")

from ragas.callbacks import ChainType, new_group  # noqa: E402
from ragas.dataset_schema import SingleTurnSample  # noqa: E402
from ragas.metrics.base import MetricType, SingleTurnMetric  # noqa: E402
from ragas.run_config import RunConfig  # noqa: E402

__all__ = ["VeridicFaithfulness"]


@dataclass
class VeridicFaithfulness(SingleTurnMetric):
    """Faithfulness of ``response`` to ``retrieved_contexts``, judged by veridic's embedded NLI model.

    ``config``, ``model``, ``backend`` and ``options`` (ScorerConfig fields,
    e.g. ``{"threshold": 0.6}``) choose the scorer as
    :class:`veridic.integrations.Judge` does; ScorerConfig fields may also be
    passed as keywords.
    """

    name: str = "veridic_faithfulness"
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {MetricType.SINGLE_TURN: {"response", "retrieved_contexts", "user_input:optional"}})
    config: ScorerConfig | str | None = None
    model: str | Path | None = None
    backend: str = "auto"
    options: dict[str, t.Any] = field(default_factory=dict)

    def __init__(self, *, name: str = "veridic_faithfulness", config: ScorerConfig | str | None = None, model: str | Path | None = None,
                 backend: str = "auto", options: dict[str, t.Any] | None = None, **scorer_options: t.Any):
        self.name = name
        self._required_columns = {MetricType.SINGLE_TURN: {"response", "retrieved_contexts", "user_input:optional"}}
        self.config, self.model, self.backend = config, model, backend
        self.options = {**(options or {}), **scorer_options}
        self.judge = Judge(config=config, model=model, backend=backend, **self.options)
        self._batcher = AsyncBatcher(self.judge)
        self.__post_init__()

    def init(self, run_config: RunConfig) -> None:
        """Nothing to set up: the scorer loads on the first sample."""

    async def _single_turn_ascore(self, sample: SingleTurnSample, callbacks: t.Any) -> float:
        j = await self._batcher.judge_one(answer=sample.response, contexts=sample.retrieved_contexts)
        self._trace(sample, j, callbacks)
        return j.score

    async def _ascore(self, row: dict, callbacks: t.Any) -> float:
        return await self._single_turn_ascore(SingleTurnSample(**row), callbacks)

    @staticmethod
    def _trace(sample: SingleTurnSample, j: Judgement, callbacks: t.Any) -> None:
        # A child run of this metric's run: RAGAS lists it in result.traces[row][metric]["veridic"].
        if not callbacks:
            return
        rm, _ = new_group("veridic", inputs={"data": {"response": sample.response, "retrieved_contexts": sample.retrieved_contexts}},
                          callbacks=callbacks, metadata={"type": ChainType.RAGAS_PROMPT})
        out = j.to_dict()
        out["score"] = None if math.isnan(j.score) else j.score
        rm.on_chain_end({"output": out})
