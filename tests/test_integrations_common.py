"""The integrations' shared core, and what every adapter's tests reuse: the fixed cases, the no-network guard and
the `veridic score` reference scores."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from veridic.errors import InputError, MissingDependencyError
from veridic.integrations import CONTEXT_SEPARATOR, Judge, join_contexts
from veridic.integrations._core import require

FRANCE = "Paris is the capital of France. It has about two million inhabitants."
HIRING = "The company hired 200 engineers in 2023."
#: question, contexts, answer: supported, contradicted, unverifiable, an answer resting on two contexts.
CASES = [
    ("What is the capital of France?", [FRANCE], "Paris is the capital of France."),
    ("What did the company do in 2023?", [HIRING], "The company laid off engineers in 2023. It never hired anyone."),
    ("Who founded the company?", [HIRING], "The company was founded by a retired astronaut in Lisbon."),
    ("Tell me about Paris and the company.", [FRANCE, "  ", HIRING], "Paris is the capital of France. The company hired 200 engineers in 2023."),
]
#: bad rows: no context, an empty list, a non-string context, a None answer, a source over the 2,000,000-character limit.
BAD = [
    ("q", None, "Paris is the capital of France."),
    ("q", [], "Paris is the capital of France."),
    ("q", [FRANCE, 42], "Paris is the capital of France."),
    ("q", [FRANCE], None),
    ("q", ["Paris is the capital of France. " * 70_000], "Paris is the capital of France."),
]
#: the fast scorer the unit tests use (dummy backend, no parser); the slow tests use the embedded model's default.
FAST = dict(backend="dummy", structure_check=False)


@pytest.fixture
def no_network(monkeypatch):
    """Fail the test when anything opens a network connection (local socket pairs stay allowed)."""

    attempts: list = []

    def refuse(self, address, *args, **kwargs):
        if self.family == getattr(socket, "AF_UNIX", None):
            return real_connect(self, address, *args, **kwargs)
        attempts.append(address)
        raise AssertionError(f"a network connection was attempted to {address!r}")

    def refuse_create(address, *args, **kwargs):
        attempts.append(address)
        raise AssertionError(f"a network connection was attempted to {address!r}")

    real_connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse_create)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield attempts
    # a framework that swallowed the refusal (telemetry in a thread, say) still fails the test
    assert not attempts, f"network connections were attempted: {attempts}"


def cli_scores(rows, tmp_path, *, fast: bool = True) -> list[float]:
    """What `veridic score --input` gives for (answer, contexts) rows: the contexts joined as the source."""
    from veridic.cli import app

    tmp_path.mkdir(parents=True, exist_ok=True)
    inp, out = tmp_path / "rows.jsonl", tmp_path / "scored.jsonl"
    inp.write_text("".join(json.dumps({"source": join_contexts(c), "claim": a}) + "\n" for a, c in rows))
    args = ["score", "--input", str(inp), "--output", str(out), "--quiet"]
    if fast:
        args += ["--backend", "dummy", "--no-structure-check"]
    res = CliRunner().invoke(app, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return [json.loads(line)["score"] for line in out.read_text().splitlines()]


def good_rows():
    return [(a, c) for _, c, a in CASES]


def test_the_guard_refuses_a_connection(no_network):
    with pytest.raises(AssertionError, match="network connection"):
        socket.create_connection(("127.0.0.1", 9))
    s = socket.socket()
    try:
        with pytest.raises(AssertionError, match="network connection"):
            s.connect(("127.0.0.1", 9))
    finally:
        s.close()
    assert len(no_network) == 2
    no_network.clear()  # the two attempts above were this test's own


def test_judge_scores_equal_veridic_score(tmp_path, no_network):
    judge = Judge(**FAST)
    got = judge.judge(answers=[a for a, _ in good_rows()], contexts=[c for _, c in good_rows()])
    ref = cli_scores(good_rows(), tmp_path)
    assert [j.score for j in got] == pytest.approx(ref, abs=1e-6)
    assert [j.label for j in got][:2] == ["supported", "unsupported"]


def test_evidence_offsets_point_into_the_rows_own_contexts():
    (j,) = Judge(**FAST).judge(answers=[CASES[3][2]], contexts=[CASES[3][1]])
    assert len(j.sentences) == 2
    for s in j.sentences:
        ev = s["evidence"]
        ctx = CASES[3][1][ev["context"]]
        assert "context_end" in ev or ctx[ev["start"]:ev["end"]] == ev["text"]
        assert CASES[3][2][s["start"]:s["end"]] == s["text"]
    # the blank middle passage is skipped, and the second sentence's evidence is the hiring passage (index 2)
    assert j.sentences[1]["evidence"]["context"] == 2 or j.sentences[1]["evidence"].get("context_end") == 2


def test_the_reason_names_the_unsupported_sentence_and_its_evidence():
    (j,) = Judge(**FAST).judge(answers=[CASES[1][2]], contexts=[CASES[1][1]])
    assert not j.passing and j.unsupported
    reason = j.reason()
    assert "It never hired anyone." in reason and "context 0 [0:" in reason and "unsupported" in reason


@pytest.mark.parametrize("i,msg", [(0, "no context"), (1, "no context"), (2, "context 1 is a int"), (3, "answer is None"), (4, "limit is 2,000,000")])
def test_bad_rows_get_a_documented_nan_and_leave_the_others_scored(i, msg):
    q, ctx, ans = BAD[i]
    out = Judge(**FAST).judge(answers=[CASES[0][2], ans], contexts=[CASES[0][1], ctx])
    assert out[0].label == "supported"
    assert out[1].label == "invalid" and math.isnan(out[1].score) and not out[1].passing
    assert msg in out[1].error and msg in out[1].reason()


def test_on_invalid_raise_names_the_row():
    with pytest.raises(InputError, match=r"Row 1: the answer is None"):
        Judge(on_invalid="raise", **FAST).judge(answers=["Paris.", None], contexts=[[FRANCE], [FRANCE]])


def test_join_contexts_refuses_non_strings():
    assert join_contexts("one passage") == "one passage"
    assert join_contexts(["a b.", "", "c d."]) == "a b." + CONTEXT_SEPARATOR + "c d."
    with pytest.raises(InputError, match="context 0 is a bytes"):
        join_contexts([b"bytes"])


def test_a_missing_framework_names_the_install_command():
    with pytest.raises(MissingDependencyError, match=r"pip install 'veridic\[ragas\]'"):
        require("veridic_no_such_framework", extra="ragas", purpose="The RAGAS metric", package="ragas")


def test_importing_veridic_imports_no_framework():
    code = ("import sys, veridic, veridic.integrations; veridic.score_frame; "
            "bad = [m for m in ('ragas', 'deepeval', 'llama_index', 'langchain_core', 'haystack', 'pandas', 'polars', 'pyarrow', 'ray') if m in sys.modules]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


@pytest.mark.parametrize("config", ["overlap", "e-c-doc"])
def test_other_scorers_give_one_unit_or_sentences_and_equal_the_library(config):
    judge = Judge(config=config, backend="dummy")
    got = judge.judge(answers=[a for a, _ in good_rows()], contexts=[c for _, c in good_rows()])
    from veridic.factory import load_scorer

    ref = load_scorer(config, backend="dummy").score(sources=[join_contexts(c) for _, c in good_rows()], claims=[a for a, _ in good_rows()])
    assert [j.score for j in got] == pytest.approx([v.score for v in ref])
    assert all(j.sentences and j.reason().startswith(f"veridic {judge.name}") for j in got)


def test_a_batch_of_only_bad_rows_loads_no_model():
    judge = Judge(**FAST)
    assert [j.label for j in judge.judge(answers=[None, "x"], contexts=[["a b c."], []])] == ["invalid", "invalid"]
    assert judge._scorer is None
