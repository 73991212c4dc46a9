"""A deterministic fake causal LM for tests (lm-evaluation-harness's ``DummyLM``).

Bytes are tokens (vocabulary 256). The next-token logits are a fixed random
bigram table plus a *copy bonus* for every byte that occurs in the context,
so text that repeats its context (a target that copies its grounding) is
more likely: enough to exercise factual-ablation and PMI code paths without
a real model. Pure numpy; torch is imported only when logits processors are
passed to :meth:`DummyLM.generate`.

>>> from veridic.lm._api import LoglikelihoodRequest
>>> lm = DummyLM()
>>> with_g = lm.loglikelihood([LoglikelihoodRequest(context="g: 7 miners\\n", continuation="7")])[0].logprob
>>> without = lm.loglikelihood([LoglikelihoodRequest(context="g: 2 miners\\n", continuation="7")])[0].logprob
>>> with_g > without
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from veridic.errors import ConfigError, InputError
from veridic.lm._api import GenerationRequest, GenerationResult, LogitsProcessor, LoglikelihoodRequest, LoglikelihoodResult, check_requests, stop_at

__all__ = ["DummyLM"]

_BOS = 0  # byte 0 never occurs in text, so it serves as beginning-of-text


def _log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class DummyLM:
    """Byte-level bigram LM with a copy bonus; same input → same numbers."""

    vocab_size = 256

    def __init__(self, *, seed: int = 0, copy_bonus: float = 2.0, max_length: int = 512, model_id: str = "dummy"):
        if max_length < 2:
            raise ConfigError(f"max_length must be >= 2; got {max_length}.")
        rng = np.random.default_rng(seed)
        self._table = rng.normal(0.0, 1.0, size=(256, 256)).astype(np.float64)
        self.copy_bonus = float(copy_bonus)
        self.max_length = max_length
        self.model_id = model_id
        self.revision: str | None = f"seed={seed}"
        self.calls = 0  # forward "passes" (one per request), for cache tests

    def describe(self) -> dict[str, Any]:
        return {"backend": "dummy", "model": self.model_id, "revision": self.revision, "max_length": self.max_length, "copy_bonus": self.copy_bonus}

    def tok_encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def tok_decode(self, token_ids: Sequence[int]) -> str:
        return bytes(int(t) for t in token_ids).decode("utf-8", errors="replace")

    # ---------------------------------------------------------------- model
    def _next_logits(self, prefix: list[int], context_len: int) -> np.ndarray:
        logits = self._table[prefix[-1]].copy()
        seen = np.zeros(256, dtype=bool)
        seen[np.asarray(prefix[:context_len], dtype=np.int64)] = True
        seen[_BOS] = False
        logits[seen] += self.copy_bonus
        return logits

    def _rows(self, req: LoglikelihoodRequest) -> tuple[list[int], list[int], int, np.ndarray]:
        ctx = [_BOS] + self.tok_encode(req.context)
        cont = self.tok_encode(req.continuation)
        if len(cont) >= self.max_length:
            raise InputError(f"The continuation is {len(cont)} tokens; the model window is {self.max_length}.")
        dropped = max(0, len(ctx) + len(cont) - self.max_length)
        if dropped:
            ctx = ctx[:1] + ctx[1 + dropped :]
        seq = ctx + cont
        logits = np.stack([self._next_logits(seq[: len(ctx) + i], len(ctx)) for i in range(len(cont))])
        self.calls += 1
        return ctx, cont, dropped, _log_softmax(logits)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], *, progress: bool = False) -> list[LoglikelihoodResult]:
        out = []
        for req in check_requests(requests, LoglikelihoodRequest):
            ctx, cont, dropped, lp = self._rows(req)
            tok = lp[np.arange(len(cont)), cont]
            out.append(
                LoglikelihoodResult(
                    logprob=float(tok.sum()),
                    is_greedy=bool((lp.argmax(axis=1) == np.asarray(cont)).all()),
                    token_logprobs=tuple(float(x) for x in tok),
                    token_ids=tuple(cont),
                    n_context_tokens=len(ctx),
                    context_tokens_dropped=dropped,
                )
            )
        return out

    def next_token_logprobs(self, requests: Sequence[LoglikelihoodRequest]) -> list[np.ndarray]:
        return [self._rows(r)[3].astype(np.float32) for r in check_requests(requests, LoglikelihoodRequest)]

    def stream(self, context: str, *, reserve: int = 0) -> _DummyStream:
        return _DummyStream(self, [_BOS] + self.tok_encode(context))

    def generate(self, requests: Sequence[GenerationRequest], *, logits_processors: Sequence[LogitsProcessor] | None = None) -> list[GenerationResult]:
        out = []
        for req in check_requests(requests, GenerationRequest):
            ctx = [_BOS] + self.tok_encode(req.context)
            seq = list(ctx)
            rng = np.random.default_rng(req.seed)
            new: list[int] = []
            for _ in range(req.max_new_tokens):
                scores = self._next_logits(seq, len(ctx))
                if logits_processors:
                    import torch

                    t = torch.tensor(scores, dtype=torch.float32)[None, :]
                    ids = torch.tensor([seq], dtype=torch.long)
                    for proc in logits_processors:
                        t = proc(ids, t)
                    scores = t[0].double().numpy()
                scores[_BOS] = -np.inf  # never emit the start token
                if req.do_sample:
                    p = np.exp(_log_softmax(scores / req.temperature))
                    if req.top_p < 1.0:
                        order = np.argsort(-p, kind="stable")
                        keep = order[: int(np.searchsorted(np.cumsum(p[order]), req.top_p) + 1)]
                        mask = np.zeros_like(p)
                        mask[keep] = p[keep]
                        p = mask / mask.sum()
                    tok = int(rng.choice(256, p=p))
                else:
                    tok = int(np.argmax(scores))
                new.append(tok)
                seq.append(tok)
                text, stopped = stop_at(self.tok_decode(new), req.stop)
                if stopped:
                    out.append(GenerationResult(text=text, token_ids=tuple(new), finish_reason="stop"))
                    break
            else:
                out.append(GenerationResult(text=self.tok_decode(new), token_ids=tuple(new), finish_reason="length"))
        return out


class _DummyStream:
    def __init__(self, lm: DummyLM, ids: list[int]):
        self._lm = lm
        self._seq = list(ids)
        self._context_len = len(ids)

    def push(self, token_ids: Sequence[int]) -> None:
        self._seq.extend(int(t) for t in token_ids)

    def logprobs(self) -> np.ndarray:
        return _log_softmax(self._lm._next_logits(self._seq, self._context_len)).astype(np.float32)
