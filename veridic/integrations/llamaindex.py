"""LlamaIndex: :class:`VeridicEvaluator`, a ``BaseEvaluator`` that needs no LLM.

Install: ``pip install 'veridic[llamaindex]'``. ``evaluate(query=,
response=, contexts=)``, ``evaluate_response(query=, response=Response)``
(the response's source nodes are the contexts) and
:class:`~llama_index.core.evaluation.BatchEvalRunner` all work. The result is
an ``EvaluationResult`` with ``score`` (veridic's verdict score),
``passing`` (label ``supported``) and ``feedback`` (the reason: the
unsupported sentences, their offsets and their closest evidence, then the
sentence scores with evidence offsets as JSON). A query that cannot be
judged (no contexts, a None response, a source over the length limit) gets
``invalid_result=True`` with ``invalid_reason`` and ``score`` None; the batch
goes on. Concurrent evaluations are scored in one scorer call.

>>> ev = VeridicEvaluator(backend="dummy", structure_check=False)
>>> r = ev.evaluate(query="Capital of France?", response="Paris is the capital of France.",
...                 contexts=["Paris is the capital of France."])
>>> r.passing, round(r.score, 2), r.feedback.splitlines()[0]
(True, 0.74, 'veridic hybrid: 0.739 (supported). All 1 answer sentence(s) are supported by the contexts.')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.integrations._core import AsyncBatcher, Judge, Judgement, require

require("llama_index.core", extra="llamaindex", purpose="The LlamaIndex evaluator", package="llama-index-core")

from llama_index.core.evaluation import BaseEvaluator, EvaluationResult  # noqa: E402
from llama_index.core.prompts.mixin import PromptDictType  # noqa: E402

__all__ = ["VeridicEvaluator"]


def feedback(j: Judgement) -> str:
    """The reason, then the sentence scores with their evidence offsets as one JSON line."""
    return j.reason() + "\n" + json.dumps({"label": j.label, "sentences": list(j.sentences)}, ensure_ascii=False)


class VeridicEvaluator(BaseEvaluator):
    """Faithfulness of a response to its contexts (or source nodes), judged by veridic's embedded NLI model.

    Scorer arguments (``config``, ``model``, ``backend``, ScorerConfig
    options as keywords) as :class:`veridic.integrations.Judge`.
    """

    def __init__(self, *, config: ScorerConfig | str | None = None, model: str | Path | None = None, backend: str = "auto", **options: Any):
        self.judge = Judge(config=config, model=model, backend=backend, **options)
        self._batcher = AsyncBatcher(self.judge)

    def _get_prompts(self) -> PromptDictType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        """No prompts: nothing to update."""

    async def aevaluate(self, query: str | None = None, response: str | None = None, contexts: Sequence[str] | None = None,
                        **kwargs: Any) -> EvaluationResult:
        j = await self._batcher.judge_one(answer=response, contexts=contexts)
        ctx = list(contexts) if isinstance(contexts, (list, tuple)) and all(isinstance(c, str) for c in contexts) else None
        resp = response if isinstance(response, str) else None
        if j.error is not None:
            return EvaluationResult(query=query, response=resp, contexts=ctx, passing=False, score=None, feedback=j.reason(),
                                    invalid_result=True, invalid_reason=j.error)
        return EvaluationResult(query=query, response=resp, contexts=ctx, passing=j.passing, score=j.score, feedback=feedback(j))
