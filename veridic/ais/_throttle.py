"""Login throttling, decided before the password hash and atomically, in bounded memory.

Three counters see each login attempt: the account (``user:``), the client
address (``addr:``) and the pair of both (``pair:``). After ``free``
failures (``free_per_address`` for an address), each further failure
locks that counter for ``base_s * 2**(failures - free - 1)`` seconds,
capped at ``max_s``; the account counter alone is capped at the much
shorter ``account_max_s``, so a stranger who types a user's name can delay
that user's logins, never lock them out for long. An address from which
the account logged in before is *known*: its attempts skip the account and
address counters (a flood from elsewhere, or a neighbour behind the same
NAT, does not lock them out) and meet only their own pair counter. A
successful login clears the account and pair counts.

:meth:`LoginThrottle.begin` reserves a check under one lock: it counts the
checks already in flight as possible failures, so 40 concurrent wrong
passwords for one account get 6 checks (as 40 sequential ones would), not
40. Attempts past that wait for the checks in flight (up to ``wait_s``)
and then meet the lock those checks set. Keys live in LRU tables of at most
``max_keys`` entries, so a flood of invented names cannot grow memory
without bound (the oldest keys are forgotten first).

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

__all__ = ["LoginThrottle", "Ticket"]


@dataclass
class _Entry:
    failures: int = 0
    locked_until: float = 0.0
    pending: int = 0


@dataclass(frozen=True)
class Ticket:
    """A reserved password check (:meth:`LoginThrottle.begin`); hand it back to :meth:`LoginThrottle.end`."""

    name: str
    address: str | None
    keys: tuple[str, ...]


class LoginThrottle:
    """Backoff bookkeeping for :func:`veridic.ais._web.create_app`'s ``POST /login``."""

    def __init__(self, *, free: int = 5, free_per_address: int = 20, base_s: float = 1.0, max_s: float = 900.0, account_max_s: float = 60.0,
                 max_keys: int = 10_000, wait_s: float = 30.0, clock: Callable[[], float] = time.monotonic):
        self.free, self.free_per_address = free, free_per_address
        self.base_s, self.max_s, self.account_max_s, self.max_keys = base_s, max_s, account_max_s, max_keys
        self.wait_s = wait_s
        self.clock = clock
        self._table: OrderedDict[str, _Entry] = OrderedDict()
        self._known: OrderedDict[str, None] = OrderedDict()
        self._cond = threading.Condition()

    def __len__(self) -> int:
        return len(self._table)

    # ------------------------------------------------------------------ the login route's protocol
    def begin(self, name: str, address: str | None) -> Ticket | float:
        """Reserve a password check for ``name`` from ``address``: a :class:`Ticket`, or the seconds to wait (429).

        Returns a negative number when the checks in flight did not finish within ``wait_s`` (the server is busy).
        """
        deadline = self.clock() + self.wait_s
        with self._cond:
            while True:
                keys = self._keys(name, address)
                now = self.clock()
                wait, crowded = self._decide(keys, now)
                if wait > 0:
                    return wait
                if not crowded:
                    for k in keys:
                        self._entry(k).pending += 1
                    return Ticket(name=name, address=address, keys=keys)
                left = deadline - now
                if left <= 0:
                    return -1.0
                self._cond.wait(timeout=min(left, 1.0))

    def end(self, ticket: Ticket, *, ok: bool | None) -> None:
        """Hand a reservation back: ``ok`` True (right password), False (wrong), None (never checked)."""
        with self._cond:
            for k in ticket.keys:
                e = self._table.get(k)
                if e is not None and e.pending > 0:
                    e.pending -= 1
            if ok is True:
                self._succeeded(ticket.name, ticket.address)
            elif ok is False:
                self._failed(ticket.keys)
            self._cond.notify_all()

    # ------------------------------------------------------------------ direct bookkeeping (also for tests)
    def retry_after(self, name: str, address: str | None) -> float:
        """Seconds until a login for ``name`` from ``address`` may be tried (0: now)."""
        with self._cond:
            return self._decide(self._keys(name, address), self.clock())[0]

    def failed(self, name: str, address: str | None) -> None:
        with self._cond:
            self._failed(self._keys(name, address))

    def succeeded(self, name: str, address: str | None) -> None:
        with self._cond:
            self._succeeded(name, address)

    # ------------------------------------------------------------------ internals (self._cond held)
    def _decide(self, keys: tuple[str, ...], now: float) -> tuple[float, bool]:
        """(seconds locked, whether the checks in flight already use up what the counts allow)."""
        wait, crowded = 0.0, False
        for k in keys:
            e = self._table.get(k)
            if e is None:
                continue
            wait = max(wait, e.locked_until - now)
            # a check in flight may fail: admit only while every check in flight failing would stay within the free ones
            if e.pending and e.failures + e.pending > self._free(k):
                crowded = True
        return max(0.0, wait), crowded

    def _failed(self, keys: tuple[str, ...]) -> None:
        now = self.clock()
        for k in keys:
            e = self._entry(k)
            e.failures += 1
            free = self._free(k)
            if e.failures > free:
                cap = self.account_max_s if k.startswith("user:") else self.max_s
                e.locked_until = now + min(cap, self.base_s * 2 ** min(e.failures - free - 1, 60))

    def _succeeded(self, name: str, address: str | None) -> None:
        user, pair = self._user(name), self._pair(name, address)
        for k in (user, pair):
            e = self._table.get(k)
            if e is not None:
                e.failures, e.locked_until = 0, 0.0
                if not e.pending:
                    del self._table[k]
        self._known.pop(pair, None)
        self._known[pair] = None
        while len(self._known) > self.max_keys:
            self._known.popitem(last=False)

    def _entry(self, key: str) -> _Entry:
        e = self._table.pop(key, None) or _Entry()
        self._table[key] = e  # most recent last
        while len(self._table) > self.max_keys:
            old_key, old = next(iter(self._table.items()))
            if old.pending:  # an entry with a check in flight is live; move it up rather than forget its reservation
                self._table.move_to_end(old_key)
                if all(x.pending for x in self._table.values()):
                    break
                continue
            self._table.popitem(last=False)
        return e

    def _free(self, key: str) -> int:
        return self.free_per_address if key.startswith("addr:") else self.free

    @staticmethod
    def _user(name: str) -> str:
        return "user:" + name.strip().lower()[:100]

    @staticmethod
    def _pair(name: str, address: str | None) -> str:
        return "pair:" + name.strip().lower()[:100] + "|" + (address or "?")

    def _keys(self, name: str, address: str | None) -> tuple[str, ...]:
        pair = self._pair(name, address)
        if pair in self._known:
            return (pair,)
        return (self._user(name), "addr:" + (address or "?"), pair)
