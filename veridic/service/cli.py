"""``veridic serve``: load the models once, then serve them over HTTP with uvicorn.

    veridic serve --port 8000 --batch-ms 5 --max-batch 32
    veridic serve --no-express-lane          # one model copy, one model thread (less memory)
    VERIDIC_API_KEY=secret veridic serve --host 0.0.0.0 --detect

Mounted in the main CLI as the ``serve`` command.
"""

from __future__ import annotations

import sys

import typer

from veridic import cli_options as O
from veridic.errors import MissingDependencyError, VeridicError

__all__ = ["serve"]


@O.with_scorer_flags
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (0.0.0.0 exposes the service to the network: set --api-key)."),
    port: int = typer.Option(8000, help="TCP port."),
    model: O.Model = None,
    backend: O.Backend = "auto",
    device: O.Device = "cpu",
    dtype: O.Dtype = "auto",
    max_mc_samples: int = typer.Option(0, "--max-mc-samples", help="Per-request options: the most Monte-Carlo samples a request may ask for (0 = none)."),
    batch_size: int = typer.Option(32, "--batch-size", help="Model batch size inside one scorer call."),
    batch_ms: float = typer.Option(5.0, "--batch-ms", help="Micro-batching: collect concurrent requests for up to this many ms (0 = off)."),
    max_batch: int = typer.Option(32, "--max-batch", help="Micro-batching: at most this many pairs per model call."),
    max_pairs: int = typer.Option(64, "--max-pairs", help="Pairs allowed in one request (413 past it)."),
    max_text_chars: int = typer.Option(20_000, "--max-text-chars", help="Characters allowed in one source/claim/context (413 past it)."),
    max_body_bytes: int = typer.Option(1 << 20, "--max-body-bytes", help="Request body size limit in bytes (413 past it)."),
    max_queue_pairs: int = typer.Option(2048, "--max-queue-pairs", help="Pairs allowed to wait for the model (503 past it)."),
    timeout: float = typer.Option(30.0, "--timeout", help="Server-side deadline of one request in seconds (408 past it; its unscored pairs are dropped)."),
    max_request_tokens: int = typer.Option(150_000, "--max-request-tokens", help="Compute budget of one request in estimated model tokens (413 past it)."),
    max_claim_sentences: int = typer.Option(128, "--max-claim-sentences",
                                            help="Sentences allowed in one claim or /v1/detect passage, counted by the scorer's splitter (every line break counts; 413 past it)."),
    max_batch_tokens: int = typer.Option(2_048, "--max-batch-tokens", help="Estimated tokens per model call; bounds how long small requests wait behind large ones."),
    header_timeout: float = typer.Option(10.0, "--header-timeout", help="Close connections whose request line and headers take longer than this (slow clients)."),
    body_timeout: float = typer.Option(20.0, "--body-timeout", help="Answer 408 when a request body takes longer than this to arrive."),
    max_connections: int = typer.Option(256, "--max-connections", help="Concurrent connections and requests served; uvicorn answers 503 past it."),
    docs: bool = typer.Option(True, "--docs/--no-docs", help="Serve Swagger UI (/docs) and ReDoc (/redoc) from packaged assets."),
    api_key: str | None = typer.Option(None, "--api-key", envvar="VERIDIC_API_KEY", help="Require this key (X-API-Key or Authorization: Bearer) on /v1/* except /v1/health."),
    detect: bool = typer.Option(False, "--detect/--no-detect", help="Also load the hallucination detector for /v1/detect (needs the 'detect' extra)."),
    phrase_spans: bool = typer.Option(True, "--phrase-spans/--sentence-spans", help="With --detect: mark unsupported phrases (default) or whole sentences, as veridic detect."),
    express_lane: bool = typer.Option(True, "--express-lane/--no-express-lane",
                                      help="A second model copy, in its own thread, scores cheap pairs while the main one is busy with a large pair, "
                                           "so one-pair requests do not wait behind it (docs/service_and_ray.md). "
                                           "Costs a second model copy in memory (about +55 MiB resident with the int8 ONNX default, +60 MiB with torch) and a "
                                           "second core while a large pair runs; --no-express-lane: one copy, one model thread."),
    express_tokens: int = typer.Option(512, "--express-tokens", help="Express lane: the most estimated tokens of a pair (and of a batch) the second copy takes."),
    log_level: str = typer.Option("info", "--log-level", help="debug, info, warning or error."),
    scorer_flags: dict | None = None,
) -> None:
    """Serve /v1/score, /v1/detect, /v1/health, /v1/models and /metrics over HTTP (models load once, at start-up).

    The scorer flags set the server's default configuration; a request may
    change scorer options per request ("options": {...}) within --max-mc-samples.
    """
    try:
        import uvicorn  # noqa: F401 - checked here so a missing extra gets the install hint

        from veridic.registry import get_method
        from veridic.service import ServiceSettings, create_app, load_service_scorer
        from veridic.service._logs import configure_json_logging
    except ImportError as exc:
        sys.stderr.write(f"error: {MissingDependencyError(exc.name or 'fastapi', extra='service', purpose='veridic serve')}\n")
        raise typer.Exit(code=2) from None
    try:
        if max_connections < 1:
            raise VeridicError(f"--max-connections must be >= 1; got {max_connections}.")
        cfg = O.scorer_config(None, **(scorer_flags or {}))
        O.check_model_flags(backend=backend, device=device, dtype=dtype)
        settings = ServiceSettings(batch_ms=batch_ms, max_batch=max_batch, max_pairs=max_pairs, max_text_chars=max_text_chars,
                                   max_body_bytes=max_body_bytes, max_queue_pairs=max_queue_pairs, timeout_s=timeout, api_key=api_key,
                                   max_request_tokens=max_request_tokens, max_batch_tokens=max_batch_tokens, header_timeout_s=header_timeout,
                                   body_timeout_s=body_timeout, docs=docs, max_mc_samples=max_mc_samples,
                                   express_tokens=express_tokens, max_claim_sentences=max_claim_sentences)
        configure_json_logging(log_level)
        load = dict(model=model, backend=backend, batch_size=batch_size, device=device, dtype=dtype, max_mc_samples=max_mc_samples)
        scorer = load_service_scorer(cfg, **load)
        # Its own backend (reuse=False): the two model threads must not share a tokenizer or model object.
        # A model-free method has nothing to wait for, so it gets no second copy.
        express = load_service_scorer(cfg, **load, reuse=False) if express_lane and get_method(cfg.method).needs_backend else None
        detector = None
        if detect:
            from veridic.detect._load import load_detector as build_detector

            detector = build_detector(model=model, backend=backend, batch_size=batch_size, device=device, dtype=dtype,
                                      phrase_spans=phrase_spans)
        app = create_app(scorer=scorer, detector=detector, settings=settings, express_scorer=express)
    except (VeridicError, OSError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        raise typer.Exit(code=2) from None
    from veridic.serving import serve_app

    sys.stderr.write(f"veridic service: http://{host}:{port}/v1/health  (docs: /docs)\n")
    serve_app(app, host=host, port=port, header_timeout_s=settings.header_timeout_s, log_config=None, access_log=False, workers=1,
              limit_concurrency=max_connections)
