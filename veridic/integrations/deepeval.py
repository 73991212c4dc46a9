"""DeepEval: :class:`VeridicMetric`, a ``BaseMetric`` for ``deepeval.evaluate`` and ``assert_test`` that needs no LLM.

Install: ``pip install 'veridic[deepeval]'`` (set ``DEEPEVAL_TELEMETRY_OPT_OUT=1``
to keep DeepEval itself offline). It scores ``actual_output`` against
``retrieval_context`` (or ``context`` when there is no retrieval context),
joined as :func:`veridic.integrations.join_contexts` does. ``score`` is
veridic's verdict score; ``success`` is ``score >= threshold`` (default: the
scorer's own threshold, 0.5 for ``hybrid``); ``reason`` names the
unsupported sentences, their offsets in the answer and their closest
evidence (context index and offsets); ``score_breakdown`` holds the label
and the per-sentence scores with evidence offsets. A test case that cannot
be judged (no context, a None output, a source over the length limit) gets
``score`` None, ``success`` False and ``error``/``reason`` saying why — the
run and the other metrics go on. ``a_measure`` (DeepEval's default async
mode) scores concurrent test cases in one scorer call.

>>> from deepeval.test_case import LLMTestCase
>>> metric = VeridicMetric(backend="dummy", structure_check=False)
>>> case = LLMTestCase(input="Capital of France?", actual_output="Paris is the capital of France.",
...                    retrieval_context=["Paris is the capital of France."])
>>> round(metric.measure(case, _show_indicator=False), 2), metric.is_successful()
(0.74, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.integrations._core import AsyncBatcher, Judge, Judgement, require

require("deepeval", extra="deepeval", purpose="The DeepEval metric")

from deepeval.metrics import BaseMetric  # noqa: E402
from deepeval.test_case import LLMTestCase, SingleTurnParams  # noqa: E402

__all__ = ["VeridicMetric"]


class VeridicMetric(BaseMetric):
    """Faithfulness of ``actual_output`` to ``retrieval_context``, judged by veridic's embedded NLI model.

    Scorer arguments (``config``, ``model``, ``backend``, ScorerConfig
    ``options`` or keywords) as :class:`veridic.integrations.Judge`.
    ``threshold`` None: the scorer's decision threshold.
    """

    _required_params = [SingleTurnParams.ACTUAL_OUTPUT]

    def __init__(self, threshold: float | None = None, *, config: ScorerConfig | str | None = None, model: str | Path | None = None,
                 backend: str = "auto", options: dict[str, Any] | None = None, include_reason: bool = True, async_mode: bool = True,
                 strict_mode: bool = False, verbose_mode: bool = False, judge: Judge | None = None, batcher: AsyncBatcher | None = None,
                 **scorer_options: Any):
        # DeepEval rebuilds a metric per test case from these attributes: judge and batcher are shared by the copies.
        self.options = {**(options or {}), **scorer_options}
        self.config, self.model_path, self.backend = config, model, backend
        self.judge = judge or Judge(config=config, model=model, backend=backend, **self.options)
        self.batcher = batcher or AsyncBatcher(self.judge)
        self.threshold = self.judge.config.decision_threshold if threshold is None else float(threshold)
        self.include_reason, self.async_mode, self.strict_mode, self.verbose_mode = include_reason, async_mode, strict_mode, verbose_mode
        self.evaluation_model = f"veridic {self.judge.name}"
        self.evaluation_cost = 0.0

    @staticmethod
    def _contexts(test_case: LLMTestCase) -> Any:
        return test_case.retrieval_context if test_case.retrieval_context is not None else test_case.context

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        (j,) = self.judge.judge(answers=[test_case.actual_output], contexts=[self._contexts(test_case)])
        return self._record(j)

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float | None:
        j = await self.batcher.judge_one(answer=test_case.actual_output, contexts=self._contexts(test_case))
        return self._record(j)

    def _record(self, j: Judgement) -> float | None:
        self.judgement = j
        self.score_breakdown = {"label": j.label, "sentences": list(j.sentences)}
        self.reason = j.reason() if self.include_reason or j.error else None
        if j.error is not None:
            self.error, self.score, self.success = j.error, None, False
            return None
        self.error = None
        self.score = 1.0 if self.strict_mode and j.score >= self.threshold else (0.0 if self.strict_mode else j.score)
        self.success = self.is_successful()
        return self.score

    def is_successful(self) -> bool:
        if self.error is not None or self.score is None:
            self.success = False
        else:
            self.success = self.score >= self.threshold
        return self.success

    @property
    def __name__(self) -> str:
        return "veridic faithfulness"
