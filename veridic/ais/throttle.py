"""Login throttling: exponential backoff per account and per client address, in bounded memory.

After ``free`` failed logins for a key (an account name or an address),
each further failure locks that key for ``base_s * 2**(failures - free)``
seconds, capped at ``max_s``; a successful login clears the account's
count. Keys live in an LRU table of at most ``max_keys`` entries, so a
flood of invented names cannot grow memory without bound (the oldest keys
are forgotten first).

>>> t = LoginThrottle(free=2, base_s=1.0, clock=lambda: 0.0)
>>> t.retry_after("alice", "10.0.0.1")
0.0
>>> for _ in range(4): t.failed("alice", "10.0.0.1")
>>> t.retry_after("alice", "10.0.0.9")
2.0
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LoginThrottle"]


@dataclass
class _Entry:
    failures: int = 0
    locked_until: float = 0.0


class LoginThrottle:
    """Backoff bookkeeping for :func:`veridic.ais.web.create_app`'s ``POST /login``."""

    def __init__(self, *, free: int = 5, free_per_address: int = 20, base_s: float = 1.0, max_s: float = 900.0, max_keys: int = 10_000,
                 clock: Callable[[], float] = time.monotonic):
        self.free, self.free_per_address = free, free_per_address
        self.base_s, self.max_s, self.max_keys = base_s, max_s, max_keys
        self.clock = clock
        self._table: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._table)

    def retry_after(self, name: str, address: str | None) -> float:
        """Seconds until a login for ``name`` from ``address`` may be tried (0: now)."""
        now = self.clock()
        with self._lock:
            waits = [e.locked_until - now for e in (self._table.get(k) for k in self._keys(name, address)) if e is not None]
        return max([0.0, *waits])

    def failed(self, name: str, address: str | None) -> None:
        now = self.clock()
        with self._lock:
            for key, free in zip(self._keys(name, address), (self.free, self.free_per_address)):
                e = self._table.pop(key, None) or _Entry()
                e.failures += 1
                if e.failures > free:
                    e.locked_until = now + min(self.max_s, self.base_s * 2 ** (e.failures - free - 1))
                self._table[key] = e  # most recent last
                while len(self._table) > self.max_keys:
                    self._table.popitem(last=False)

    def succeeded(self, name: str, address: str | None) -> None:
        with self._lock:
            self._table.pop(self._keys(name, address)[0], None)

    @staticmethod
    def _keys(name: str, address: str | None) -> tuple[str, str]:
        return ("user:" + name.strip().lower()[:100], "addr:" + (address or "?"))
