"""The FastAPI app: versioned routes over a scorer (and detector) loaded once, before the app starts.

``create_app`` receives built objects and never loads a model, so tests pass
a tiny model and ``veridic serve`` passes the real one (habit 3 and 15 of
docs' STYLE: the service is a thin shell over the library).

Routes: ``POST /v1/score``, ``POST /v1/detect``, ``GET /v1/health``,
``GET /v1/models``, ``GET /metrics`` (Prometheus, with process memory, CPU
and open requests), ``GET /openapi.json``, and ``GET /docs`` / ``GET /redoc``
from packaged assets (the ``fastapi-offline`` wheel ships Swagger UI and
ReDoc; without it the two pages are off and /openapi.json still works).

Score and detect requests go through one fair scheduler
(:mod:`veridic.service._batching`): a detection is one unit of work beside
the pairs, run in the same model thread, with the same token budget (413),
queue limit (503) and server-side deadline (``timeout_s``). When the
deadline passes, or the client disconnects, the request's queued work is
dropped, so an abandoned request stops costing model time within one batch.
Errors are JSON ``{"error": {"type", "message", "details"}}``: 401 (API
key), 408 (timeout), 413 (body, pair count, text length, claim sentences or
estimated tokens over the limit), 422 (well-formed JSON with unusable values,
and every :class:`~veridic.errors.InputError`), 400 (a body that is not JSON,
and other :class:`~veridic.errors.VeridicError`), 503 (queue full, or no
detector loaded), 500 (a failure of the service, answered by the outermost
layer with ``x-request-id``).

>>> from fastapi.testclient import TestClient
>>> class Echo:
...     name = "echo"
...     def describe(self): return {"model": "echo", "name": "echo"}
>>> with TestClient(create_app(scorer=Echo())) as client:
...     client.get("/v1/health").json()["status"]
'ok'
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
import uuid
from collections.abc import Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from veridic.errors import InputError, MissingDependencyError, VeridicError
from veridic.service._batching import MicroBatcher, Overloaded
from veridic.service._schemas import (
    DetectionResultModel,
    DetectRequest,
    ErrorResponse,
    HealthResponse,
    ModelsResponse,
    ScoreRequest,
    ScoreResponse,
    VerdictModel,
)
from veridic.service._settings import ServiceSettings, estimate_pair_cost
from veridic.types import is_blank, normalise_context

try:
    import prometheus_client as prom
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
    from starlette.exceptions import HTTPException as StarletteHTTPException
except ImportError as _exc:  # pragma: no cover - exercised only without the extra
    _MISSING: ImportError | None = _exc
else:
    _MISSING = None

__all__ = ["ServiceError", "create_app"]

log = logging.getLogger("veridic.service")

_ERRORS = {code: {"model": ErrorResponse} for code in (400, 401, 408, 413, 422, 503)}
_DISCONNECT_POLL_S = 0.25
_STATUS_TYPE = {400: "bad_request", 401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 408: "timeout",
                413: "too_large", 415: "unsupported_media_type", 422: "validation_error", 503: "unavailable"}


class ServiceError(Exception):
    """An error with its HTTP status and a message for the caller."""

    def __init__(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.kind, self.message, self.headers = status, kind, message, headers


def _error(status: int, kind: str, message: str, details: list[dict[str, Any]] | None = None, headers: dict[str, str] | None = None):
    body: dict[str, Any] = {"type": kind, "message": message}
    if details is not None:
        body["details"] = details
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _version() -> str:
    from veridic.version import __version__

    return __version__


class _Metrics:
    """Prometheus metrics in a registry of the app's own (two apps in one process do not collide)."""

    def __init__(self) -> None:
        self.registry = prom.CollectorRegistry()
        self.requests = prom.Counter("veridic_requests", "HTTP requests served.", ["route", "status"], registry=self.registry)
        self.latency = prom.Histogram("veridic_request_latency_seconds", "Request latency, receipt to response.", ["route"], registry=self.registry,
                                      buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.batch_pairs = prom.Histogram("veridic_batch_pairs", "Pairs per model call (micro-batch size).", registry=self.registry,
                                          buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256))
        self.batch_requests = prom.Histogram("veridic_batch_requests", "Requests served by one model call.", registry=self.registry,
                                             buckets=(1, 2, 4, 8, 16, 32, 64))
        self.batch_seconds = prom.Histogram("veridic_batch_seconds", "Duration of one model call.", registry=self.registry,
                                            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
        self.queued = prom.Gauge("veridic_queued_pairs", "Pairs waiting for the model.", registry=self.registry)
        self.open_requests = prom.Gauge("veridic_open_requests", "HTTP requests received and not yet answered.", registry=self.registry)
        self.dropped = prom.Counter("veridic_dropped_pairs", "Queued pairs never scored because their request passed its deadline or its client left.",
                                    registry=self.registry)
        self.abandoned = prom.Counter("veridic_abandoned_requests", "Score requests ended early.", ["reason"], registry=self.registry)
        self.slow_clients = prom.Counter("veridic_slow_client_timeouts", "Requests whose body arrived too slowly (408).", registry=self.registry)
        self.express_batches = prom.Gauge("veridic_express_batches", "Model calls made by the express lane since start (0 without one).",
                                          registry=self.registry)
        # process_resident_memory_bytes, process_cpu_seconds_total, process_open_fds, ... (Linux /proc)
        prom.ProcessCollector(registry=self.registry)

    def observe_batch(self, n_requests: int, n_pairs: int, seconds: float) -> None:
        self.batch_requests.observe(n_requests)
        self.batch_pairs.observe(n_pairs)
        self.batch_seconds.observe(seconds)


class _Guard:
    """Pure-ASGI outer layer: request id, API key, body-size limit, metrics and the JSON request log.

    The body is read here (up to the limit) and replayed to the app, so an
    oversized body is refused with 413 before any JSON parsing.
    """

    OPEN = ("/v1/health", "/metrics", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/docs-assets")

    def __init__(self, app, *, settings: ServiceSettings, metrics: _Metrics):
        self.app = app
        self.settings = settings
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()
        rid = uuid.uuid4().hex[:16]
        path = scope.get("path", "")
        route = path if path in ("/v1/score", "/v1/detect", "/v1/health", "/v1/models", "/metrics", "/openapi.json") else "other"
        status = {"code": 500}
        state = scope.setdefault("state", {})
        state["request_id"] = rid

        started = {"yes": False}

        async def send_wrapped(message):
            if message["type"] == "http.response.start":
                started["yes"] = True
                status["code"] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + [(b"x-request-id", rid.encode())]
            await send(message)

        self.metrics.open_requests.inc()
        try:
            refusal = self._authorise(scope, path)
            if refusal is None:
                body, refusal = await self._read_body(scope, receive)
            if refusal is not None:
                await refusal(scope, receive, send_wrapped)
                return

            sent = {"done": False}

            async def replay():
                if not sent["done"]:
                    sent["done"] = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            try:
                await self.app(scope, replay, send_wrapped)
            except Exception as exc:
                # Answered here, inside the guard, so a failure still carries x-request-id, is counted, and does not make
                # uvicorn reset a kept-alive connection (Starlette's outermost handler re-raises after answering).
                log.error("unhandled error", exc_info=exc, extra={"fields": {"request_id": rid}})
                if started["yes"]:
                    raise
                await _error(500, "internal_error", "The service failed on this request; the log has the details (look up the x-request-id header).")(
                    scope, receive, send_wrapped)
        finally:
            self.metrics.open_requests.dec()
            dt = time.perf_counter() - t0
            self.metrics.requests.labels(route=route, status=str(status["code"])).inc()
            self.metrics.latency.labels(route=route).observe(dt)
            if route != "metrics":
                log.info("request", extra={"fields": {"request_id": rid, "method": scope.get("method"), "path": path, "status": status["code"],
                                                      "latency_ms": round(dt * 1000, 2), **state.get("log_fields", {})}})

    def _authorise(self, scope, path: str):
        key = self.settings.api_key
        if key is None or path in self.OPEN or not path.startswith("/v1/"):
            return None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        given = headers.get("x-api-key")
        auth = headers.get("authorization", "")
        if given is None and auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if given is not None and hmac.compare_digest(given.encode("utf-8", "surrogateescape"), key.encode("utf-8")):
            return None
        msg = "A valid API key is required: send it in the X-API-Key header (or Authorization: Bearer KEY)." if given is None else "The API key is not valid."
        return _error(401, "unauthorized", msg, headers={"www-authenticate": "Bearer"})

    async def _read_body(self, scope, receive):
        limit = self.settings.max_body_bytes
        for k, v in scope.get("headers", []):
            if k.lower() == b"content-length":
                try:
                    declared = int(v)
                except ValueError:
                    return b"", _error(400, "bad_request", "The Content-Length header is not a number.")
                if declared > limit:
                    return b"", _error(413, "too_large", f"The request body is {declared} bytes; the limit is {limit} bytes (--max-body-bytes). Send fewer or shorter pairs per request.")
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.body_timeout_s
        while True:
            try:
                # a whole-body deadline, not per chunk: one byte every few seconds must not hold a connection for minutes
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                self.metrics.slow_clients.inc()
                return b"", _error(408, "timeout", f"The request body did not arrive within {self.settings.body_timeout_s:g} s (--body-timeout); send it at once.",
                                   headers={"connection": "close"})
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return b"", _error(413, "too_large", f"The request body exceeds the limit of {limit} bytes (--max-body-bytes). Send fewer or shorter pairs per request.")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks), None


def _validation_details(errors: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    # The offending input is left out: it can be huge, bytes or NaN, none of which belongs in (or survives) a JSON reply.
    return [{"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": str(e.get("type", ""))} for e in errors[:20]]


def _check_unicode(value: str, *, what: str) -> None:
    # JSON may carry an unpaired surrogate (\\ud800) that no UTF-8 response can echo: refuse it up front.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ServiceError(422, "input_error", f"{what} holds an unpaired surrogate (\\u{ord(value[exc.start]):04x} at character {exc.start}); send valid Unicode text.") from None


def _splitting(scorer: Any) -> tuple[str, str]:
    """The sentence splitter and granularity ``scorer`` judges claims with (a hybrid scorer's are its NLI scorer's)."""
    inner = getattr(scorer, "nli", scorer)
    return str(getattr(inner, "splitter", "blingfire")), str(getattr(inner, "granularity", "sentence"))


def _check_sentences(value: str, *, what: str, limit: int, splitter: str) -> None:
    from veridic.limits import check_claim

    try:
        check_claim(value, what=what, max_chars=0, max_sentences=limit, sentences_setting="--max-claim-sentences", splitter=splitter)
    except InputError as exc:
        raise ServiceError(413, "too_large", str(exc)) from None


def _check_text(value: str, *, what: str, limit: int) -> None:
    if len(value) > limit:
        raise ServiceError(413, "too_large", f"{what} is {len(value)} characters; the limit is {limit} (--max-text-chars). Split it or raise the limit.")
    _check_unicode(value, what=what)
    if is_blank(value):  # zero-width and other invisible format characters count as empty, as in the library
        raise ServiceError(422, "input_error", f"{what} is empty (or only punctuation or invisible characters); veridic does not judge text with nothing to check. Remove the pair or fill it in.")


def create_app(*, scorer: Any, detector: Any | None = None, settings: ServiceSettings | None = None, title: str = "veridic",
               express_scorer: Any | None = None) -> FastAPI:
    """Build the service over an already-loaded ``scorer`` (and optional ``detector``).

    ``scorer`` has ``score(*, sources, claims, contexts)`` and ``describe()``
    (:class:`veridic.nli.NLIScorer`, :class:`veridic.nli._hybrid.HybridScorer`);
    ``detector`` is a :class:`veridic.detect.HallucinationDetector` or None
    (``/v1/detect`` then answers 503). ``express_scorer``: the same scorer
    over its *own* backend (a second model copy: two threads never share a
    tokenizer or model), which scores cheap pairs (at most
    ``settings.express_tokens``) of the server's configuration while the main
    model thread is busy with a large one (``veridic serve`` builds one unless ``--no-express-lane``).
    """
    if _MISSING is not None:
        raise MissingDependencyError(_MISSING.name or "fastapi", extra="service", purpose="The HTTP service")
    settings = settings or ServiceSettings()
    metrics = _Metrics()
    info = scorer.describe()
    model_name = str(info.get("model") or getattr(getattr(scorer, "backend", None), "model_id", "unknown"))
    method_name = str(getattr(scorer, "name", info.get("name", "unknown")))

    configured = _RequestScorers(scorer, max_mc_samples=settings.max_mc_samples)
    batcher = _make_batcher(configured=configured, detector=detector, express_scorer=express_scorer, settings=settings, metrics=metrics)

    @asynccontextmanager
    async def lifespan(app):
        await batcher.start()
        log.info("started", extra={"fields": {"model": model_name, "method": method_name, "detector": detector is not None, **settings.public()}})
        try:
            yield
        finally:
            await batcher.stop()

    assets = _docs_assets() if settings.docs else None
    app = FastAPI(
        title=title,
        version=_version(),
        description="Check generated text against its sources: NLI faithfulness verdicts with evidence offsets, and hallucination detection.",
        lifespan=lifespan,
        docs_url=None,  # the CDN-loading defaults: replaced below by pages over packaged assets
        redoc_url=None,
    )
    if assets is not None:
        _mount_docs(app, assets, title=title)
    app.state.batcher = batcher
    app.state.metrics = metrics
    app.state.settings = settings

    _add_error_handlers(app)
    _add_routes(app, _Service(settings=settings, metrics=metrics, batcher=batcher, configured=configured, detector=detector, info=info,
                              model_name=model_name, method_name=method_name))
    # Outermost user middleware, so it also sees requests FastAPI rejects (404, 405, 422).
    app.add_middleware(_Guard, settings=settings, metrics=metrics)
    return app


def _make_batcher(*, configured: _RequestScorers, detector: Any, express_scorer: Any, settings: ServiceSettings,
                  metrics: _Metrics) -> MicroBatcher:
    """The fair scheduler over the model thread: one scorer call per configuration in a micro-batch, detections
    run in the same thread, and the express lane for cheap pairs of the server's own configuration."""
    def score_pairs(items: list[Any]):
        # A micro-batch may mix requests with different scorer options (one scorer call per configuration)
        # and detections (each its own detector call, in this same model thread, so it is scheduled like a pair).
        out: list[Any] = [None] * len(items)
        groups: dict[Any, list[int]] = {}
        for i, p in enumerate(items):
            if isinstance(p, _Detection):
                out[i] = p.run(detector)
            else:
                groups.setdefault(p.config, []).append(i)
        for key, idx in groups.items():
            verdicts = configured.get(key).score(sources=[items[i].source for i in idx], claims=[items[i].claim for i in idx],
                                                 contexts=[items[i].context for i in idx])
            for i, v in zip(idx, verdicts):
                out[i] = v
        return out

    def express_pairs(items: list[Any]):
        return list(express_scorer.score(sources=[p.source for p in items], claims=[p.claim for p in items], contexts=[p.context for p in items]))

    return MicroBatcher(
        score_fn=score_pairs,
        max_pairs=settings.max_batch if settings.batching else 1,
        max_wait_ms=settings.batch_ms if settings.batching else 0,
        max_queue_pairs=settings.max_queue_pairs,
        on_batch=metrics.observe_batch,
        max_batch_cost=settings.max_batch_tokens,
        on_drop=metrics.dropped.inc,
        express_fn=None if express_scorer is None else express_pairs,
        express_max_cost=settings.express_tokens,
        # only the server's own configuration (the express copy has no per-request variants), never a detection
        express_ok=lambda item: isinstance(item, _Pair) and item.config is None,
    )


def _add_error_handlers(app: FastAPI) -> None:
    """Every error as the documented JSON body: service errors, validation (400 for a body that is not JSON, 422
    for bad values), library errors, HTTP errors and, logged, anything unexpected."""
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError):
        return _error(exc.status, exc.kind, exc.message, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        details = _validation_details(exc.errors())
        if any(d["type"] == "json_invalid" for d in details):
            # Not JSON at all is a malformed request (400), not a well-formed one with bad values (422).
            return _error(400, "bad_request", 'The body is not valid JSON; send a JSON object such as {"pairs": [{"source": "...", "claim": "..."}]}.',
                          details)
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(x for x in first["loc"] if x != "body") or "body"
        return _error(422, "validation_error", f"Invalid request at {where}: {first['msg']}. See /openapi.json for the schema.", details)

    @app.exception_handler(VeridicError)
    async def _veridic_error(request: Request, exc: VeridicError):
        status = 422 if isinstance(exc, InputError) else 400
        return _error(status, "input_error" if status == 422 else type(exc).__name__, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        msg = str(exc.detail)
        if exc.status_code == 400 and msg == "There was an error parsing the body":
            # FastAPI's words for a body json.loads gave up on (bad UTF-8, nesting past the recursion limit).
            msg = 'The body could not be parsed as JSON (not UTF-8, or nested too deeply); send a JSON object such as {"pairs": [{"source": "...", "claim": "..."}]}.'
        return _error(exc.status_code, _STATUS_TYPE.get(exc.status_code, "error"), msg, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.error("unhandled error", exc_info=exc, extra={"fields": {"request_id": request.scope.get("state", {}).get("request_id")}})
        return _error(500, "internal_error", "The service failed on this request; the log has the details (look up the x-request-id header).")


@dataclass
class _Service:
    """What the routes share: the settings, the metrics, the scheduler, the scorers and what was loaded."""

    settings: ServiceSettings
    metrics: _Metrics
    batcher: MicroBatcher
    configured: _RequestScorers
    detector: Any
    info: dict[str, Any]
    model_name: str
    method_name: str

    async def scheduled(self, request: Request, items: list[Any], costs: list[int], *, what: str) -> list[Any]:
        """Run ``items`` through the fair scheduler under the request's deadline; drop them when the client leaves."""
        if sum(costs) > self.settings.max_request_tokens:
            raise ServiceError(413, "too_large", f"The request would cost about {sum(costs):,} model tokens (source tokens x claim sentences + claim tokens, summed over pairs); "
                                                 f"the budget is {self.settings.max_request_tokens:,} (--max-request-tokens). Send fewer or shorter pairs per request.")
        fields = request.scope["state"].setdefault("log_fields", {})
        fields["pairs"] = len(items)
        fields["tokens"] = sum(costs)
        work = asyncio.ensure_future(self.batcher.submit(items, timeout=self.settings.timeout_s, costs=costs))
        try:
            # poll for a vanished client while waiting: uvicorn does not cancel a handler whose client left
            while not work.done():
                await asyncio.wait({work}, timeout=_DISCONNECT_POLL_S)
                if not work.done() and await request.is_disconnected():
                    work.cancel()
                    self.metrics.abandoned.labels(reason="client_disconnected").inc()
                    raise ServiceError(499, "client_closed_request", "The client closed the connection; the request's queued work was dropped.")
            return work.result()
        except Overloaded as exc:
            raise ServiceError(503, "overloaded", str(exc), headers={"retry-after": "1"}) from None
        except TimeoutError:
            self.metrics.abandoned.labels(reason="deadline").inc()
            raise ServiceError(408, "timeout", f"{what} did not finish within {self.settings.timeout_s:g} s (--timeout, the server-side deadline); its unscored work was dropped. "
                                               "The service is busy or the texts are long: retry, or send fewer/shorter texts.") from None
        finally:
            if not work.done():
                work.cancel()
            self.metrics.queued.set(self.batcher.queued_pairs)
        self.metrics.express_batches.set(self.batcher.express_batches)


def _add_routes(app: FastAPI, svc: _Service) -> None:
    """/v1/score, /v1/detect, /v1/health, /v1/models and /metrics over the shared service state."""
    settings, metrics, batcher, configured, detector = svc.settings, svc.metrics, svc.batcher, svc.configured, svc.detector
    info, model_name, method_name, scheduled = svc.info, svc.model_name, svc.method_name, svc.scheduled

    @app.post("/v1/score", response_model=ScoreResponse, responses=_ERRORS, summary="Score claims against their sources")
    async def score(req: ScoreRequest, request: Request) -> ScoreResponse:
        """One verdict per pair, in order. Concurrent requests are micro-batched into shared model calls."""
        if len(req.pairs) > settings.max_pairs:
            raise ServiceError(413, "too_large", f"The request holds {len(req.pairs)} pairs; the limit is {settings.max_pairs} (--max-pairs). Split it into several requests.")
        key = configured.key(req.options)
        pairs = []
        costs = []
        for i, p in enumerate(req.pairs):
            _check_text(p.source, what=f"pairs[{i}].source", limit=settings.max_text_chars)
            _check_text(p.claim, what=f"pairs[{i}].claim", limit=settings.max_text_chars)
            turns = [p.context] if isinstance(p.context, str) else (p.context or [])
            for t in turns:
                if len(t) > settings.max_text_chars:
                    raise ServiceError(413, "too_large", f"pairs[{i}].context is {len(t)} characters; the limit is {settings.max_text_chars} (--max-text-chars).")
                try:
                    t.encode("utf-8")
                except UnicodeEncodeError:
                    raise ServiceError(422, "input_error", f"pairs[{i}].context holds an unpaired surrogate; send valid Unicode text.") from None
            if p.id is not None:
                _check_unicode(p.id, what=f"pairs[{i}].id")
            splitter, granularity = _splitting(configured.get(key))
            _check_sentences(p.claim, what=f"pairs[{i}].claim", limit=settings.max_claim_sentences, splitter=splitter)
            pairs.append(_Pair(source=p.source, claim=p.claim, context=normalise_context(p.context), config=key))
            costs.append(estimate_pair_cost(p.source, p.claim, pairs[-1].context, splitter=splitter, granularity=granularity))
        verdicts = await scheduled(request, pairs, costs, what="Scoring")
        return ScoreResponse(verdicts=[VerdictModel.model_validate(v.to_dict()) for v in verdicts], ids=[p.id for p in req.pairs],
                             model=model_name, method=configured.get(key).name if key is not None else method_name, version=_version())

    @app.post("/v1/detect", response_model=DetectionResultModel, responses=_ERRORS, summary="Find, type and fix hallucinated spans")
    async def detect(req: DetectRequest, request: Request) -> DetectionResultModel:
        """FAVA-typed hallucination spans of ``passage`` against ``evidence``, with edits and the tagged passage."""
        if detector is None:
            raise ServiceError(503, "unavailable", "No detector is loaded in this service; start it with `veridic serve --detect` (needs the 'detect' extra).")
        _check_text(req.passage, what="passage", limit=settings.max_text_chars)
        _check_text(req.evidence, what="evidence", limit=settings.max_text_chars)
        # the detector scores the passage as a claim against the evidence, with its scorer's splitter
        splitter, _ = _splitting(getattr(detector, "scorer", None))
        _check_sentences(req.passage, what="passage", limit=settings.max_claim_sentences, splitter=splitter)
        job = _Detection(passage=req.passage, evidence=req.evidence)
        (res,) = await scheduled(request, [job], [estimate_pair_cost(req.evidence, req.passage, splitter=splitter)], what="Detection")
        return DetectionResultModel.model_validate(res.to_dict())

    @app.get("/v1/health", response_model=HealthResponse, summary="Liveness and the loaded model")
    async def health() -> HealthResponse:
        return HealthResponse(status="ok", version=_version(), model=model_name, method=method_name, detector=detector is not None,
                              queued_pairs=batcher.queued_pairs, settings=settings.public())

    @app.get("/v1/models", response_model=ModelsResponse, responses=_ERRORS, summary="What produced the verdicts: model, revision, scorer settings")
    async def models() -> ModelsResponse:
        return ModelsResponse(version=_version(), scorer=_jsonable(info), detector=_jsonable(detector.describe()) if detector is not None and hasattr(detector, "describe") else None)

    @app.get("/metrics", include_in_schema=False)
    async def metrics_route() -> Response:
        metrics.queued.set(batcher.queued_pairs)
        metrics.express_batches.set(batcher.express_batches)
        return Response(prom.generate_latest(metrics.registry), media_type=prom.CONTENT_TYPE_LATEST)


def _docs_assets():
    """The folder of Swagger UI / ReDoc files shipped by the ``fastapi-offline`` wheel, or None."""
    try:
        import fastapi_offline
    except ImportError:
        log.info("docs off", extra={"fields": {"reason": "fastapi-offline is not installed (pip install 'veridic[service]'); /docs would need a CDN"}})
        return None
    from pathlib import Path

    folder = Path(fastapi_offline.__file__).parent / "static"
    needed = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js")
    return folder if all((folder / f).is_file() for f in needed) else None


def _mount_docs(app, folder, *, title: str) -> None:
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
    from fastapi.staticfiles import StaticFiles

    app.mount("/docs-assets", StaticFiles(directory=str(folder)), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui():
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{title} - Swagger UI", oauth2_redirect_url="/docs/oauth2-redirect",
                                   swagger_js_url="/docs-assets/swagger-ui-bundle.js", swagger_css_url="/docs-assets/swagger-ui.css",
                                   swagger_favicon_url="/docs-assets/favicon.png")

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def swagger_redirect():
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc():
        return get_redoc_html(openapi_url="/openapi.json", title=f"{title} - ReDoc", redoc_js_url="/docs-assets/redoc.standalone.js",
                              redoc_favicon_url="/docs-assets/favicon.png", with_google_fonts=False)


@dataclass(frozen=True)
class _Pair:
    """One pair of a /v1/score request as a unit of the scheduler's work. ``config``: the request's scorer
    configuration (None: the server's own, the only one the express lane runs)."""

    source: str
    claim: str
    context: str | None
    config: Any = None


@dataclass(frozen=True)
class _Detection:
    """One /v1/detect request as a unit of the scheduler's work (run in the model thread, never split)."""

    passage: str
    evidence: str

    def run(self, detector: Any) -> Any:
        return detector.detect(passage=self.passage, evidence=self.evidence)


class _RequestScorers:
    """Per-request scorer options: the server's configuration with a request's ``options`` applied.

    Each distinct configuration is built once around the server's loaded
    backend (building is cheap; the model is shared) and kept; options that
    would read server files or raise the cost past the server's limits are
    refused with 422 naming the option.
    """

    SERVER_ONLY = ("hybrid_weights", "name")
    MAX_KEPT = 64

    def __init__(self, scorer: Any, *, max_mc_samples: int):
        self.default = scorer
        self.base = getattr(scorer, "config", None)
        self.max_mc_samples = max_mc_samples
        self.built: dict[Any, Any] = {}

    def key(self, options: dict[str, Any] | None) -> Any:
        """The validated configuration for ``options`` (None: the server's own); builds its scorer now."""
        if not options:
            return None
        if self.base is None:
            raise ServiceError(422, "validation_error", f"This service's scorer ({type(self.default).__name__}) takes no per-request options; "
                                                       f"got {', '.join(sorted(options))}. Send the request without 'options'.")
        fixed = sorted(set(options) & set(self.SERVER_ONLY))
        if fixed:
            raise ServiceError(422, "validation_error", f"Option(s) {', '.join(map(repr, fixed))} are set by the server (veridic serve flags), not per request.")
        try:
            cfg = self.base.replace(name=None, **options)
        except VeridicError as exc:  # an unknown option or method, a bad value, an unsupported combination
            raise ServiceError(422, "validation_error", f"options: {exc}") from None
        except TypeError as exc:  # a value of the wrong type that the dataclass could not even compare
            raise ServiceError(422, "validation_error", f"options: {exc}") from None
        if cfg.mc_samples > self.max_mc_samples:
            raise ServiceError(422, "validation_error", f"options.mc_samples={cfg.mc_samples} is over this server's limit of {self.max_mc_samples} "
                                                       "(veridic serve --max-mc-samples).")
        if cfg == self.base.replace(name=None):
            return None
        try:
            self.get(cfg)
        except VeridicError as exc:  # e.g. mc_samples on a backend without dropout
            raise ServiceError(422, "validation_error", f"options: {exc}") from None
        return cfg

    def get(self, key: Any) -> Any:
        if key is None:
            return self.default
        if key not in self.built:
            from veridic.factory import build_scorer

            if len(self.built) >= self.MAX_KEPT:
                self.built.pop(next(iter(self.built)))
            self.built[key] = build_scorer(key, backend=getattr(self.default, "backend", None))
        return self.built[key]


def _jsonable(d: Any) -> Any:
    import json

    return json.loads(json.dumps(d, default=str))
