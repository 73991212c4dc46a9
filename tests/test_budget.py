"""One count of a request's work: claim sentences as the scorer splits them, and one claim limit in the library, the CLI and the service."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import veridic
from veridic import ScorerConfig, build_scorer
from veridic.errors import DataFormatError, InputError
from veridic.io._records import record_to_pair
from veridic.limits import check_claim, claim_sentences
from veridic.service._settings import estimate_pair_cost
from veridic.text import split_sentences

NEWLINE_CLAIM = "\n".join(["cat"] * 3_552)  # the audit's claim: one word a line, under 20,000 characters


def test_the_budget_counts_the_sentences_the_scorer_scores():
    from tests.fakes import FakeNLIBackend

    scorer = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend())
    for claim in ("A cat sat. A dog ran.", "cat\ndog\nsat", "A. B. C.", "No stop at all"):
        (v,) = scorer.score(sources=["A cat sat on the mat."], claims=[claim])
        assert claim_sentences(claim) == len(v.sentences) == len(split_sentences(claim))
    # 7 source tokens x 3,552 sentences + 3,552 claim tokens: the newline claim is no longer priced as one sentence
    assert estimate_pair_cost("A cat sat on the mat.", NEWLINE_CLAIM) == 7 * 3_552 + 3_552
    assert estimate_pair_cost("A cat sat on the mat.", NEWLINE_CLAIM, granularity="document") == 7 + 3_552


def test_the_library_refuses_a_claim_over_the_sentence_limit_before_any_model(monkeypatch):
    with pytest.raises(InputError, match=r"3,552 sentences .*the limit is 128 \(\$VERIDIC_MAX_CLAIM_SENTENCES"):
        veridic.score(sources=["A cat sat."], claims=[NEWLINE_CLAIM], method="overlap")
    monkeypatch.setenv("VERIDIC_MAX_CLAIM_SENTENCES", "0")  # 0 turns the limit off
    assert len(veridic.score(sources=["A cat sat."], claims=[NEWLINE_CLAIM], method="overlap")) == 1
    monkeypatch.setenv("VERIDIC_MAX_CLAIM_CHARS", "10")
    with pytest.raises(InputError, match=r"Pair 0: The claim is 11 characters; the limit is 10 \(\$VERIDIC_MAX_CLAIM_CHARS"):
        veridic.score(sources=["A cat sat."], claims=["A cat sat!!"], method="overlap")


def test_the_library_applies_the_source_guard_the_cli_applies(monkeypatch):
    monkeypatch.setenv("VERIDIC_MAX_SOURCE_CHARS", "20")
    with pytest.raises(InputError, match=r"Pair 0: .*21 characters; the limit is 20 \(set VERIDIC_MAX_SOURCE_CHARS"):
        veridic.score(sources=["A cat sat on the mat."], claims=["A cat sat."], method="overlap")


def test_the_cli_refuses_the_same_claims():
    from veridic.cli import app

    r = CliRunner().invoke(app, ["score", "--backend", "dummy", "--method", "e-c", "--source", "A cat sat.", "--claim", NEWLINE_CLAIM, "--json"])
    assert r.exit_code != 0 and "the limit is 128 ($VERIDIC_MAX_CLAIM_SENTENCES" in r.output, r.output
    with pytest.raises(DataFormatError, match=r"rows.jsonl, row 3: The column 'claim' has 3,552 sentences"):
        record_to_pair({"source": "A cat sat.", "claim": NEWLINE_CLAIM}, row_number=3, path="rows.jsonl")


def test_check_claim_counts_with_the_scorers_splitter_and_names_the_setting():
    assert check_claim("One. Two.", max_sentences=2) == 2
    with pytest.raises(InputError, match="--max-claim-sentences"):
        check_claim("a\nb\nc", max_sentences=2, sentences_setting="--max-claim-sentences")


# --- the service ---------------------------------------------------------------------------------------
fastapi = pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from veridic.service import ServiceSettings, create_app  # noqa: E402


class _Recorder:
    """The fake-backend scorer, recording what reaches the model thread."""

    name = "e-c"

    def __init__(self):
        from tests.fakes import FakeNLIBackend

        self.inner = build_scorer(ScorerConfig(method="e-c", structure_check=False), backend=FakeNLIBackend())
        self.splitter, self.granularity = self.inner.splitter, self.inner.granularity
        self.claims: list[str] = []

    def describe(self):
        return self.inner.describe()

    def score(self, *, sources, claims, contexts=None):
        self.claims.extend(claims)
        return self.inner.score(sources=sources, claims=claims, contexts=contexts)


class _Detector:
    def __init__(self):
        self.seen: list[str] = []

    def detect(self, *, passage, evidence):
        self.seen.append(passage)
        raise AssertionError("a refused passage never reaches the detector")


def test_service_refuses_the_newline_claim_and_passage_with_413_before_any_model_work():
    rec, det = _Recorder(), _Detector()
    app = create_app(scorer=rec, detector=det, settings=ServiceSettings())
    with TestClient(app) as c:
        r = c.post("/v1/score", json={"pairs": [{"source": "A cat sat on the mat.", "claim": NEWLINE_CLAIM}]})
        assert r.status_code == 413, r.text
        msg = r.json()["error"]["message"]
        assert "pairs[0].claim has 3,552 sentences" in msg and "the limit is 128 (--max-claim-sentences" in msg
        passage = "\n".join(f"Line {i} of the passage." for i in range(200))
        r = c.post("/v1/detect", json={"passage": passage, "evidence": "A cat sat."})
        assert r.status_code == 413 and "passage has 200 sentences" in r.json()["error"]["message"], r.text
        assert rec.claims == [] and det.seen == []


def test_service_budget_prices_every_line_as_a_sentence():
    rec = _Recorder()
    source = " ".join(["word"] * 1_000)
    app = create_app(scorer=rec, settings=ServiceSettings(max_request_tokens=50_000))
    with TestClient(app) as c:
        claim = "\n".join(["cat sat"] * 60)  # 60 lines x 1,000 source tokens = 60,000 > 50,000
        r = c.post("/v1/score", json={"pairs": [{"source": source, "claim": claim}]})
        assert r.status_code == 413 and "--max-request-tokens" in r.json()["error"]["message"], r.text
        assert c.post("/v1/score", json={"pairs": [{"source": source, "claim": "\n".join(["cat sat"] * 40)}]}).status_code == 200
        assert len(rec.claims) == 1


def test_an_unpaired_surrogate_in_an_id_is_422_not_500():
    with TestClient(create_app(scorer=_Recorder())) as c:
        body = b'{"pairs": [{"source": "A cat sat.", "claim": "A cat sat.", "id": "x\\ud800"}]}'
        r = c.post("/v1/score", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422 and "pairs[0].id holds an unpaired surrogate" in r.json()["error"]["message"], r.text
        assert r.headers.get("x-request-id")


def test_an_unexpected_failure_is_a_json_500_with_a_request_id():
    class Broken(_Recorder):
        def score(self, **kw):
            raise RuntimeError("boom")

    with TestClient(create_app(scorer=Broken(), settings=ServiceSettings(batch_ms=0)), raise_server_exceptions=False) as c:
        r = c.post("/v1/score", json={"pairs": [{"source": "A cat sat.", "claim": "A cat sat."}]})
        assert r.status_code == 500 and r.headers.get("x-request-id"), r.text
        assert json.loads(r.text)["error"]["type"] == "internal_error"
        m = c.get("/metrics").text
        assert 'veridic_requests_total{route="/v1/score",status="500"} 1.0' in m


def test_serve_caps_concurrent_connections(monkeypatch):
    import veridic.serving as server
    from veridic.cli import app

    seen: dict = {}
    monkeypatch.setattr(server, "serve_app", lambda app, **kw: seen.update(kw))
    r = CliRunner().invoke(app, ["serve", "--backend", "dummy", "--method", "e-c", "--no-express-lane"])
    assert r.exit_code == 0, r.output
    assert seen["limit_concurrency"] == 256 and seen["header_timeout_s"] == 10.0
    r = CliRunner().invoke(app, ["serve", "--backend", "dummy", "--method", "e-c", "--no-express-lane", "--max-connections", "0"])
    assert r.exit_code == 2 and "--max-connections must be >= 1" in r.output
