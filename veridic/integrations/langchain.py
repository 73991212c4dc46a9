"""LangChain (``langchain-core`` only): :class:`VeridicGuard`, a runnable that checks an answer against its retrieved documents.

Install: ``pip install 'veridic[langchain]'``. Put it after the step that
produced ``{"answer": ..., "documents": [...]}`` (documents: LangChain
``Document`` objects or strings; the answer: a string or a message). It
returns the same dict with ``"veridic"`` added: score, label, passing,
uncertainty, the reason (unsupported sentences with their closest
evidence) and the sentence scores with evidence offsets
(``context`` = the document's index). ``on_unsupported``: ``"annotate"``
(default: pass the answer on), ``"raise"`` (:class:`UnsupportedAnswerError`,
a guard that stops the chain) or ``"replace"`` (swap the answer for
``fallback``; the original stays under ``"veridic"``). ``batch`` scores all
inputs in one scorer call.

>>> from langchain_core.documents import Document
>>> guard = VeridicGuard(backend="dummy", structure_check=False, on_unsupported="replace", fallback="I don't know.")
>>> out = guard.invoke({"answer": "Paris is in Spain and has ten million people.",
...                     "documents": [Document(page_content="Paris is the capital of France.")]})
>>> out["answer"], out["veridic"]["label"]
("I don't know.", 'unsupported')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from veridic.config import ScorerConfig
from veridic.errors import InputError, VeridicError
from veridic.integrations._core import Judge, Judgement, require

require("langchain_core", extra="langchain", purpose="The LangChain guard", package="langchain-core")

from langchain_core.runnables import Runnable, RunnableConfig  # noqa: E402

__all__ = ["UnsupportedAnswerError", "VeridicGuard"]


class UnsupportedAnswerError(VeridicError):
    """Raised by :class:`VeridicGuard` with ``on_unsupported="raise"``; ``judgement`` says why."""

    def __init__(self, judgement: Judgement):
        self.judgement = judgement
        super().__init__(f"The answer is not supported by its documents: {judgement.reason()}")


def _text(value: Any) -> Any:
    """A document or message as its text; anything else is passed on for the core to judge (and refuse)."""
    if hasattr(value, "page_content"):
        return value.page_content
    if hasattr(value, "content") and not isinstance(value, (str, Mapping)):
        content = value.content
        if isinstance(content, list):  # content blocks: keep the text ones
            content = "".join(b if isinstance(b, str) else b.get("text", "") for b in content if isinstance(b, (str, Mapping)))
        return content
    return value


class VeridicGuard(Runnable[dict, dict]):
    """Check ``input[answer_key]`` against ``input[documents_key]`` and attach veridic's verdict under ``output_key``.

    Scorer arguments (``config``, ``model``, ``backend``, ScorerConfig
    ``options``) as :class:`veridic.integrations.Judge`. A row that cannot be
    judged (no documents, a None answer...) gets score NaN, label
    ``invalid`` and the ``error``; with ``on_unsupported="raise"`` or
    ``"replace"`` it counts as unsupported.
    """

    def __init__(self, *, answer_key: str = "answer", documents_key: str = "documents", output_key: str = "veridic",
                 on_unsupported: Literal["annotate", "raise", "replace"] = "annotate", fallback: str = "I could not verify an answer in the sources.",
                 config: ScorerConfig | str | None = None, model: str | Path | None = None, backend: str = "auto", **options: Any):
        if on_unsupported not in ("annotate", "raise", "replace"):
            raise InputError(f"on_unsupported must be 'annotate', 'raise' or 'replace'; got {on_unsupported!r}.")
        self.answer_key, self.documents_key, self.output_key = answer_key, documents_key, output_key
        self.on_unsupported, self.fallback = on_unsupported, fallback
        self.judge = Judge(config=config, model=model, backend=backend, **options)

    def invoke(self, input: dict, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        # through LangChain's callback machinery, so tracers see the guard as one run
        return self._call_with_config(lambda x: self.batch([x])[0], input, config, run_type="chain")

    def batch(self, inputs: list[dict], config: RunnableConfig | list[RunnableConfig] | None = None, *, return_exceptions: bool = False,
              **kwargs: Any | None) -> list[dict]:
        """Judge every input in one scorer call (what LangChain's ``batch`` and ``map`` use)."""
        rows = []
        for i, item in enumerate(inputs):
            if not isinstance(item, Mapping):
                raise InputError(f"VeridicGuard takes a dict with {self.answer_key!r} and {self.documents_key!r}; input {i} is a {type(item).__name__}.")
            docs = item.get(self.documents_key)
            if docs is not None and not isinstance(docs, str) and isinstance(docs, Sequence):
                docs = [_text(d) for d in docs]
            rows.append((_text(item.get(self.answer_key)), docs))
        judged = self.judge.judge(answers=[a for a, _ in rows], contexts=[d for _, d in rows])
        out: list[Any] = []
        for item, j in zip(inputs, judged):
            try:
                out.append(self._apply(item, j))
            except UnsupportedAnswerError as exc:
                if not return_exceptions:
                    raise
                out.append(exc)
        return out

    def _apply(self, item: Mapping, j: Judgement) -> dict:
        result = dict(item)
        result[self.output_key] = j.to_dict()
        if not j.passing:
            if self.on_unsupported == "raise":
                raise UnsupportedAnswerError(j)
            if self.on_unsupported == "replace":
                result[self.output_key]["original_answer"] = item.get(self.answer_key)
                result[self.answer_key] = self.fallback
        return result
