"""Haystack: :class:`VeridicEvaluator`, an evaluator component for pipelines that needs no LLM.

Install: ``pip install 'veridic[haystack]'``. It takes what Haystack's own
``FaithfulnessEvaluator`` takes — ``questions``, ``contexts`` (a list of
passages per question) and ``predicted_answers`` — and returns
``individual_scores`` (veridic's verdict score per answer; NaN for one it
cannot judge), ``score`` (their mean over the judged answers) and
``results``: per answer its ``score``, ``label``, ``passing``, ``reason``
(the unsupported sentences with their offsets and closest evidence),
``sentences`` (sentence scores with evidence offsets, ``context`` = the
passage's index) and ``error`` (why it could not be judged, else None).
All answers go through one scorer call.

>>> from haystack import Pipeline
>>> p = Pipeline()
>>> _ = p.add_component("veridic", VeridicEvaluator(backend="dummy", structure_check=False))
>>> out = p.run({"veridic": {"questions": ["Capital of France?"], "contexts": [["Paris is the capital of France."]],
...                          "predicted_answers": ["Paris is the capital of France."]}})
>>> round(out["veridic"]["score"], 2), out["veridic"]["results"][0]["label"]
(0.74, 'supported')
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from veridic.config import ScorerConfig
from veridic.errors import InputError
from veridic.integrations._core import Judge, require

require("haystack", extra="haystack", purpose="The Haystack evaluator", package="haystack-ai")

from haystack import component, default_from_dict, default_to_dict  # noqa: E402

__all__ = ["VeridicEvaluator"]


@component
class VeridicEvaluator:
    """Faithfulness of each predicted answer to its contexts, judged by veridic's embedded NLI model.

    Scorer arguments (``config``: a registered name or None; ``model``,
    ``backend``, ScorerConfig ``options``) as :class:`veridic.integrations.Judge`.
    """

    def __init__(self, *, config: str | ScorerConfig | None = None, model: str | Path | None = None, backend: str = "auto", options: dict[str, Any] | None = None,
                 **scorer_options: Any):
        if isinstance(config, ScorerConfig):  # serialisable: its fields become options
            scorer_options = {**{k: v for k, v in dataclasses.asdict(config).items() if k not in ("method",)}, **scorer_options}
            config = config.method
        self.config, self.model, self.backend = config, None if model is None else str(model), backend
        self.options = {**(options or {}), **scorer_options}
        self.judge = Judge(config=config, model=model, backend=backend, **self.options)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(self, config=self.config, model=self.model, backend=self.backend, options=self.options)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VeridicEvaluator:
        return default_from_dict(cls, data)

    @component.output_types(individual_scores=list[float], score=float, results=list[dict[str, Any]])
    def run(self, questions: list[str], contexts: list[list[str]], predicted_answers: list[str]) -> dict[str, Any]:
        """Score each predicted answer against its contexts (``questions`` are carried, not read)."""
        if not (len(questions) == len(contexts) == len(predicted_answers)):
            raise InputError(f"VeridicEvaluator needs one entry per row in each input; got {len(questions)} questions, "
                             f"{len(contexts)} context lists and {len(predicted_answers)} predicted answers.")
        judged = self.judge.judge(answers=predicted_answers, contexts=contexts)
        scores = [j.score for j in judged]
        valid = [s for s in scores if not math.isnan(s)]
        results = [{"score": None if j.error else j.score, "label": j.label, "passing": j.passing, "reason": j.reason(),
                    "sentences": list(j.sentences), "error": j.error} for j in judged]
        return {"individual_scores": scores, "score": sum(valid) / len(valid) if valid else math.nan, "results": results}
