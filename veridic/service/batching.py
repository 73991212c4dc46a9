"""Micro-batching: concurrent requests share one model call.

Requests wait in an asyncio queue; a worker takes the first, keeps
collecting for up to ``max_wait_ms`` or until ``max_pairs`` pairs, and runs
*one* ``score_fn`` call for all of them in a worker thread (the event loop
keeps accepting requests meanwhile). A request is never split. If the
shared call fails on one request's input, each request of that batch is
re-run alone so the error reaches only the request that caused it.

Verdicts are per pair, so a batched verdict equals the one the same pair
gets alone — up to float32 summation order in the model (padding width and
batch shape change the kernels' accumulation order): measured at most
~1e-7 on the hybrid score, asserted ``<= 1e-6`` in the tests
(docs/benchmarks.md, issue 8).

>>> import asyncio
>>> def double(items): return [2 * x for x in items]
>>> async def demo():
...     b = MicroBatcher(score_fn=double, max_pairs=8, max_wait_ms=5)
...     out = await asyncio.gather(b.submit([1, 2]), b.submit([3]))
...     await b.stop()
...     return out, b.batches
>>> asyncio.run(demo())
([[2, 4], [6]], 1)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MicroBatcher", "Overloaded"]


class Overloaded(Exception):
    """The queue holds more pairs than allowed; the caller should retry later (HTTP 503)."""


@dataclass(eq=False)
class _Item:
    pairs: list[Any]
    future: asyncio.Future = field(repr=False)


class MicroBatcher:
    """Collect submitted pair lists into shared ``score_fn`` calls.

    ``score_fn(pairs) -> results`` (same length, same order) runs in
    ``executor`` (default: one dedicated thread, which also serialises model
    calls). ``on_batch(n_requests, n_pairs, seconds)`` observes each call.
    """

    def __init__(
        self,
        *,
        score_fn: Callable[[list[Any]], Sequence[Any]],
        max_pairs: int = 32,
        max_wait_ms: float = 5.0,
        max_queue_pairs: int = 2048,
        executor: concurrent.futures.Executor | None = None,
        on_batch: Callable[[int, int, float], None] | None = None,
    ):
        self.score_fn = score_fn
        self.max_pairs = max(1, int(max_pairs))
        self.max_wait = max(0.0, float(max_wait_ms)) / 1000.0
        self.max_queue_pairs = max_queue_pairs
        self._own_executor = executor is None
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-model")
        self.on_batch = on_batch
        self.queued_pairs = 0
        self.batches = 0
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task | None = None
        self._carry: _Item | None = None

    # ------------------------------------------------------------------ lifecycle
    def _ensure_started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._queue = asyncio.Queue()
            self._carry = None
            self.queued_pairs = 0
            self._task = loop.create_task(self._run(), name="veridic-microbatcher")

    async def start(self) -> None:
        self._ensure_started()

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._task = None
        if self._own_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-model")

    # ------------------------------------------------------------------ submitting
    async def submit(self, pairs: Sequence[Any], *, timeout: float | None = None) -> list[Any]:
        """Queue ``pairs`` and wait for their results (``asyncio.TimeoutError`` past ``timeout`` seconds)."""
        self._ensure_started()
        pairs = list(pairs)
        if not pairs:
            return []
        if self.queued_pairs + len(pairs) > self.max_queue_pairs:
            raise Overloaded(f"{self.queued_pairs} pairs are already waiting for the model (limit {self.max_queue_pairs}); retry shortly.")
        fut = asyncio.get_running_loop().create_future()
        item = _Item(pairs=pairs, future=fut)
        self.queued_pairs += len(pairs)
        assert self._queue is not None
        self._queue.put_nowait(item)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except TimeoutError:
            # A request nobody waits for any more is dropped before it reaches the model.
            fut.cancel()
            raise

    # ------------------------------------------------------------------ the worker
    async def _next(self, timeout: float | None) -> _Item | None:
        if self._carry is not None:
            item, self._carry = self._carry, None
            return item
        assert self._queue is not None
        if timeout is None:
            return await self._queue.get()
        if timeout <= 0:
            try:
                return self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return None
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None

    async def _collect(self) -> list[_Item]:
        loop = asyncio.get_running_loop()
        first = await self._next(None)
        items = [first]
        n = len(first.pairs)
        deadline = loop.time() + self.max_wait
        while n < self.max_pairs:
            item = await self._next(deadline - loop.time())
            if item is None:
                break
            if n + len(item.pairs) > self.max_pairs:
                self._carry = item  # starts the next batch: a request is never split
                break
            items.append(item)
            n += len(item.pairs)
        return items

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            items = await self._collect()
            for it in items:
                self.queued_pairs -= len(it.pairs)
            live = [it for it in items if not it.future.done()]
            if not live:
                continue
            flat = [p for it in live for p in it.pairs]
            t0 = loop.time()
            try:
                results = await loop.run_in_executor(self.executor, self.score_fn, flat)
            except Exception as exc:  # noqa: BLE001 - delivered to the requests, never lost
                if len(live) == 1:
                    _deliver(live[0].future, exc=exc)
                else:
                    await self._one_by_one(live)
                continue
            finally:
                self.batches += 1
                if self.on_batch is not None:
                    self.on_batch(len(live), len(flat), loop.time() - t0)
            start = 0
            for it in live:
                _deliver(it.future, result=list(results[start : start + len(it.pairs)]))
                start += len(it.pairs)

    async def _one_by_one(self, items: list[_Item]) -> None:
        loop = asyncio.get_running_loop()
        for it in items:
            if it.future.done():
                continue
            try:
                _deliver(it.future, result=list(await loop.run_in_executor(self.executor, self.score_fn, it.pairs)))
            except Exception as exc:  # noqa: BLE001
                _deliver(it.future, exc=exc)


def _deliver(fut: asyncio.Future, *, result: Any = None, exc: BaseException | None = None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)
