"""Limits and switches of the HTTP service, in one frozen object.

>>> s = ServiceSettings(batch_ms=0)
>>> s.batching
False
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from veridic.errors import ConfigError

__all__ = ["ServiceSettings"]


@dataclass(frozen=True)
class ServiceSettings:
    """How the service batches, what it accepts and who may call it.

    ``batch_ms`` / ``max_batch``: concurrent score requests are collected for
    up to ``batch_ms`` milliseconds or until they hold ``max_batch`` pairs,
    then scored by one model call (``batch_ms=0`` scores each request alone).
    A request is never split across model calls. ``max_queue_pairs`` bounds
    the pairs waiting for the model; past it requests get 503 at once rather
    than piling up. ``max_body_bytes``, ``max_pairs`` and ``max_text_chars``
    bound one request (413 past them); ``timeout_s`` bounds how long one
    request may wait for its result (408 past it). ``api_key``: when set,
    every ``/v1/*`` route but ``/v1/health`` needs it in ``X-API-Key`` or
    ``Authorization: Bearer``. ``max_mc_samples``: the most Monte-Carlo
    dropout samples a request's ``options`` may ask for (0: none).
    """

    batch_ms: float = 5.0
    max_batch: int = 32
    max_queue_pairs: int = 2048
    max_body_bytes: int = 1 << 20
    max_pairs: int = 64
    max_text_chars: int = 20_000
    timeout_s: float = 30.0
    api_key: str | None = None
    max_mc_samples: int = 0

    def __post_init__(self) -> None:
        checks = {
            "batch_ms": self.batch_ms >= 0,
            "max_batch": self.max_batch >= 1,
            "max_queue_pairs": self.max_queue_pairs >= 1,
            "max_body_bytes": self.max_body_bytes >= 64,
            "max_pairs": self.max_pairs >= 1,
            "max_text_chars": self.max_text_chars >= 1,
            "timeout_s": self.timeout_s > 0,
            "max_mc_samples": self.max_mc_samples >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ConfigError(f"Service settings out of range: {', '.join(f'{k}={getattr(self, k)!r}' for k in bad)} "
                              "(batch_ms >= 0, max_batch/max_pairs/max_text_chars/max_queue_pairs >= 1, max_body_bytes >= 64, timeout_s > 0).")
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
