"""veridic inside the tools people already use: DataFrames and evaluation frameworks.

Each framework's adapter lives in its own module and is imported only when
asked for, so ``import veridic.integrations`` imports no framework. A
missing framework raises :class:`~veridic.errors.MissingDependencyError`
with its one install command.

===================  ==================================  ==========================
module               what                                install
===================  ==================================  ==========================
``_frames``          :func:`score_frame` (pandas,        ``veridic[frames]``
                     polars, Arrow)
``langchain``        ``VeridicGuard`` runnable           ``veridic[langchain]``
``ragas``            ``VeridicFaithfulness`` metric      ``veridic[ragas]``
``deepeval``         ``VeridicMetric`` (BaseMetric)      ``veridic[deepeval]``
``llamaindex``       ``VeridicEvaluator``                ``veridic[llamaindex]``
``haystack``         ``VeridicEvaluator`` component      ``veridic[haystack]``
===================  ==================================  ==========================

Every adapter scores through :class:`Judge` (one scorer built from a
:class:`~veridic.config.ScorerConfig`), so its scores equal ``veridic
score`` on the same pairs (the row's contexts joined by
:func:`join_contexts` as the source), and puts :meth:`Judgement.reason`
(unsupported sentences, their offsets and closest evidence) in the
framework's own feedback field.

>>> from veridic.integrations import score_frame, join_contexts
>>> join_contexts(["A.", "B."])
'A.\\n\\nB.'
"""

from __future__ import annotations

from typing import Any

from veridic.integrations._core import CONTEXT_SEPARATOR, Judge, Judgement, join_contexts

__all__ = ["CONTEXT_SEPARATOR", "Judge", "Judgement", "join_contexts", "score_frame"]


def __getattr__(name: str) -> Any:
    if name == "score_frame":
        from veridic.integrations._frames import score_frame

        return score_frame
    raise AttributeError(f"module 'veridic.integrations' has no attribute {name!r}")
