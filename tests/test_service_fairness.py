"""Service: deadlines that cancel work, fair batches, token budgets, slow clients, offline docs, process metrics."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from veridic import ScorerConfig, build_scorer

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

from veridic.service import ServiceSettings, create_app  # noqa: E402
from veridic.service._batching import MicroBatcher  # noqa: E402


class PairScorer:
    """The library scorer over the fake NLI backend, ``delay`` seconds per pair, recording every claim it scores."""

    name = "e-c"

    def __init__(self, delay: float = 0.0):
        from tests.fakes import FakeNLIBackend

        self.inner = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend())
        self.delay = delay
        self.scored: list[str] = []
        self.lock = threading.Lock()

    def describe(self):
        return self.inner.describe()

    def score(self, *, sources, claims, contexts=None):
        for c in claims:
            time.sleep(self.delay)
            with self.lock:
                self.scored.append(c)
        return self.inner.score(sources=sources, claims=claims, contexts=contexts)


# --- defect 1: head-of-line blocking --------------------------------------------------------------
def test_a_small_request_is_not_stuck_behind_a_large_one():
    order: list[str] = []

    def slow(items):
        time.sleep(0.02 * len(items))
        order.extend(items)
        return items

    async def run():
        b = MicroBatcher(score_fn=slow, max_pairs=4, max_wait_ms=0)
        big = asyncio.ensure_future(b.submit([f"big{i}" for i in range(40)]))
        await asyncio.sleep(0.05)  # the big request is being scored
        t0 = time.perf_counter()
        small = await b.submit(["small"])
        waited = time.perf_counter() - t0
        await big
        await b.stop()
        return small, waited, big.result()

    small, waited, big = asyncio.run(run())
    assert small == ["small"] and big == [f"big{i}" for i in range(40)]  # a split request is reassembled in order
    # at most one batch of the big request (4 pairs) ran before the small one's turn, plus the small one's own batch
    assert order.index("small") <= 8, order[:12]
    assert waited < 0.02 * 40 / 2


def test_fair_share_alternates_between_large_requests():
    seen: list[str] = []

    def fn(items):
        seen.append(items)
        return items

    async def run():
        b = MicroBatcher(score_fn=fn, max_pairs=2, max_wait_ms=20)
        out = await asyncio.gather(b.submit([f"a{i}" for i in range(6)]), b.submit([f"b{i}" for i in range(6)]))
        await b.stop()
        return out

    a, bb = asyncio.run(run())
    assert a == [f"a{i}" for i in range(6)] and bb == [f"b{i}" for i in range(6)]
    assert all(sorted(x[0] for x in batch) == ["a", "b"] for batch in seen), seen


def test_batch_cost_cap_keeps_a_costly_pair_alone():
    seen: list[list[int]] = []

    def fn(items):
        seen.append(list(items))
        return items

    async def run():
        b = MicroBatcher(score_fn=fn, max_pairs=32, max_wait_ms=20, cost_fn=float, max_batch_cost=100)
        await asyncio.gather(b.submit([500]), b.submit([10, 20, 30]), b.submit([40]))
        await b.stop()

    asyncio.run(run())
    assert [500] in seen and all(sum(batch) <= 100 for batch in seen if batch != [500])


# --- server-side deadline and disconnects ------------------------------------------------------------
def test_deadline_drops_the_rest_of_a_request():
    calls: list[int] = []

    def slow(items):
        calls.append(len(items))
        time.sleep(0.05)
        return items

    async def run():
        b = MicroBatcher(score_fn=slow, max_pairs=2, max_wait_ms=0)
        with pytest.raises(TimeoutError):
            await b.submit(list(range(60)), timeout=0.2)
        await asyncio.sleep(0.3)
        await b.stop()
        return b

    b = asyncio.run(run())
    assert sum(calls) <= 14, calls  # ~0.2 s of 0.05 s batches, plus the one in flight; never all 60
    assert b.dropped_pairs >= 40 and b.queued_pairs == 0


def test_http_deadline_is_408_and_stops_scoring():
    scorer = PairScorer(delay=0.05)
    app = create_app(scorer=scorer, settings=ServiceSettings(timeout_s=0.3, max_pairs=64, batch_ms=0))
    with TestClient(app) as c:
        r = c.post("/v1/score", json={"pairs": [{"source": "A cat sat.", "claim": f"claim {i}."} for i in range(60)]})
        assert r.status_code == 408 and "deadline" in r.json()["error"]["message"]
        time.sleep(0.4)
        n = len(scorer.scored)
        time.sleep(0.3)
        assert len(scorer.scored) == n < 30  # nothing more is scored for the abandoned request
        assert 'veridic_abandoned_requests_total{reason="deadline"} 1.0' in c.get("/metrics").text


class _Uvicorn:
    """The app on a real socket (uvicorn in a thread, with the header-deadline protocol)."""

    def __init__(self, app, *, header_timeout_s: float = 10.0):
        import uvicorn

        from veridic.serving import guarded_h11

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    http=guarded_h11(header_timeout_s=header_timeout_s), timeout_keep_alive=5))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.time() + 20
        while not self.server.started:
            if time.time() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(20)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"


def test_client_disconnect_cancels_the_request():
    scorer = PairScorer(delay=0.05)
    app = create_app(scorer=scorer, settings=ServiceSettings(timeout_s=30, max_pairs=64, batch_ms=0))
    with _Uvicorn(app) as srv:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(srv.url + "/v1/score", json={"pairs": [{"source": "A cat sat.", "claim": f"claim {i}."} for i in range(60)]}, timeout=0.4)
        time.sleep(1.0)  # the disconnect poll (0.25 s) notices and drops the queued pairs
        n = len(scorer.scored)
        time.sleep(0.5)
        assert len(scorer.scored) == n < 40, n
        m = httpx.get(srv.url + "/metrics").text
        assert 'veridic_abandoned_requests_total{reason="client_disconnected"} 1.0' in m


# --- compute budget in tokens ------------------------------------------------------------------------
def test_token_budget_refuses_costly_requests_within_the_character_limit():
    app = create_app(scorer=PairScorer(), settings=ServiceSettings(max_text_chars=5_000, max_request_tokens=20_000))
    with TestClient(app) as c:
        cjk = "猫が座った。" * 800  # 4,800 characters, ~4,800 estimated tokens
        pairs = [{"source": cjk, "claim": "cat\ndog\nsat\nran\nred"}]  # five lines: five claim sentences, each checked against the whole source
        r = c.post("/v1/score", json={"pairs": pairs})
        assert r.status_code == 413, r.text
        assert "model tokens" in r.json()["error"]["message"] and "--max-request-tokens" in r.json()["error"]["message"]
        assert c.post("/v1/score", json={"pairs": [{"source": cjk, "claim": "A cat sat."}]}).status_code == 200


# --- slow clients ----------------------------------------------------------------------------------------
def test_slow_header_sockets_are_closed():
    app = create_app(scorer=PairScorer(), settings=ServiceSettings())
    with _Uvicorn(app, header_timeout_s=0.5) as srv:
        socks = []
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: x\r\n")  # headers never finish
            socks.append(s)
        time.sleep(1.5)
        closed = 0
        for s in socks:
            try:
                closed += s.recv(1) == b""
            except (ConnectionResetError, TimeoutError):
                closed += 1
            s.close()
        assert closed == 100
        assert httpx.get(srv.url + "/v1/health").status_code == 200  # the service still answers


def test_slow_body_gets_408():
    app = create_app(scorer=PairScorer(), settings=ServiceSettings(body_timeout_s=0.5))
    with _Uvicorn(app) as srv:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"pairs\":")
        t0 = time.time()
        data = s.recv(4096)
        s.close()
        assert data.startswith(b"HTTP/1.1 408") and time.time() - t0 < 3


# --- docs and metrics --------------------------------------------------------------------------------------
def test_docs_are_served_from_the_package():
    pytest.importorskip("fastapi_offline")
    with TestClient(create_app(scorer=PairScorer())) as c:
        for page, asset in (("/docs", "/docs-assets/swagger-ui-bundle.js"), ("/redoc", "/docs-assets/redoc.standalone.js")):
            html = c.get(page).text
            assert asset in html and "cdn." not in html and "fonts.googleapis" not in html
            r = c.get(asset)
            assert r.status_code == 200 and len(r.content) > 100_000
        assert c.get("/docs-assets/swagger-ui.css").status_code == 200
    with TestClient(create_app(scorer=PairScorer(), settings=ServiceSettings(docs=False))) as c:
        assert c.get("/docs").status_code == 404 and c.get("/openapi.json").status_code == 200


def test_metrics_show_process_memory_cpu_and_open_requests():
    with TestClient(create_app(scorer=PairScorer())) as c:
        text = c.get("/metrics").text
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds", "veridic_open_requests"):
        assert name in text, name
    assert "veridic_open_requests 1.0" in text  # the /metrics request itself


# --- /v1/detect through the same scheduler -------------------------------------------------------------
class SlowDetector:
    """A detector that takes ``delay`` seconds, records each passage it judges and the thread that ran it."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.seen: list[tuple[str, str]] = []

    def describe(self):
        return {"detector": "slow"}

    def detect(self, *, passage, evidence):
        from veridic.detect._result import DetectionResult

        time.sleep(self.delay)
        self.seen.append((passage, threading.current_thread().name))
        return DetectionResult(passage=passage, spans=(), edited=passage, tagged=passage, sentences=(), evidence=evidence)


def test_detect_is_scheduled_with_score_requests_in_the_model_thread():
    scorer, det = PairScorer(delay=0.1), SlowDetector()
    app = create_app(scorer=scorer, detector=det, settings=ServiceSettings(timeout_s=30, max_pairs=64, batch_ms=0))
    with TestClient(app) as c:
        big = threading.Thread(target=c.post, args=("/v1/score",), kwargs={"json": {"pairs": [{"source": "A cat sat.", "claim": f"claim {i}."} for i in range(40)]}})
        big.start()
        time.sleep(0.3)
        t0 = time.perf_counter()
        r = c.post("/v1/detect", json={"passage": "A dog sat.", "evidence": "A cat sat."})
        waited = time.perf_counter() - t0
        big_still_running = big.is_alive()
        big.join()
    assert r.status_code == 200 and r.json()["passage"] == "A dog sat."
    assert big_still_running and len(scorer.scored) == 40
    assert waited < 2.0  # fair share: the next turn, not after the big request's remaining ~3.7 s
    assert det.seen[0][1].startswith("veridic-model")  # model work stays serialised in the one model thread


def test_detect_over_the_token_budget_is_413_before_any_work():
    det = SlowDetector()
    app = create_app(scorer=PairScorer(), detector=det, settings=ServiceSettings(max_text_chars=5_000, max_request_tokens=20_000))
    with TestClient(app) as c:
        cjk = "猫が座った。" * 800
        r = c.post("/v1/detect", json={"passage": "cat\ndog\nsat\nran\nred", "evidence": cjk})
        assert r.status_code == 413 and "--max-request-tokens" in r.json()["error"]["message"], r.text
        assert det.seen == []
        assert c.post("/v1/detect", json={"passage": "A cat sat.", "evidence": cjk}).status_code == 200


def test_detect_deadline_is_408_and_the_queued_detection_never_runs():
    scorer, det = PairScorer(delay=1.0), SlowDetector()
    app = create_app(scorer=scorer, detector=det, settings=ServiceSettings(timeout_s=0.3, batch_ms=0))
    with TestClient(app) as c:
        busy = threading.Thread(target=c.post, args=("/v1/score",), kwargs={"json": {"pairs": [{"source": "A cat sat.", "claim": "A cat sat."}]}})
        busy.start()
        time.sleep(0.1)  # the one-second pair holds the model
        r = c.post("/v1/detect", json={"passage": "A dog sat.", "evidence": "A cat sat."})
        busy.join()
        time.sleep(0.2)
        assert r.status_code == 408 and "Detection" in r.json()["error"]["message"], r.text
        assert det.seen == []
        m = c.get("/metrics").text
        assert 'veridic_abandoned_requests_total{reason="deadline"}' in m and "veridic_dropped_pairs_total 1.0" in m


def test_detect_client_disconnect_drops_the_detection():
    scorer, det = PairScorer(delay=1.5), SlowDetector()
    app = create_app(scorer=scorer, detector=det, settings=ServiceSettings(timeout_s=30, batch_ms=0))
    with _Uvicorn(app) as srv:
        busy = threading.Thread(target=httpx.post, args=(srv.url + "/v1/score",), kwargs={"json": {"pairs": [{"source": "A cat sat.", "claim": "A cat sat."}]}, "timeout": 10})
        busy.start()
        time.sleep(0.2)
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(srv.url + "/v1/detect", json={"passage": "A dog sat.", "evidence": "A cat sat."}, timeout=0.4)
        busy.join()
        time.sleep(0.5)  # the model is free again: a detection still queued would run now
        assert det.seen == []
        assert 'veridic_abandoned_requests_total{reason="client_disconnected"} 1.0' in httpx.get(srv.url + "/metrics").text


def test_detect_counts_against_the_queue_limit():
    scorer, det = PairScorer(delay=1.0), SlowDetector()
    app = create_app(scorer=scorer, detector=det, settings=ServiceSettings(timeout_s=30, batch_ms=0, max_queue_pairs=2))
    with TestClient(app) as c:
        busy = threading.Thread(target=c.post, args=("/v1/score",), kwargs={"json": {"pairs": [{"source": "A cat sat.", "claim": "A cat sat."}]}})
        busy.start()
        time.sleep(0.1)
        codes: list[int] = []
        ts = [threading.Thread(target=lambda i=i: codes.append(c.post("/v1/detect", json={"passage": f"Dog {i} sat.", "evidence": "A cat sat."}).status_code))
              for i in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        busy.join()
    assert sorted(codes) == [200, 200, 503, 503], codes  # two wait their turn, the rest are told to retry


def test_invisible_text_is_refused_before_the_model():
    scorer, det = PairScorer(), SlowDetector()
    with TestClient(create_app(scorer=scorer, detector=det)) as c:
        r = c.post("/v1/score", json={"pairs": [{"source": "A cat sat.", "claim": "\u200b\u200d\ufeff"}]})
        assert r.status_code == 422 and "pairs[0].claim is empty" in r.json()["error"]["message"], r.text
        r = c.post("/v1/detect", json={"passage": "\u200b\u200b", "evidence": "A cat sat."})
        assert r.status_code == 422 and "passage is empty" in r.json()["error"]["message"], r.text
    assert scorer.scored == [] and det.seen == []  # never reached the model (nor shared a batch with others)


# --- express lane: a second model copy for cheap pairs while the main one is busy ---------------------
def test_express_lane_answers_cheap_pairs_while_the_main_lane_is_busy():
    def main(items):
        time.sleep(0.05 * sum(items))  # the cost is the item
        return [("main", x) for x in items]

    def express(items):
        return [("express", x) for x in items]

    async def run():
        b = MicroBatcher(score_fn=main, max_pairs=8, max_wait_ms=0, cost_fn=float, max_batch_cost=100, express_fn=express, express_max_cost=5,
                         express_ok=lambda x: x != 3)
        big = asyncio.ensure_future(b.submit([20, 20]))  # two 1-second pairs, one per main batch
        await asyncio.sleep(0.1)
        t0 = time.perf_counter()
        cheap = await b.submit([1, 2])
        waited = time.perf_counter() - t0
        costly = asyncio.ensure_future(b.submit([9]))  # over express_max_cost: only the main lane takes it
        refused = asyncio.ensure_future(b.submit([3]))  # express_ok says no
        out = await asyncio.gather(big, costly, refused)
        await b.stop()
        return cheap, waited, out, b.express_batches

    cheap, waited, (big, costly, refused), n_express = asyncio.run(run())
    assert cheap == [("express", 1), ("express", 2)] and waited < 0.5  # not behind the 1-second pair in flight
    assert big == [("main", 20), ("main", 20)] and costly == [("main", 9)] and refused == [("main", 3)]
    assert n_express == 1


def test_express_lane_lets_a_large_request_keep_the_main_lane_while_small_ones_keep_coming():
    # Fair share alone gives the next main batch to a fresh one-pair request (it has been served less), so with
    # clients that never pause the large request starved (3 of 64 pairs in 30 s in the benchmark).
    main_items: list[int] = []

    def main(items):
        time.sleep(0.02 * sum(items))
        main_items.extend(items)
        return [("main", x) for x in items]

    def express(items):
        time.sleep(0.02 * sum(items))
        return [("express", x) for x in items]

    async def run():
        b = MicroBatcher(score_fn=main, max_pairs=8, max_wait_ms=0, cost_fn=float, max_batch_cost=10, express_fn=express, express_max_cost=1)
        big = asyncio.ensure_future(b.submit([10] * 4))  # four 0.2-second pairs, one per main batch; one small pair per express batch

        async def client():  # a one-pair client that never pauses (for at most 3 s)
            out = []
            stop = time.monotonic() + 3.0
            while not big.done() and time.monotonic() < stop:
                out += await b.submit([1])
            return out

        smalls = await asyncio.gather(client(), client())
        done = big.done()  # before this fix the large request never got the main lane back: still waiting here
        res = await big
        await b.stop()
        return done, res, smalls

    done, res, smalls = asyncio.run(run())
    assert done and res == [("main", 10)] * 4
    last_big = len(main_items) - 1 - main_items[::-1].index(10)
    assert main_items[: last_big + 1] == [10] * 4  # the main lane took no small pair while the large request waited
    assert sum(s == ("express", 1) for c in smalls for s in c) >= 8  # and the small ones kept being answered beside it


def test_cheap_main_only_work_does_not_starve_one_pair_requests():
    # Cheap pairs the express lane may not take (per-request options, detections) keep their fair share: were
    # they put first like large pairs, a stream of them would starve plain one-pair requests (the express lane
    # stays idle beside cheap batches).
    def main(items):
        time.sleep(0.01)
        return [("main", x) for x in items]

    async def run():
        b = MicroBatcher(score_fn=main, max_pairs=1, max_wait_ms=0, cost_fn=float, express_fn=lambda items: [("express", x) for x in items],
                         express_max_cost=5, express_ok=lambda x: x != 3)
        stop = time.monotonic() + 0.5

        async def client(item):
            n = 0
            while time.monotonic() < stop:
                await b.submit([item])
                n += 1
            return n

        counts = await asyncio.gather(client(3), client(3), client(1))
        await b.stop()
        return counts

    options_a, options_b, plain = asyncio.run(run())
    assert plain >= 5 and plain >= min(options_a, options_b) // 2, (options_a, options_b, plain)


def test_express_lane_in_the_service_gives_the_same_verdicts():
    main, express = PairScorer(delay=1.0), PairScorer()
    app = create_app(scorer=main, express_scorer=express, settings=ServiceSettings(batch_ms=0, express_tokens=64))
    small = {"source": "A cat sat on the mat.", "claim": "A cat sat."}
    with TestClient(app) as c:
        busy = threading.Thread(target=c.post, args=("/v1/score",), kwargs={"json": {"pairs": [{"source": "A cat sat. " * 30, "claim": "A dog sat."}]}})
        busy.start()
        time.sleep(0.2)
        t0 = time.perf_counter()
        r = c.post("/v1/score", json={"pairs": [small]})
        waited = time.perf_counter() - t0
        busy.join()
        alone = c.post("/v1/score", json={"pairs": [small]})
        metrics = c.get("/metrics").text
    assert r.status_code == 200 and waited < 0.8, (r.text, waited)
    assert "veridic_express_batches 1.0" in metrics  # an operator can see the lane at work
    assert express.scored == ["A cat sat."] and main.scored.count("A cat sat.") == 1
    assert r.json()["verdicts"] == alone.json()["verdicts"]  # the express copy gives the main copy's verdict


def test_express_lane_stays_idle_beside_cheap_batches():
    def main(items):
        time.sleep(0.2)
        return [("main", x) for x in items]

    async def run():
        b = MicroBatcher(score_fn=main, max_pairs=8, max_wait_ms=0, cost_fn=float, express_fn=lambda items: [("express", x) for x in items],
                         express_max_cost=5)
        first = asyncio.ensure_future(b.submit([4]))  # cheap: the main lane is busy, but not with a large pair
        await asyncio.sleep(0.05)
        second = await b.submit([1])
        await first
        await b.stop()
        return second, b.express_batches

    assert asyncio.run(run()) == ([("main", 1)], 0)
