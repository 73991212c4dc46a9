"""The language-model backend protocol used by veridic's LM probes.

Modelled on lm-evaluation-harness (``lm_eval/api/model.py``): probes build
*requests* (plain dataclasses), hand a list of them to a backend, and read
typed *results* back. Probes receive a backend; they never construct one.

A backend implements :class:`LanguageModel`:

``loglikelihood(requests)``
    log P(continuation | context) summed over continuation tokens, with the
    per-token log-probabilities and whether greedy decoding would have
    produced the continuation.
``next_token_logprobs(requests)``
    the full log-softmax over the vocabulary at every continuation position
    (what PMI scoring needs to renormalise a modified distribution).
``generate(requests, logits_processors=...)``
    greedy or seeded sampling, with callables that rewrite the next-token
    scores (HF ``LogitsProcessor`` interface).
``stream(context)``
    an incremental scorer: push tokens, read the next-token log-probs
    (KV-cached in the HF backend). PMI decoding runs the ungrounded model
    through one of these next to ``generate``.

Tokenisation rule shared by every backend: context and continuation are
encoded *separately* and concatenated, so a continuation has the same tokens
whatever context precedes it; comparing log P(y | g) with log P(y | g') is
then a comparison over identical token sequences.

>>> req = LoglikelihoodRequest(context="The cat", continuation=" sat.")
>>> req.continuation
' sat.'
>>> LoglikelihoodRequest(context="x", continuation="")
Traceback (most recent call last):
...
veridic.errors.InputError: LoglikelihoodRequest.continuation must be non-empty text; got ''.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from veridic.errors import InputError

__all__ = [
    "FinishReason",
    "GenerationRequest",
    "GenerationResult",
    "LanguageModel",
    "LogitsProcessor",
    "LoglikelihoodRequest",
    "LoglikelihoodResult",
    "TokenStream",
]

FinishReason = Literal["stop", "eos", "length"]

#: ``(input_ids [batch, seq] LongTensor, scores [batch, vocab] FloatTensor) -> scores``,
#: the transformers ``LogitsProcessor`` call signature.
LogitsProcessor = Callable[[Any, Any], Any]


def _check_text(owner: str, name: str, value: Any, *, allow_empty: bool) -> None:
    if not isinstance(value, str):
        raise InputError(f"{owner}.{name} must be a str; got {type(value).__name__} ({value!r:.60}).")
    if not allow_empty and not value:
        raise InputError(f"{owner}.{name} must be non-empty text; got {value!r}.")


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score ``continuation`` after ``context``. An empty context is allowed
    (the backend then conditions on its beginning-of-text token)."""

    context: str
    continuation: str

    def __post_init__(self) -> None:
        _check_text("LoglikelihoodRequest", "context", self.context, allow_empty=True)
        _check_text("LoglikelihoodRequest", "continuation", self.continuation, allow_empty=False)


@dataclass(frozen=True)
class LoglikelihoodResult:
    """log P(continuation | context) in nats (natural log); higher = more likely.

    ``token_logprobs[i]`` is the log-probability of ``token_ids[i]``;
    ``logprob == sum(token_logprobs)``. ``context_tokens_dropped`` counts
    context tokens cut from the left to fit the model window (0 = nothing cut).
    """

    logprob: float
    is_greedy: bool
    token_logprobs: tuple[float, ...]
    token_ids: tuple[int, ...]
    n_context_tokens: int
    context_tokens_dropped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "logprob": self.logprob,
            "is_greedy": self.is_greedy,
            "token_logprobs": list(self.token_logprobs),
            "token_ids": list(self.token_ids),
            "n_context_tokens": self.n_context_tokens,
            "context_tokens_dropped": self.context_tokens_dropped,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoglikelihoodResult:
        return cls(
            logprob=float(d["logprob"]),
            is_greedy=bool(d["is_greedy"]),
            token_logprobs=tuple(float(x) for x in d["token_logprobs"]),
            token_ids=tuple(int(x) for x in d["token_ids"]),
            n_context_tokens=int(d["n_context_tokens"]),
            context_tokens_dropped=int(d.get("context_tokens_dropped", 0)),
        )


@dataclass(frozen=True)
class GenerationRequest:
    """Continue ``context`` for at most ``max_new_tokens`` tokens.

    ``do_sample=False`` is greedy decoding; with sampling, ``seed`` makes the
    draw reproducible (same request, same backend → same text). Generation
    stops at the first of ``stop`` strings (which is cut from the text).
    """

    context: str
    max_new_tokens: int = 32
    stop: tuple[str, ...] = ()
    do_sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        _check_text("GenerationRequest", "context", self.context, allow_empty=True)
        if not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise InputError(f"GenerationRequest.max_new_tokens must be an int >= 1; got {self.max_new_tokens!r}.")
        if isinstance(self.stop, str):
            raise InputError("GenerationRequest.stop must be a tuple of strings, not one string; write stop=('\\n',).")
        if self.temperature <= 0:
            raise InputError(f"GenerationRequest.temperature must be > 0; got {self.temperature}. Use do_sample=False for greedy decoding.")
        if not 0 < self.top_p <= 1:
            raise InputError(f"GenerationRequest.top_p must be in (0, 1]; got {self.top_p}.")


@dataclass(frozen=True)
class GenerationResult:
    """The generated text (stop string excluded) and why generation ended."""

    text: str
    token_ids: tuple[int, ...]
    finish_reason: FinishReason

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "token_ids": list(self.token_ids), "finish_reason": self.finish_reason}


@runtime_checkable
class TokenStream(Protocol):
    """Incremental next-token scorer over one growing sequence.

    ``logprobs()`` is the log-softmax over the vocabulary for the next token
    (a 1-D float tensor or array of length ``vocab_size``); ``push(ids)``
    appends tokens. The HF backend keeps the KV cache, so each push costs a
    forward pass over the new tokens only.
    """

    def push(self, token_ids: Sequence[int]) -> None: ...

    def logprobs(self) -> Any: ...


@runtime_checkable
class LanguageModel(Protocol):
    """What an LM probe needs from a causal language model."""

    model_id: str
    revision: str | None
    max_length: int
    vocab_size: int

    def tok_encode(self, text: str) -> list[int]: ...

    def tok_decode(self, token_ids: Sequence[int]) -> str: ...

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest], *, progress: bool = False) -> list[LoglikelihoodResult]: ...

    def next_token_logprobs(self, requests: Sequence[LoglikelihoodRequest]) -> list[np.ndarray]: ...

    def generate(
        self,
        requests: Sequence[GenerationRequest],
        *,
        logits_processors: Sequence[LogitsProcessor] | None = None,
    ) -> list[GenerationResult]: ...

    def stream(self, context: str) -> TokenStream: ...

    def describe(self) -> dict[str, Any]: ...


def check_requests(requests: Any, kind: type) -> list:
    """Validate a request list early, naming the first bad item."""
    if isinstance(requests, (str, bytes)) or not isinstance(requests, Sequence):
        raise InputError(f"Expected a list of {kind.__name__}; got {type(requests).__name__}.")
    out = list(requests)
    for i, r in enumerate(out):
        if not isinstance(r, kind):
            raise InputError(f"Request {i} must be a {kind.__name__}; got {type(r).__name__}.")
    return out


def stop_at(text: str, stop: Sequence[str]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string; return (text, stopped).

    >>> stop_at("It was held in July.\\nNext", ["\\n"])
    ('It was held in July.', True)
    """
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
    return text[:cut], cut < len(text)
