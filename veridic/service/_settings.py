"""Limits and switches of the HTTP service, in one frozen object.

>>> s = ServiceSettings(batch_ms=0)
>>> s.batching
False
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from veridic.errors import ConfigError

__all__ = ["ServiceSettings", "estimate_pair_cost", "estimate_tokens"]


@dataclass(frozen=True)
class ServiceSettings:
    """How the service batches, what it accepts and who may call it.

    ``batch_ms`` / ``max_batch``: concurrent score requests are collected for
    up to ``batch_ms`` milliseconds or until they hold ``max_batch`` pairs,
    then scored by one model call (``batch_ms=0`` scores each request alone).
    Batches are composed fairly (the request served least so far goes
    first) and capped at ``max_batch_tokens`` estimated tokens, so a large
    request is split across calls and cannot hold the model for longer than
    about one batch while small requests wait. ``max_queue_pairs`` bounds
    the pairs waiting for the model; past it requests get 503 at once rather
    than piling up. ``max_body_bytes``, ``max_pairs`` and ``max_text_chars``
    bound one request (413 past them), and so does ``max_request_tokens``,
    a compute budget in estimated tokens (:func:`estimate_pair_cost`: each
    claim sentence, as the scorer's own splitter counts them, is priced
    against the whole source, so the cost is source tokens × claim
    sentences + claim tokens). ``max_claim_sentences`` bounds the sentences
    of one claim (and of one /v1/detect passage), as
    ``$VERIDIC_MAX_CLAIM_SENTENCES`` does in the library and the CLI
    (413 past it). ``timeout_s`` is the
    server-side deadline of one request (408 past it): when it passes, or
    when the client disconnects, the request's queued pairs are dropped and
    only the batch already running finishes. ``header_timeout_s`` and
    ``body_timeout_s`` close connections that send their request line and
    headers, or their body, too slowly (slowloris); ``docs`` serves Swagger
    UI at /docs and ReDoc at /redoc from packaged assets (no CDN). ``api_key``: when set,
    every ``/v1/*`` route but ``/v1/health`` needs it in ``X-API-Key`` or
    ``Authorization: Bearer``. ``max_mc_samples``: the most Monte-Carlo
    dropout samples a request's ``options`` may ask for (0: none).
    ``express_tokens``: with an express lane (a second model copy), the most
    estimated tokens of one pair — and of one express batch — it takes while
    the main model thread is busy.
    """

    batch_ms: float = 5.0
    max_batch: int = 32
    max_queue_pairs: int = 2048
    max_body_bytes: int = 1 << 20
    max_pairs: int = 64
    max_text_chars: int = 20_000
    timeout_s: float = 30.0
    api_key: str | None = None
    max_request_tokens: int = 150_000
    max_batch_tokens: int = 2_048
    header_timeout_s: float = 10.0
    body_timeout_s: float = 20.0
    docs: bool = True
    max_mc_samples: int = 0
    express_tokens: int = 512
    max_claim_sentences: int = 128

    def __post_init__(self) -> None:
        checks = {
            "batch_ms": self.batch_ms >= 0,
            "max_batch": self.max_batch >= 1,
            "max_queue_pairs": self.max_queue_pairs >= 1,
            "max_body_bytes": self.max_body_bytes >= 64,
            "max_pairs": self.max_pairs >= 1,
            "max_text_chars": self.max_text_chars >= 1,
            "timeout_s": self.timeout_s > 0,
            "max_request_tokens": self.max_request_tokens >= 1,
            "max_batch_tokens": self.max_batch_tokens >= 1,
            "header_timeout_s": self.header_timeout_s > 0,
            "body_timeout_s": self.body_timeout_s > 0,
            "max_mc_samples": self.max_mc_samples >= 0,
            "express_tokens": self.express_tokens >= 1,
            "max_claim_sentences": self.max_claim_sentences >= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ConfigError(f"Service settings out of range: {', '.join(f'{k}={getattr(self, k)!r}' for k in bad)} "
                              "(batch_ms >= 0, max_batch/max_pairs/max_text_chars/max_queue_pairs/max_request_tokens/max_batch_tokens/max_claim_sentences >= 1, "
                              "max_body_bytes >= 64, "
                              "timeout_s/header_timeout_s/body_timeout_s > 0).")
        if self.api_key is not None and not self.api_key.strip():
            raise ConfigError("api_key is blank; pass a real key or leave it unset to disable authentication.")

    @property
    def batching(self) -> bool:
        return self.batch_ms > 0 and self.max_batch > 1

    def public(self) -> dict[str, Any]:
        """The settings without the secret, for /v1/health and the logs."""
        d = asdict(self)
        d["api_key"] = self.api_key is not None
        return d


_TOKEN = None


def estimate_tokens(text: str) -> int:
    """Estimated model tokens in ``text``: ASCII words and numbers count one each, every other non-space character one.

    Counting each non-ASCII character separately keeps the estimate from
    under-counting text a WordPiece tokenizer splits finely (CJK, emoji,
    accents), which is where a character limit alone lets a request through
    that costs many times its length.

    >>> estimate_tokens("The cat sat."), estimate_tokens("猫が座った")
    (4, 5)
    """
    global _TOKEN
    if _TOKEN is None:
        import re

        _TOKEN = re.compile(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]")
    return sum(1 for _ in _TOKEN.finditer(text))


def estimate_pair_cost(source: str, claim: str, context: str | None = None, *, splitter: str = "blingfire", granularity: str = "sentence") -> int:
    """Estimated tokens the scorer feeds the model for one pair: (source + context) × claim sentences + claim.

    Claim sentences are those the scorer judges, counted by its own splitter
    (:func:`veridic.limits.claim_sentences`: every line break counts too);
    ``granularity="document"`` judges the claim as one piece. Each sentence
    is priced against the whole source, an upper bound of the windows it is
    checked against.

    >>> estimate_pair_cost("A cat sat on the mat.", "A cat sat. It was red.")  # 7 source tokens x 2 sentences + 8
    22
    >>> estimate_pair_cost("A cat sat on the mat.", "cat\\nsat\\nred")  # three lines are three sentences
    24
    """
    from veridic.limits import claim_sentences

    sentences = 1 if granularity == "document" else claim_sentences(claim, splitter=splitter)
    return (estimate_tokens(source) + (estimate_tokens(context) if context else 0)) * sentences + estimate_tokens(claim)
