"""The HTTP service over a tiny random NLI model: routes, limits, errors, auth, metrics, micro-batching."""

import asyncio
import json
import threading
import time

import pytest

from veridic import ScorerConfig, build_scorer

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
from fastapi.testclient import TestClient

from veridic.service import ServiceSettings, create_app
from veridic.service._schemas import SentenceVerdictModel, VerdictModel

PAIRS = [
    {"source": "The company hired 200 engineers in 2023. It is in Paris.", "claim": "The company laid off engineers."},
    {"source": "A cat sat on the mat.", "claim": "A cat sat. The mat was red."},
    {"source": "Paris is in France.", "claim": "Paris is in Spain."},
    {"source": "The cat sat. The company hired a cat.", "claim": "The company hired engineers in Paris."},
]


@pytest.fixture(scope="module")
def scorer(tiny_backend):
    return build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=tiny_backend)


@pytest.fixture(scope="module")
def client(scorer):
    with TestClient(create_app(scorer=scorer, settings=ServiceSettings(max_pairs=8, max_text_chars=500, max_body_bytes=20_000))) as c:
        yield c


def _err(r, status, kind=None):
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    if kind:
        assert body["error"]["type"] == kind, body
    return body["error"]["message"]


def test_score_matches_the_library_verdict(client, scorer):
    r = client.post("/v1/score", json={"pairs": [dict(PAIRS[0], id="p0")]})
    assert r.status_code == 200, r.text
    body = r.json()
    direct = scorer.score(sources=[PAIRS[0]["source"]], claims=[PAIRS[0]["claim"]])[0].to_dict()
    assert body["verdicts"][0] == direct  # one request alone = the library's call, bit for bit
    assert body["ids"] == ["p0"] and body["method"] == "e-c" and r.headers["x-request-id"]


def test_response_models_mirror_the_result_types(scorer):
    v = scorer.score(sources=[PAIRS[1]["source"]], claims=[PAIRS[1]["claim"]])[0]
    d = v.to_dict()
    assert set(VerdictModel.model_fields) == set(d)
    assert set(SentenceVerdictModel.model_fields) == set(d["sentences"][0])
    assert VerdictModel.model_validate(d).model_dump() == d


def test_health_models_and_openapi(client):
    h = client.get("/v1/health").json()
    assert h["status"] == "ok" and h["settings"]["max_pairs"] == 8 and h["settings"]["api_key"] is False
    m = client.get("/v1/models").json()
    assert m["scorer"]["method"] == "e-c" and m["scorer"]["backend"]["backend"] == "torch" and m["detector"] is None
    spec = client.get("/openapi.json").json()
    assert {"/v1/score", "/v1/detect", "/v1/health", "/v1/models"} <= set(spec["paths"])
    assert "413" in spec["paths"]["/v1/score"]["post"]["responses"]


@pytest.mark.parametrize(
    "body, status, kind, needle",
    [
        ({"pairs": []}, 422, "validation_error", "pairs"),
        ({"pairs": [{"source": "A cat sat.", "claim": "   "}]}, 422, "input_error", "pairs[0].claim is empty"),
        ({"pairs": [{"source": "A cat sat.", "claim": 3}]}, 422, "validation_error", "pairs.0.claim"),
        ({"pairs": [{"source": "A cat sat.", "claim": None}]}, 422, "validation_error", "claim"),
        ({"pairs": [{"source": "A cat sat.", "claim": "x", "typo": 1}]}, 422, "validation_error", "typo"),
        ({"pairs": [{"source": "A cat sat.", "claim": "x", "context": [1]}]}, 422, "validation_error", "context"),
        ({"pairs": [{"source": "A cat sat.", "claim": "x" * 501}]}, 413, "too_large", "501 characters; the limit is 500"),
        ({"pairs": [PAIRS[0]] * 9}, 413, "too_large", "9 pairs; the limit is 8"),
        ({"pairs": "nope"}, 422, "validation_error", "pairs"),
        ([1, 2], 422, "validation_error", None),
    ],
)
def test_bad_input_gets_a_clear_4xx(client, body, status, kind, needle):
    msg = _err(client.post("/v1/score", json=body), status, kind)
    if needle:
        assert needle in msg


def test_raw_bodies_nan_non_utf8_surrogates_and_size(client):
    h = {"content-type": "application/json"}
    _err(client.post("/v1/score", content=b'{"pairs": [{"source": NaN, "claim": "x"}]}', headers=h), 422, "validation_error")
    assert client.post("/v1/score", content=b'{"pairs": [{"source": "\xff\xfe", "claim": "x"}]}', headers=h).status_code in (400, 422)
    msg = _err(client.post("/v1/score", content=b'{"pairs": [{"source": "a\\ud800b", "claim": "x"}]}', headers=h), 422, "input_error")
    assert "surrogate" in msg
    assert "not valid JSON" in _err(client.post("/v1/score", content=b"{not json", headers=h), 400, "bad_request")
    _err(client.post("/v1/score", content=b"[" * 50_000, headers=h), 413, "too_large")
    assert "nested too deeply" in _err(client.post("/v1/score", content=b"[" * 10_000 + b"]" * 10_000, headers=h), 400, "bad_request")
    assert "20000 bytes" in _err(client.post("/v1/score", content=b"x" * 30_000, headers=h), 413, "too_large")
    _err(client.get("/v1/score"), 405)
    _err(client.get("/v2/nothing"), 404, "not_found")


def test_api_key(scorer):
    app = create_app(scorer=scorer, settings=ServiceSettings(api_key="s3cret"))
    with TestClient(app) as c:
        assert c.get("/v1/health").status_code == 200  # probes need no key
        assert "X-API-Key" in _err(c.post("/v1/score", json={"pairs": [PAIRS[2]]}), 401, "unauthorized")
        _err(c.post("/v1/score", json={"pairs": [PAIRS[2]]}, headers={"x-api-key": "wrong"}), 401, "unauthorized")
        _err(c.get("/v1/models"), 401)
        assert c.post("/v1/score", json={"pairs": [PAIRS[2]]}, headers={"x-api-key": "s3cret"}).status_code == 200
        assert c.get("/v1/models", headers={"authorization": "Bearer s3cret"}).status_code == 200


class SlowScorer:
    name = "slow"

    def __init__(self, delay):
        self.delay = delay

    def describe(self):
        return {"model": "slow", "name": "slow"}

    def score(self, *, sources, claims, contexts=None):
        time.sleep(self.delay)
        raise AssertionError("never reached within the timeout")


def test_timeout_is_408_and_the_service_keeps_serving(scorer):
    app = create_app(scorer=SlowScorer(0.5), settings=ServiceSettings(timeout_s=0.1))
    with TestClient(app) as c:
        assert "within 0.1 s" in _err(c.post("/v1/score", json={"pairs": [PAIRS[0]]}), 408, "timeout")
        assert c.get("/v1/health").status_code == 200


def test_full_queue_is_503_with_retry_after(scorer):
    app = create_app(scorer=scorer, settings=ServiceSettings(max_queue_pairs=2, max_pairs=8))
    with TestClient(app) as c:
        r = c.post("/v1/score", json={"pairs": PAIRS[:3]})
        _err(r, 503, "overloaded")
        assert r.headers["retry-after"] == "1"


def test_detect_without_detector_is_503(client):
    assert "--detect" in _err(client.post("/v1/detect", json={"passage": "A cat sat.", "evidence": "A cat sat."}), 503, "unavailable")
    _err(client.post("/v1/detect", json={"passage": "A cat sat."}), 422, "validation_error")


def test_metrics_count_requests_latency_and_batches(client):
    client.post("/v1/score", json={"pairs": [PAIRS[2]]})
    text = client.get("/metrics").text
    assert 'veridic_requests_total{route="/v1/score",status="200"}' in text
    assert "veridic_request_latency_seconds_bucket" in text and "veridic_batch_pairs_count" in text


def test_json_request_log(scorer, caplog):
    from veridic.service._logs import JsonFormatter

    with TestClient(create_app(scorer=scorer)) as c, caplog.at_level("INFO", logger="veridic.service"):
        c.post("/v1/score", json={"pairs": [PAIRS[2]]})
    recs = [r for r in caplog.records if r.getMessage() == "request"]
    line = json.loads(JsonFormatter().format(recs[-1]))
    assert line["path"] == "/v1/score" and line["status"] == 200 and line["pairs"] == 1 and line["latency_ms"] > 0


async def _concurrent(app, bodies):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as ac:
        return await asyncio.gather(*(ac.post("/v1/score", json=b) for b in bodies))


def test_micro_batching_shares_model_calls_and_keeps_verdicts(scorer):
    calls = []

    class Counting:
        name = "e-c"

        def describe(self):
            return scorer.describe()

        def score(self, **kw):
            calls.append(len(kw["sources"]))
            return scorer.score(**kw)

    app = create_app(scorer=Counting(), settings=ServiceSettings(batch_ms=200, max_batch=64))
    bodies = [{"pairs": [p]} for p in PAIRS] * 3
    rs = asyncio.run(_concurrent(app, bodies))
    assert all(r.status_code == 200 for r in rs)
    assert sum(calls) == len(bodies) and len(calls) < len(bodies)  # several requests per model call
    alone = [scorer.score(sources=[b["pairs"][0]["source"]], claims=[b["pairs"][0]["claim"]])[0] for b in bodies]
    for r, a in zip(rs, alone):
        v = r.json()["verdicts"][0]
        assert v["label"] == a.label or abs(a.score) < 1e-6
        assert abs(v["score"] - a.score) <= 1e-6  # float32 accumulation order; see docs/service_and_ray.md
        assert [s["evidence"]["start"] for s in v["sentences"]] == [s.evidence.start for s in a.sentences]


def test_one_bad_request_in_a_batch_fails_alone(scorer):
    class Picky:
        name = "picky"

        def describe(self):
            return {"model": "m", "name": "picky"}

        def score(self, *, sources, claims, contexts=None):
            from veridic.errors import InputError

            if any("poison" in c for c in claims):
                raise InputError("Example 0: the claim is poisoned.")
            return scorer.score(sources=sources, claims=claims, contexts=contexts)

    app = create_app(scorer=Picky(), settings=ServiceSettings(batch_ms=200))
    bodies = [{"pairs": [PAIRS[0]]}, {"pairs": [{"source": "A cat sat.", "claim": "poison"}]}, {"pairs": [PAIRS[2]]}]
    rs = asyncio.run(_concurrent(app, bodies))
    assert [r.status_code for r in rs] == [200, 422, 200]
    assert "poisoned" in rs[1].json()["error"]["message"]


def test_threads_hitting_the_sync_client(client):
    out = []

    def hit(i):
        out.append(client.post("/v1/score", json={"pairs": [PAIRS[i % 4]]}).status_code)

    ts = [threading.Thread(target=hit, args=(i,)) for i in range(8)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert out == [200] * 8


def test_per_request_options_change_the_scorer_and_unknown_ones_are_422(client, scorer, tiny_backend):
    from veridic import build_scorer
    from veridic.config import ScorerConfig

    pair = PAIRS[3]
    r = client.post("/v1/score", json={"pairs": [pair], "options": {"granularity": "document"}})
    assert r.status_code == 200, r.text
    direct = build_scorer(ScorerConfig(method="e-c", granularity="document"), backend=tiny_backend)
    assert r.json()["verdicts"][0] == direct.score(sources=[pair["source"]], claims=[pair["claim"]])[0].to_dict()
    assert r.json()["method"] == "e-c-doc"
    # The server's own configuration is untouched by another request's options.
    r = client.post("/v1/score", json={"pairs": [pair]})
    assert r.json()["method"] == "e-c" and len(r.json()["verdicts"][0]["sentences"]) == 1
    msg = _err(client.post("/v1/score", json={"pairs": [pair], "options": {"max_window": 3}}), 422, "validation_error")
    assert "'max_window'" in msg and "max_windows" in msg
    msg = _err(client.post("/v1/score", json={"pairs": [pair], "options": {"mc_samples": 15}}), 422)
    assert "over this server's limit of 0" in msg
    msg = _err(client.post("/v1/score", json={"pairs": [pair], "options": {"method": "hybrid", "granularity": "document"}}), 422)
    assert "method='hybrid' needs granularity='sentence'" in msg
    msg = _err(client.post("/v1/score", json={"pairs": [pair], "options": {"hybrid_weights": "/etc/passwd"}}), 422)
    assert "set by the server" in msg


def test_service_scorer_is_built_from_the_config(tmp_path):
    from veridic.service import load_service_scorer

    s = load_service_scorer("e-c", backend="dummy", max_windows=2, context_mode="premise")
    assert s.config.max_windows == 2 and s.config.context_mode == "premise" and s.name == "e-c"
