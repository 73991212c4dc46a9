"""What every integration shares: rows in, one scorer call, judgements with their reasons out.

A *row* is an answer and the retrieved contexts it should rest on. The
contexts are joined into one source (:func:`join_contexts`, blank ones
dropped) and scored with the scorer a :class:`~veridic.config.ScorerConfig`
describes, built by :func:`veridic.factory.load_scorer` — the same scorer and
the same source as ``veridic score --source "$(joined contexts)" --claim
ANSWER``, so the scores are equal.

A row that cannot be judged (no context, a context that is not a string, a
None or empty answer, a source over the length limit) gets, with
``on_invalid="nan"`` (the default), a :class:`Judgement` whose ``score`` is
NaN, whose ``label`` is ``"invalid"`` and whose ``error`` says why; with
``on_invalid="raise"`` it raises :class:`~veridic.errors.InputError`.

>>> judge = Judge(backend="dummy", structure_check=False)
>>> j = judge.judge(answers=["Paris is in France."], contexts=[["Paris is the capital of France."]])[0]
>>> j.label, j.passing, j.sentences[0]["evidence"]["context"]
('supported', True, 0)
>>> bad = judge.judge(answers=[None], contexts=[["Paris is in France."]])[0]
>>> bad.label, bad.error
('invalid', 'the answer is None; expected a string to check against its contexts.')
"""

from __future__ import annotations

import bisect
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from veridic.config import ScorerConfig
from veridic.errors import ConfigError, InputError, MissingDependencyError
from veridic.types import Verdict, is_blank

__all__ = ["AsyncBatcher", "CONTEXT_SEPARATOR", "Judge", "Judgement", "join_contexts", "require"]

#: what joins a row's contexts into the one source veridic scores.
CONTEXT_SEPARATOR = "\n\n"
OnInvalid = Literal["nan", "raise"]


def require(module: str, *, extra: str, purpose: str, package: str | None = None) -> Any:
    """Import ``module`` or raise :class:`MissingDependencyError` with the one install command for ``extra``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is None or not module.startswith(exc.name):
            raise ImportError(f"{purpose} needs {package or module!r}, which is installed but fails to import ({exc}); "
                              f"reinstall a supported version with: pip install 'veridic[{extra}]'") from exc
        raise MissingDependencyError(package or module.split(".")[0], extra=extra, purpose=purpose) from exc


@dataclass(frozen=True, slots=True)
class _Row:
    answer: str | None
    contexts: tuple[str, ...]
    starts: tuple[int, ...]  # where each kept context starts in the joined source
    kept: tuple[int, ...]  # the index each kept context had in the row's own list
    source: str | None
    error: str | None


def join_contexts(contexts: str | Sequence[str]) -> str:
    """The source veridic scores for a row: the non-blank contexts joined by :data:`CONTEXT_SEPARATOR`.

    >>> join_contexts(["Paris is in France.", "  ", "It has 2 million people."])
    'Paris is in France.\\n\\nIt has 2 million people.'
    """
    row = _prepare(answer="x", contexts=contexts)
    if row.error is not None:
        raise InputError(row.error)
    return row.source  # type: ignore[return-value]


def _prepare(*, answer: Any, contexts: Any) -> _Row:
    def bad(msg: str) -> _Row:
        return _Row(answer=None, contexts=(), starts=(), kept=(), source=None, error=msg)

    if contexts is None or (isinstance(contexts, float) and math.isnan(contexts)):
        return bad("the answer has no context (got None); pass the retrieved passages it should rest on as a list of strings.")
    if isinstance(contexts, str):
        contexts = [contexts]
    elif hasattr(contexts, "tolist") and not isinstance(contexts, (list, tuple)):  # a numpy array or Arrow list cell
        contexts = contexts.tolist()
    if not isinstance(contexts, Sequence):
        return bad(f"contexts must be a list of strings; got {type(contexts).__name__}.")
    kept: list[str] = []
    idx: list[int] = []
    for i, c in enumerate(contexts):
        if not isinstance(c, str):
            return bad(f"context {i} is a {type(c).__name__} ({c!r:.40}); every context must be a string (the passage text).")
        if not is_blank(c):
            kept.append(c)
            idx.append(i)
    if not kept:
        return bad("the answer has no context (the list is empty or every passage is blank); veridic needs a passage to check the answer against.")
    if answer is None:
        return bad("the answer is None; expected a string to check against its contexts.")
    if isinstance(answer, float) and math.isnan(answer):
        return bad("the answer is NaN (a missing value); expected a string to check against its contexts.")
    if not isinstance(answer, str):
        return bad(f"the answer must be a string; got {type(answer).__name__} ({answer!r:.40}).")
    if is_blank(answer):
        return bad("the answer is empty (or only invisible characters); there is nothing to check.")
    starts, pos = [], 0
    for c in kept:
        starts.append(pos)
        pos += len(c) + len(CONTEXT_SEPARATOR)
    source = CONTEXT_SEPARATOR.join(kept)
    from veridic.io import check_text_length

    try:
        check_text_length(source, what="joined context")
    except InputError as exc:
        return bad(str(exc))
    return _Row(answer=answer, contexts=tuple(kept), starts=tuple(starts), kept=tuple(idx), source=source, error=None)


@dataclass(frozen=True, slots=True)
class Judgement:
    """veridic's judgement of one answer against its contexts.

    ``score``: the verdict score (the scorer's scale; for the default
    ``hybrid`` the probability that the answer is faithful), NaN when the row
    could not be judged. ``label``: ``supported``, ``unsupported``,
    ``abstain``, or ``invalid`` (then ``error`` says why). ``passing``:
    ``label == "supported"``. ``sentences``: per answer sentence, its offsets
    in the answer, its score, whether it is supported, and its best evidence
    as ``{"context": i, "start", "end", "text"}`` (offsets into context ``i``
    of the row; ``context_end`` is set when the evidence window runs into a
    later context). ``verdict``: the full :class:`~veridic.types.Verdict`.
    """

    score: float
    label: str
    uncertainty: float | None
    passing: bool
    method: str
    sentences: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    verdict: Verdict | None = None
    error: str | None = None

    @property
    def unsupported(self) -> tuple[dict[str, Any], ...]:
        """The answer sentences the scorer does not find supported."""
        return tuple(s for s in self.sentences if not s["supported"])

    def reason(self) -> str:
        """One paragraph saying why: the verdict, then each unsupported sentence with its offsets and closest evidence."""
        if self.error is not None:
            return f"veridic could not judge this answer: {self.error}"
        head = f"veridic {self.method}: {self.score:.3f} ({self.label})"
        if self.uncertainty is not None:
            head += f", uncertainty {self.uncertainty:.3f}"
        bad = self.unsupported
        if not bad:
            return f"{head}. All {len(self.sentences)} answer sentence(s) are supported by the contexts."
        parts = []
        for s in bad:
            ev = s["evidence"]
            where = "" if ev is None else f"; closest evidence: context {ev['context']} [{ev['start']}:{ev['end']}] {_clip(ev['text'])!r}"
            why = f" ({s['conflict']['kind']}: {s['conflict']['text']!r} vs {s['conflict']['suggestion']!r})" if s.get("conflict") else ""
            parts.append(f"answer [{s['start']}:{s['end']}] {_clip(s['text'])!r} scores {s['score']:.3f}{why}{where}")
        return f"{head}. Unsupported: " + " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: score, label, uncertainty, passing, method, error, reason and sentences."""
        return {"score": None if math.isnan(self.score) else self.score, "label": self.label, "uncertainty": self.uncertainty,
                "passing": self.passing, "method": self.method, "error": self.error, "reason": self.reason(), "sentences": list(self.sentences)}


def _clip(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _locate(row: _Row, start: int, end: int) -> dict[str, Any]:
    """A span of the joined source as offsets into the row's own contexts."""
    i = bisect.bisect_right(row.starts, start) - 1
    j = bisect.bisect_right(row.starts, max(start, end - 1)) - 1
    out: dict[str, Any] = {"context": row.kept[i], "start": start - row.starts[i], "end": end - row.starts[j],
                           "text": row.source[start:end]}  # type: ignore[index]
    if j != i:
        out["context_end"] = row.kept[j]
    return out


class Judge:
    """Scores answers against their contexts with the scorer ``config`` describes (built once, on first use).

    ``config``: a :class:`~veridic.config.ScorerConfig`, a registered name
    (``"hybrid"``, ``"e-c"``...) or None (the default, as ``veridic score``).
    ``options`` are ScorerConfig fields (``threshold``, ``mc_samples``...).
    ``model``, ``backend``, ``device``, ``batch_size``: as
    :func:`veridic.factory.load_scorer` (``backend="dummy"`` for examples).
    ``on_invalid``: ``"nan"`` (a row that cannot be judged scores NaN with
    label ``invalid`` and an ``error``) or ``"raise"``.
    """

    def __init__(self, *, config: ScorerConfig | str | None = None, model: str | Path | None = None, backend: str = "auto",
                 device: str = "cpu", batch_size: int = 32, on_invalid: OnInvalid = "nan", **options: Any):
        from veridic.config import resolve_config

        if on_invalid not in ("nan", "raise"):
            raise ConfigError(f"on_invalid must be 'nan' or 'raise'; got {on_invalid!r}.")
        self.config = resolve_config(config, **options)  # validated now, before any model loads
        self.on_invalid = on_invalid
        self._load = dict(model=model, backend=backend, device=device, batch_size=batch_size)
        self._scorer: Any = None
        # One scoring call at a time: the frameworks' worker threads share the scorer and its parse cache.
        self._lock = threading.Lock()

    @property
    def scorer(self) -> Any:
        """The scorer (loaded on first use, the backend once per process)."""
        with self._lock:
            if self._scorer is None:
                from veridic.factory import load_scorer

                self._scorer = load_scorer(self.config, **self._load)
        return self._scorer

    @property
    def name(self) -> str:
        return self.config.label

    def judge(self, *, answers: Sequence[Any], contexts: Sequence[Any], dialogue: Sequence[Any] | None = None,
              progress: bool = False) -> list[Judgement]:
        """One :class:`Judgement` per (answer, contexts) row, valid rows scored in one scorer call.

        ``dialogue``: optional conversation history per row (veridic's
        ``context``; read by ``context_mode="premise"``).
        """
        if isinstance(answers, str):
            raise InputError("answers must be a list of strings (one per row), not a single string: wrap it in [...].")
        answers, contexts = list(answers), list(contexts)
        if len(answers) != len(contexts):
            raise InputError(f"Got {len(answers)} answers but {len(contexts)} context lists; pass one list of contexts per answer.")
        dialogue = [None] * len(answers) if dialogue is None else list(dialogue)
        if len(dialogue) != len(answers):
            raise InputError(f"Got {len(dialogue)} dialogue contexts for {len(answers)} answers; pass one (or None) per answer.")
        rows = [_prepare(answer=a, contexts=c) for a, c in zip(answers, contexts)]
        if self.on_invalid == "raise":
            for i, r in enumerate(rows):
                if r.error is not None:
                    raise InputError(f"Row {i}: {r.error}")
        ok = [i for i, r in enumerate(rows) if r.error is None]
        scorer = self.scorer if ok else None  # a batch of rows it cannot judge loads no model
        with self._lock:
            verdicts = self._score(scorer, [rows[i] for i in ok], [dialogue[i] for i in ok], progress=progress)
        out: list[Judgement] = [self._invalid(r.error) for r in rows]  # type: ignore[arg-type]
        for i, v in zip(ok, verdicts):
            out[i] = v if isinstance(v, Judgement) else self._judgement(rows[i], v)
        return out

    def _score(self, scorer: Any, rows: list[_Row], dialogue: list[Any], *, progress: bool) -> list[Verdict | Judgement]:
        if not rows:
            return []
        sources, claims = [r.source for r in rows], [r.answer for r in rows]
        try:
            return list(scorer.score(sources=sources, claims=claims, contexts=dialogue, progress=progress))
        except InputError:
            if self.on_invalid == "raise":
                raise
        # One bad row (e.g. an unpaired surrogate) must not sink the others: score each alone.
        out: list[Verdict | Judgement] = []
        for r, d in zip(rows, dialogue):
            try:
                out.append(scorer.score(sources=[r.source], claims=[r.answer], contexts=[d])[0])
            except InputError as exc:
                if self.on_invalid == "raise":
                    raise
                out.append(self._invalid(str(exc)))
        return out

    def _invalid(self, error: str) -> Judgement:
        return Judgement(score=math.nan, label="invalid", uncertainty=None, passing=False, method=self.name, error=error)

    def _judgement(self, row: _Row, v: Verdict) -> Judgement:
        thr = getattr(self.scorer, "sentence_threshold", None)
        sents = []
        for s in v.sentences:
            d: dict[str, Any] = {"start": s.span.start, "end": s.span.end, "text": s.span.text, "score": s.score,
                                 "supported": True if thr is None else s.score >= thr,
                                 "evidence": None if s.evidence is None else _locate(row, s.evidence.start, s.evidence.end)}
            if s.conflict is not None:
                d["conflict"] = {"kind": s.conflict.kind, "text": s.conflict.text, "suggestion": s.conflict.suggestion}
            sents.append(d)
        if not sents:  # a document-level scorer: one unit, the whole answer
            ev = _locate(row, v.evidence[0].start, v.evidence[0].end) if v.evidence else None
            sents.append({"start": 0, "end": len(row.answer or ""), "text": row.answer, "score": v.score,
                          "supported": v.label == "supported", "evidence": ev})
        return Judgement(score=v.score, label=v.label, uncertainty=v.uncertainty, passing=v.label == "supported",
                         method=v.method, sentences=tuple(sents), verdict=v)


class AsyncBatcher:
    """Gathers the rows that concurrent coroutines ask for into one :meth:`Judge.judge` call.

    Frameworks that score one row per coroutine (RAGAS, DeepEval, LlamaIndex)
    run many at once; each :meth:`judge` waits one loop turn for its
    neighbours, then the whole group is scored in a worker thread, so a run
    costs about what one batched ``veridic score`` call does.
    """

    def __init__(self, judge: Judge, *, max_rows: int = 256):
        self.judge = judge
        self.max_rows = max_rows
        self._pending: dict[Any, list[tuple[Any, Any, Any]]] = {}

    async def judge_one(self, *, answer: Any, contexts: Any) -> Judgement:
        import asyncio

        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        queue = self._pending.setdefault(loop, [])
        queue.append((answer, contexts, fut))
        if len(queue) == 1:
            loop.create_task(self._flush(loop))
        return await fut

    async def _flush(self, loop: Any) -> None:
        import asyncio

        await asyncio.sleep(0)  # let the coroutines started with this one queue their rows
        while self._pending.get(loop):
            batch, self._pending[loop] = self._pending[loop][: self.max_rows], self._pending[loop][self.max_rows :]
            try:
                out = await asyncio.to_thread(self.judge.judge, answers=[a for a, _, _ in batch], contexts=[c for _, c, _ in batch])
            except Exception as exc:  # handed to every waiting row, never lost
                for _, _, fut in batch:
                    if not fut.done():
                        fut.set_exception(exc)
                continue
            for (_, _, fut), j in zip(batch, out):
                if not fut.done():
                    fut.set_result(j)
        self._pending.pop(loop, None)
