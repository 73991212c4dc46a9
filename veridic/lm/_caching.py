"""Remember a backend's answers (lm-evaluation-harness's ``CachingLM``).

``CachingLM(backend, path=...)`` wraps any :class:`~veridic.lm._api.LanguageModel`.
``loglikelihood`` results and deterministic ``generate`` results (greedy, or
sampled with a seed, and no logits processors: a processor is arbitrary
code whose identity cannot be keyed) are kept in memory and, with ``path``,
in SQLite, keyed by the model's id, revision, dtype and window as well as
the request. Everything else passes through to the wrapped backend.

>>> from veridic.lm._dummy import DummyLM
>>> from veridic.lm._api import LoglikelihoodRequest
>>> inner = DummyLM()
>>> lm = CachingLM(inner)
>>> reqs = [LoglikelihoodRequest(context="a", continuation="b")] * 3
>>> a = lm.loglikelihood(reqs); b = lm.loglikelihood(reqs)
>>> inner.calls, lm.hits, lm.misses
(1, 5, 1)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from veridic.lm._api import (
    GenerationRequest,
    GenerationResult,
    LanguageModel,
    LogitsProcessor,
    LoglikelihoodRequest,
    LoglikelihoodResult,
    check_requests,
)

__all__ = ["CachingLM"]


class CachingLM:
    """Wrap a backend; answer repeated requests from memory or an SQLite file."""

    def __init__(self, backend: LanguageModel, *, path: str | Path | None = None):
        self.inner = backend
        self.hits = 0
        self.misses = 0
        self._memo: dict[str, Any] = {}
        d = backend.describe()
        self._model_key = json.dumps([backend.model_id, backend.revision, d.get("dtype"), backend.max_length, d.get("backend")])
        self._db = None
        if path is not None:
            from veridic.io._store import DiskStore

            self._db = DiskStore(path)

    def __getattr__(self, name: str) -> Any:
        # tok_encode, next_token_logprobs, stream, describe... are the backend's own.
        return getattr(self.inner, name)

    def _key(self, method: str, req: Any) -> str:
        payload = json.dumps([self._model_key, method, dataclasses.asdict(req)], sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()

    def _lookup(self, keys: list[str]) -> None:
        if self._db is None:
            return
        self._memo.update(self._db.get_many([k for k in keys if k not in self._memo]))

    def _store(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        for k, v in items:
            self._memo[k] = v
        if self._db is not None and items:
            self._db.put_many(items)

    def _cached(self, method: str, reqs: list[Any], compute) -> list[dict[str, Any]]:
        keys = [self._key(method, r) for r in reqs]
        self._lookup(keys)
        # One backend call per distinct missing key, even when a request repeats.
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if k not in self._memo:
                first.setdefault(k, i)
        missing = list(first.values())
        self.misses += len(missing)
        self.hits += len(reqs) - len(missing)
        if missing:
            got = compute([reqs[i] for i in missing])
            self._store([(keys[i], g.to_dict()) for i, g in zip(missing, got)])
        return [self._memo[k] for k in keys]

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], *, progress: bool = False) -> list[LoglikelihoodResult]:
        reqs = check_requests(requests, LoglikelihoodRequest)
        rows = self._cached("loglikelihood", reqs, lambda rs: self.inner.loglikelihood(rs, progress=progress))
        return [LoglikelihoodResult.from_dict(r) for r in rows]

    def generate(self, requests: Sequence[GenerationRequest], *, logits_processors: Sequence[LogitsProcessor] | None = None) -> list[GenerationResult]:
        reqs = check_requests(requests, GenerationRequest)
        if logits_processors:
            return self.inner.generate(reqs, logits_processors=logits_processors)
        rows = self._cached("generate", reqs, lambda rs: self.inner.generate(rs))
        return [GenerationResult(text=r["text"], token_ids=tuple(r["token_ids"]), finish_reason=r["finish_reason"]) for r in rows]
