"""Fair micro-batching: concurrent requests share model calls, and no request can monopolise the model.

Each submitted request is a list of pairs. The worker forms one batch at a
time by *fair share*: it repeatedly takes the next pair of the request that
has received the least model work so far (estimated cost, e.g. tokens), so
a one-pair request that arrives while a 64-pair request is being scored
goes into the very next batch. A batch stops at ``max_pairs`` pairs or at
``max_batch_cost`` (the first pair is always taken), which bounds how long
one model call — and so the wait of a newly arrived request — can take.
Before forming a batch the worker waits up to ``max_wait_ms`` for more
requests when the queue holds fewer than ``max_pairs`` pairs.

A request is split across batches when it is larger than one batch; its
results are reassembled in order. A request whose caller stops waiting
(deadline passed, client gone: the awaiting task is cancelled) is dropped
at once: its queued pairs never reach the model, and at most the one batch
already running finishes without anyone reading it. If a shared call fails,
each request in that batch is re-run alone so the error reaches only the
request that caused it.

Verdicts are per pair, so a batched verdict equals the one the same pair
gets alone — up to float32 summation order in the model (padding width and
batch shape change the kernels' accumulation order): identical on the int8
ONNX default, up to ~7e-7 on the hybrid score with torch, asserted
``<= 1e-6`` in the tests (docs/service_and_ray.md, "Audit").

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
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MicroBatcher", "Overloaded"]


class Overloaded(Exception):
    """The queue holds more pairs than allowed; the caller should retry later (HTTP 503)."""


_SEQ = itertools.count()


@dataclass(eq=False)
class _Request:
    pairs: list[Any]
    costs: list[float]
    future: asyncio.Future = field(repr=False)
    results: list[Any] = field(default_factory=list, repr=False)
    scheduled: int = 0  # pairs handed to the model so far (in order)
    answered: int = 0
    served_cost: float = 0.0
    seq: int = field(default_factory=lambda: next(_SEQ))  # arrival order breaks ties

    def __post_init__(self) -> None:
        self.results = [None] * len(self.pairs)

    @property
    def unscheduled(self) -> int:
        return len(self.pairs) - self.scheduled


class MicroBatcher:
    """Collect submitted pair lists into shared, fairly composed ``score_fn`` calls.

    ``score_fn(pairs) -> results`` (same length, same order) runs in
    ``executor`` (default: one dedicated thread, which also serialises model
    calls). ``cost_fn(pair) -> float`` estimates a pair's model work (default
    1 per pair); ``max_batch_cost`` caps one call's total. ``on_batch(n_requests,
    n_pairs, seconds)`` observes each call; ``on_drop(n_pairs)`` counts queued
    pairs dropped because their request was cancelled.

    ``express_fn``: a second scorer (its own model copy, its own thread) that
    runs *while the main lane is busy with a costly pair* (one over
    ``express_max_cost``), taking only cheap pairs — each at most
    ``express_max_cost`` and together at most that — for which
    ``express_ok(pair)`` holds. A one-pair request then waits neither for the
    large pair in flight nor for the one after it; without ``express_fn`` it
    waits for at most the one batch in flight. With an express lane, the main
    lane takes pairs over ``express_max_cost`` first, so a large request keeps
    the main lane while one-pair requests keep arriving.
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
        cost_fn: Callable[[Any], float] | None = None,
        max_batch_cost: float | None = None,
        on_drop: Callable[[int], None] | None = None,
        express_fn: Callable[[list[Any]], Sequence[Any]] | None = None,
        express_max_cost: float = 512.0,
        express_ok: Callable[[Any], bool] | None = None,
    ):
        self.score_fn = score_fn
        self.max_pairs = max(1, int(max_pairs))
        self.max_wait = max(0.0, float(max_wait_ms)) / 1000.0
        self.max_queue_pairs = max_queue_pairs
        self._own_executor = executor is None
        self.executor = executor or concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-model")
        self.on_batch = on_batch
        self.on_drop = on_drop
        self.cost_fn = cost_fn or (lambda pair: 1.0)
        self.max_batch_cost = max_batch_cost
        self.express_fn = express_fn
        self.express_max_cost = float(express_max_cost)
        self.express_ok = express_ok or (lambda pair: True)
        self._express_executor = (concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-express")
                                  if express_fn is not None else None)
        self._lanes: dict[str, asyncio.Task | None] = {"main": None, "express": None}
        self._main_is_costly = False
        self.express_batches = 0
        self.queued_pairs = 0
        self.batches = 0
        self.dropped_pairs = 0
        self._active: list[_Request] = []
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None

    # ------------------------------------------------------------------ lifecycle
    def _ensure_started(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._wake = asyncio.Event()
            self._active = []
            self._lanes = {"main": None, "express": None}
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
        for name, lane in self._lanes.items():
            if lane is not None and not lane.done():
                lane.cancel()
            self._lanes[name] = None
        for req in self._active:
            req.future.cancel()
        self._active = []
        if self._own_executor:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-model")
        if self._express_executor is not None:
            self._express_executor.shutdown(wait=False, cancel_futures=True)
            self._express_executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="veridic-express")

    # ------------------------------------------------------------------ submitting
    async def submit(self, pairs: Sequence[Any], *, timeout: float | None = None, costs: Sequence[float] | None = None) -> list[Any]:
        """Queue ``pairs`` and wait for their results (``TimeoutError`` past ``timeout`` seconds).

        When the wait ends early — timeout, or the awaiting task is cancelled
        (the client went away) — the request's unscheduled pairs are dropped.
        """
        self._ensure_started()
        pairs = list(pairs)
        if not pairs:
            return []
        if self.queued_pairs + len(pairs) > self.max_queue_pairs:
            raise Overloaded(f"{self.queued_pairs} pairs are already waiting for the model (limit {self.max_queue_pairs}); retry shortly.")
        costs = [float(c) for c in costs] if costs is not None else [float(self.cost_fn(p)) for p in pairs]
        req = _Request(pairs=pairs, costs=costs, future=asyncio.get_running_loop().create_future())
        self._active.append(req)
        self.queued_pairs += len(pairs)
        assert self._wake is not None
        self._wake.set()
        try:
            return await asyncio.wait_for(asyncio.shield(req.future), timeout)
        except (TimeoutError, asyncio.CancelledError):
            self._drop(req)
            raise

    def _drop(self, req: _Request) -> None:
        # nobody waits for this request any more: free its place and keep its pairs from the model
        req.future.cancel()
        if req in self._active:
            self._active.remove(req)
        n = req.unscheduled
        if n:
            self.queued_pairs -= n
            self.dropped_pairs += n
            req.scheduled = len(req.pairs)
            if self.on_drop is not None:
                self.on_drop(n)

    # ------------------------------------------------------------------ the worker
    def _form_batch(self, *, express: bool = False) -> list[tuple[_Request, int]]:
        """Fair share: the next pair always comes from the live request served least so far.

        ``express``: only requests whose next pair is cheap (``express_max_cost``)
        and ``express_ok``, and at most ``express_max_cost`` in all.
        """
        batch: list[tuple[_Request, int]] = []
        cost = 0.0
        cap = self.express_max_cost if express else self.max_batch_cost
        # With an express lane, the main lane takes large pairs (over express_max_cost) before anything else; the
        # express lane scores cheap pairs beside them. Fair share alone would starve a large request: a fresh
        # one-pair request has always been served less, so with one-pair clients that never pause the main lane
        # kept taking their pairs and the large request got 3 of 64 pairs in 30 s. Cheap work only the main lane
        # may do (detections, per-request options) keeps its fair share: the express lane does not run beside
        # it, so putting it first could starve plain one-pair requests instead.
        main_only = (not express and self.express_fn is not None
                     and any(self._costly(r) for r in self._active if r.unscheduled and not r.future.done()))
        while len(batch) < self.max_pairs:
            live = [r for r in self._active if r.unscheduled and not r.future.done()]
            if express:
                live = [r for r in live if self._express_eligible(r)]
            elif main_only:
                live = [r for r in live if self._costly(r)]
            if not live:
                break
            req = min(live, key=lambda r: (r.served_cost, r.seq))
            c = req.costs[req.scheduled]
            if batch and cap is not None and cost + c > cap:
                break
            batch.append((req, req.scheduled))
            req.scheduled += 1
            req.served_cost += c
            cost += c
            self.queued_pairs -= 1
        return batch

    def _costly(self, r: _Request) -> bool:
        """Whether ``r``'s next pair is over what the express lane takes (so only the main lane can score it)."""
        return r.costs[r.scheduled] > self.express_max_cost

    def _express_eligible(self, r: _Request) -> bool:
        """Whether the express lane may score ``r``'s next pair: cheap enough, and ``express_ok``."""
        return r.costs[r.scheduled] <= self.express_max_cost and self.express_ok(r.pairs[r.scheduled])

    async def _gather_window(self) -> None:
        assert self._wake is not None
        while not any(r.unscheduled for r in self._active):
            self._wake.clear()
            await self._wake.wait()
        if self.max_wait <= 0:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_wait
        while self.queued_pairs < self.max_pairs:
            left = deadline - loop.time()
            if left <= 0:
                break
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), left)
            except TimeoutError:
                break

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._wake is not None
        while True:
            await self._gather_window()
            self._active = [r for r in self._active if not r.future.done()]
            lane = None
            batch: list[tuple[_Request, int]] = []
            if self._lanes["main"] is None:
                lane, batch = "main", self._form_batch()
            elif self._lanes["express"] is None and self.express_fn is not None and self._main_is_costly:
                # only beside a large pair: beside a batch of cheap ones, waiting for it is quicker than splitting the CPU
                lane, batch = "express", self._form_batch(express=True)
            if batch:
                assert lane is not None
                if lane == "main":
                    self._main_is_costly = any(req.costs[i] > self.express_max_cost for req, i in batch)
                self._lanes[lane] = loop.create_task(self._execute(lane, batch), name=f"veridic-{lane}-batch")
                continue
            # nothing can start now (both lanes busy, or only pairs the express lane may not take): wait for a lane or an arrival
            self._wake.clear()
            await self._wake.wait()

    async def _execute(self, lane: str, batch: list[tuple[_Request, int]]) -> None:
        loop = asyncio.get_running_loop()
        fn = self.score_fn if lane == "main" else self.express_fn
        executor = self.executor if lane == "main" else self._express_executor
        flat = [req.pairs[i] for req, i in batch]
        reqs = list(dict.fromkeys(req for req, _ in batch))
        t0 = loop.time()
        try:
            try:
                results = await loop.run_in_executor(executor, fn, flat)
            except Exception as exc:  # noqa: BLE001 - delivered to the requests, never lost
                if len(reqs) == 1:
                    self._fail(reqs[0], exc)
                else:
                    await self._one_by_one(batch, fn, executor)
                return
            finally:
                self.batches += 1
                self.express_batches += lane == "express"
                if self.on_batch is not None:
                    self.on_batch(len(reqs), len(flat), loop.time() - t0)
            for (req, i), res in zip(batch, results):
                self._answer(req, i, res)
        finally:
            self._lanes[lane] = None
            if self._wake is not None:
                self._wake.set()

    def _answer(self, req: _Request, i: int, result: Any) -> None:
        if req.future.done():
            return
        req.results[i] = result
        req.answered += 1
        if req.answered == len(req.pairs):
            req.future.set_result(req.results)
            if req in self._active:
                self._active.remove(req)

    def _fail(self, req: _Request, exc: BaseException) -> None:
        if not req.future.done():
            req.future.set_exception(exc)
        self._drop(req)

    async def _one_by_one(self, batch: list[tuple[_Request, int]], fn: Callable[[list[Any]], Sequence[Any]], executor: Any) -> None:
        loop = asyncio.get_running_loop()
        by_req: dict[_Request, list[int]] = {}
        for req, i in batch:
            by_req.setdefault(req, []).append(i)
        for req, idx in by_req.items():
            if req.future.done():
                continue
            try:
                res = await loop.run_in_executor(executor, fn, [req.pairs[i] for i in idx])
            except Exception as exc:  # noqa: BLE001
                self._fail(req, exc)
                continue
            for i, r in zip(idx, res):
                self._answer(req, i, r)
